package sandbox

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
)

// HostDir is where, in a sandbox with its own root filesystem (Spec.RootFS,
// an image without the host's /usr), the host's /usr is shown read-only:
// prlimit and env, the helpers that run inside before the program, live
// there, and run through the host's dynamic loader named by path, since
// the image may have no loader or a different C library. An image root
// must have this folder (and /proc, /dev, /tmp and Home) as mount points:
// bwrap cannot make them in a read-only root.
const HostDir = "/.atlas-host"

// MountPoints are the folders an image root needs for the sandbox to
// mount on, relative to the root.
var MountPoints = []string{"proc", "dev", "tmp", strings.TrimPrefix(Home, "/"), strings.TrimPrefix(HostDir, "/") + "/usr"}

// hostHelpers are the commands that run a host helper at path (a real
// path under /usr) inside an image root: the host's loader, seen under
// HostDir, with the host's library folders, then the helper.
func hostHelper(path string) ([]string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(real, "/usr/") {
		return nil, fmt.Errorf("sandbox: %s is not under /usr, so an image root cannot run it", real)
	}
	f, err := elf.Open(real)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", real, err)
	}
	defer f.Close()
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp == "" {
		// A static helper needs no loader.
		return []string{HostDir + real}, nil
	}
	ld, err := filepath.EvalSymlinks(interp)
	if err != nil || !strings.HasPrefix(ld, "/usr/") {
		return nil, fmt.Errorf("sandbox: the loader %s of %s is not under /usr (%v)", interp, real, err)
	}
	// The loader's folder holds the C library on multiarch and lib64
	// systems alike; the others are where the rest may be.
	var libs []string
	for _, d := range []string{filepath.Dir(ld), "/usr/lib64", "/usr/lib"} {
		libs = append(libs, HostDir+d)
	}
	return []string{HostDir + ld, "--library-path", strings.Join(libs, ":"), HostDir + real}, nil
}
