package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/source"
)

// maxInspectErrors is how many bad lines inspect quotes per file.
const maxInspectErrors = 5

// Inspect prints, for the first records of each census file found under
// data, the record shapes and the key paths with their frequencies, so that
// a user with a new archive sees whether the mapping fits before a run. It
// reads only the first records; files that are missing are reported, not
// fatal.
func Inspect(ctx context.Context, data string, records, top int, w io.Writer) error {
	src, err := source.Open(data)
	if err != nil {
		return err
	}
	defer src.Close()
	found := 0
	for _, name := range hashverify.SnapshotFiles() {
		f, err := src.Open(name)
		var nf *source.NotFoundError
		if errors.As(err, &nf) {
			fmt.Fprintf(w, "== %s: not found (looked in %v)\n\n", name, nf.Looked)
			continue
		}
		if err != nil {
			return err
		}
		found++
		err = inspectFile(ctx, f, records, top, w)
		f.Close()
		if err != nil {
			return err
		}
	}
	if found == 0 {
		return fmt.Errorf("%s: none of the census files %v is there", data, hashverify.SnapshotFiles())
	}
	return nil
}

func inspectFile(ctx context.Context, f *source.File, records, top int, w io.Writer) error {
	st, err := openStream(f, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== %s (%s, %d bytes)\n", f.Name, source.Quote(f.Location), f.Size)
	lr := census.NewLineReader(st)
	var in census.Inspector
	var seen int64
	var errs []string
	for seen < int64(records) {
		if err := ctx.Err(); err != nil {
			return err
		}
		text, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %v (at line %d)", source.Quote(f.Location), err, lr.Line()+1)
		}
		if !census.IsBlank(text) {
			seen++
		}
		if err := in.Add(text); err != nil && len(errs) < maxInspectErrors {
			errs = append(errs, fmt.Sprintf("line %d: %v", lr.Line(), err))
		}
	}
	fmt.Fprintf(w, "first %d records:\n", seen)
	if err := in.Write(w, top); err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintf(w, "  bad %s\n", e)
	}
	fmt.Fprintln(w)
	return nil
}
