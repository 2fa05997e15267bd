package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// outputs are files written under temporary names in the output folder and
// renamed to their final names only when the whole run has succeeded, so a
// failed or interrupted run never leaves a complete-looking output behind.
type outputs struct {
	dir   string
	files []*output
}

type output struct {
	final string
	f     *os.File
}

func newOutputs(dir string) (*outputs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	return &outputs{dir: dir}, nil
}

// create opens a temporary file that will become name.
func (o *outputs) create(name string) (*os.File, error) {
	f, err := os.CreateTemp(o.dir, "."+name+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("output folder %s is not writable: %w", o.dir, err)
	}
	o.files = append(o.files, &output{final: filepath.Join(o.dir, name), f: f})
	return f, nil
}

// commit syncs, closes and renames every file into place.
func (o *outputs) commit() error {
	for _, out := range o.files {
		// CreateTemp makes files private; outputs are for sharing.
		if err := out.f.Chmod(0o644); err != nil {
			return fmt.Errorf("%s: %w", out.final, err)
		}
		if err := out.f.Sync(); err != nil {
			return fmt.Errorf("%s: %w", out.final, err)
		}
		if err := out.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("%s: %w", out.final, err)
		}
	}
	for _, out := range o.files {
		if err := os.Rename(out.f.Name(), out.final); err != nil {
			return fmt.Errorf("%s: %w", out.final, err)
		}
	}
	o.files = nil
	return nil
}

// abort removes every temporary file; it is a no-op after commit.
func (o *outputs) abort() {
	for _, out := range o.files {
		out.f.Close()
		os.Remove(out.f.Name())
	}
	o.files = nil
}
