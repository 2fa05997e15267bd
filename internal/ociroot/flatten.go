package ociroot

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Flattened is an image laid out as a root filesystem.
type Flattened struct {
	// Digest is the platform image's manifest digest.
	Digest string
	// Config is how the image says to run it.
	Config Config
	// Bytes and Files are what the root filesystem holds; Skipped the
	// entries left out (device nodes, FIFOs: the sandbox has its own
	// /dev).
	Bytes          int64
	Files, Skipped int
}

// ErrTooBig is an image over Options.MaxBytes or MaxFiles.
var ErrTooBig = errors.New("image over the size bound")

// ErrEscape is a layer entry that would reach outside the root: a name
// with "..", or a path through a link that leaves the root.
var ErrEscape = errors.New("layer entry escapes the root filesystem")

// Flatten pulls the image for the platform and writes its root filesystem
// to dir, which must not exist. Each of mountPoints (slash paths relative
// to the root) is made a real folder, so that a sandbox can mount on it
// in a read-only root whatever the image put there. On error dir may
// hold part of the image; the caller removes it.
func (im *Image) Flatten(ctx context.Context, dir string, mountPoints []string) (*Flattened, error) {
	img, digest, err := im.fetch(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := imageConfig(img)
	if err != nil {
		return nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	// Each layer's declared size bounds what is read of its blob; a
	// layer that declares none (-1 reads without a bound, and a stream
	// of empty gzip members yields no byte the other bounds count) or a
	// sum that would overflow is refused.
	var compressed int64
	for i, l := range m.Layers {
		if l.Size < 0 {
			return nil, fmt.Errorf("layer %d declares a size of %d bytes", i+1, l.Size)
		}
		if l.Size > im.o.MaxBytes-compressed {
			return nil, fmt.Errorf("%w: the compressed layers declare more than %d bytes", ErrTooBig, im.o.MaxBytes)
		}
		compressed += l.Size
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b := &bounds{read: im.o.MaxBytes, written: im.o.MaxBytes, files: im.o.MaxFiles}
	out := &Flattened{Digest: digest, Config: cfg}
	for i, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		skipped, err := applyLayer(ctx, root, &boundedReader{r: rc, b: b}, b)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		out.Skipped += skipped
	}
	for _, p := range mountPoints {
		if err := ensureDir(root, p); err != nil {
			return nil, fmt.Errorf("mount point /%s: %w", p, err)
		}
	}
	// The working folder is made where the image lacks it, as container
	// runtimes do; what is there (a link, even one that resolves only
	// inside the sandbox) stays.
	if wd := strings.Trim(path.Clean("/"+cfg.WorkingDir), "/"); wd != "" {
		if _, err := root.Lstat(wd); errors.Is(err, fs.ErrNotExist) {
			if err := root.MkdirAll(wd, 0o755); err != nil {
				return nil, fmt.Errorf("working folder /%s: %w", wd, err)
			}
		}
	}
	out.Bytes = im.o.MaxBytes - b.written
	out.Files = im.o.MaxFiles - b.files
	return out, nil
}

// bounds is what is left of the image's allowance. The bytes read and
// the bytes written are counted apart, each against the whole bound: a
// sparse entry writes far more than the stream holds (its holes come out
// of the tar reader as zeros), and a stream of whiteouts and headers reads
// far more than it writes.
type bounds struct {
	read, written int64
	files         int
}

// boundedReader counts every byte of the uncompressed stream against the
// allowance, tar headers and padding included: a layer bomb stops at the
// bound, whatever its entries claim.
type boundedReader struct {
	r io.Reader
	b *bounds
}

func (br *boundedReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	br.b.read -= int64(n)
	if br.b.read < 0 {
		return n, fmt.Errorf("%w: the layers' streams hold more bytes than allowed", ErrTooBig)
	}
	return n, err
}

// boundedWriter counts every byte written to disk against the allowance
// and writes none past it: the bound holds on what lands on disk, not on
// what an entry declares or the stream holds.
type boundedWriter struct {
	w io.Writer
	b *bounds
}

func (bw *boundedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > bw.b.written {
		return 0, fmt.Errorf("%w: the files written take more bytes than allowed", ErrTooBig)
	}
	n, err := bw.w.Write(p)
	bw.b.written -= int64(n)
	return n, err
}

// applyLayer writes one layer's tar stream over root, whiteouts first
// applied as they come, and reads the stream to its end so that the
// blob's digest is checked. It returns the entries it left out.
func applyLayer(ctx context.Context, root *os.Root, r io.Reader, b *bounds) (int, error) {
	tr := tar.NewReader(r)
	seen := map[string]bool{} // entries of this layer: an opaque folder keeps them
	skipped := 0
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return 0, err
		}
		if name == "" {
			continue // the root itself
		}
		b.files--
		if b.files < 0 {
			return 0, fmt.Errorf("%w: more entries than allowed", ErrTooBig)
		}
		dir, base := path.Split(name)
		dir = strings.TrimSuffix(dir, "/")
		if dir == "" {
			dir = "."
		}
		switch {
		case base == ".wh..wh..opq":
			if err := opaque(root, dir, seen); err != nil {
				return 0, escapeErr(name, err)
			}
			continue
		case strings.HasPrefix(base, ".wh."):
			if err := root.RemoveAll(path.Join(dir, base[len(".wh."):])); err != nil {
				return 0, escapeErr(name, err)
			}
			continue
		}
		seen[name] = true
		if dir != "." {
			if err := mkdirAll(root, dir); err != nil {
				return 0, escapeErr(name, err)
			}
		}
		if err := applyEntry(root, tr, hdr, name, b); err != nil {
			if errors.Is(err, errSkip) {
				skipped++
				continue
			}
			return 0, escapeErr(name, err)
		}
	}
	// The end of the archive is not the end of the blob: read on, so
	// that the digest of the whole is checked.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, err
	}
	return skipped, nil
}

var errSkip = errors.New("entry left out")

// applyEntry writes one entry whose folder exists.
func applyEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, name string, b *bounds) error {
	old, err := root.Lstat(name)
	exists := err == nil
	if exists && !(old.IsDir() && hdr.Typeflag == tar.TypeDir) {
		// A later layer replaces an entry; nothing is written through
		// what was there (a link, a file other names share).
		if err := root.RemoveAll(name); err != nil {
			return err
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if exists && old.IsDir() {
			return root.Chmod(name, 0o755)
		}
		return root.Mkdir(name, 0o755)
	case tar.TypeReg, tar.TypeGNUSparse:
		// The reader gives old archives' TypeRegA as TypeReg, and a
		// sparse entry (GNU's old type, or PAX GNU.sparse records) as
		// its logical size, holes read as zeros: written out, they are
		// counted as any other byte. An entry that declares more than is
		// left is refused before a byte of it is written.
		if hdr.Size > b.written {
			return fmt.Errorf("%w: %d bytes declared, %d left of the bound", ErrTooBig, hdr.Size, b.written)
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.CopyN(&boundedWriter{f, b}, tr, hdr.Size)
		if err == nil {
			err = f.Chmod(fileMode(hdr.Mode))
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	case tar.TypeSymlink:
		// The target is resolved in the sandbox, where this root is
		// "/"; here no link is ever followed out of the root.
		return root.Symlink(hdr.Linkname, name)
	case tar.TypeLink:
		target, err := entryName(hdr.Linkname)
		if err != nil || target == "" {
			return fmt.Errorf("hard link to %q: %w", hdr.Linkname, ErrEscape)
		}
		return root.Link(target, name)
	default:
		// Devices, FIFOs, and what else a tar may hold: never made.
		return errSkip
	}
}

// fileMode is a file's mode on disk: readable by the sandbox's user,
// executable where the image says, never setuid, setgid or writable by
// others.
func fileMode(m int64) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// entryName is a tar entry's name relative to the root; a name with a
// ".." component is refused, not cleaned into somewhere else.
func entryName(n string) (string, error) {
	n = strings.TrimLeft(n, "/")
	for _, c := range strings.Split(n, "/") {
		if c == ".." {
			return "", fmt.Errorf("%q: %w", n, ErrEscape)
		}
	}
	n = path.Clean(n)
	if n == "." {
		return "", nil
	}
	return n, nil
}

// escapeErr names the entry; os.Root's refusal to leave the root is
// ErrEscape.
func escapeErr(name string, err error) error {
	if errors.Is(err, ErrEscape) {
		return err
	}
	if strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes") {
		return fmt.Errorf("%q: %w (%v)", name, ErrEscape, err)
	}
	return fmt.Errorf("%q: %w", name, err)
}

// mkdirAll makes dir's missing folders inside root; a link on the way is
// followed only where it stays in the root.
func mkdirAll(root *os.Root, dir string) error {
	if st, err := root.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	return root.MkdirAll(dir, 0o755)
}

// opaque removes what earlier layers put in dir: an opaque folder shows
// only this layer's entries.
func opaque(root *os.Root, dir string, seen map[string]bool) error {
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		p := path.Join(dir, n)
		if !seen[p] {
			if err := root.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// ensureDir makes p a real folder, each of its components too: what the
// image put in their place (a link, a file) is removed.
func ensureDir(root *os.Root, p string) error {
	cur := ""
	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		cur = path.Join(cur, c)
		st, err := root.Lstat(cur)
		if err == nil && st.IsDir() {
			continue
		}
		if err == nil {
			if err := root.Remove(cur); err != nil {
				return err
			}
		}
		if err := root.Mkdir(cur, 0o755); err != nil {
			return err
		}
	}
	return nil
}
