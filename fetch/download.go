package fetch

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ctxio"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
)

// file brings path.part to the verified content of f, resuming it, and adds it
// to set to become path; a path that already verifies is left as it is.
func (c *client) file(ctx context.Context, set *outset.Set, f File, path string) (r Result, err error) {
	start := time.Now()
	r = Result{File: f, Path: path}
	defer func() { r.Elapsed = time.Since(start) }()

	done, err := c.complete(ctx, f, path)
	if err != nil || done {
		r.Skipped = done
		return r, err
	}

	p, err := openPart(ctx, path+".part", f)
	if err != nil {
		return r, err
	}
	defer p.close()
	r.Resumed = p.have
	c.progress.Tell(progress.Report{Task: f.Key, Done: p.have, Total: f.Size})
	err = c.retry(ctx, strconv.Quote(f.Key), func() (bool, error) {
		before := p.high
		err := c.transfer(ctx, f, p, &r.Transferred)
		return p.high > before, err
	})
	if err != nil {
		if p.have == 0 {
			// Nothing to resume from: an empty .part would only say that a
			// download was once tried.
			p.discard()
		}
		return r, err
	}
	if err := p.verify(f); err != nil {
		return r, err
	}
	return r, set.Adopt(filepath.Base(p.path), filepath.Base(path))
}

// complete reports whether path already holds f, verified by size and MD5.
func (c *client) complete(ctx context.Context, f File, path string) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() {
		return false, fmt.Errorf("%q exists and is not a regular file", path)
	}
	if st.Size() != f.Size {
		c.logf("%q: existing file has %d bytes, the record lists %d; downloading it again", path, st.Size(), f.Size)
		return false, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	h := md5.New()
	if _, err := io.Copy(h, ctxio.Reader(ctx, fh)); err != nil {
		return false, err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.MD5 {
		c.logf("%q: existing file has MD5 %s, the record lists %s; downloading it again", path, sum, f.MD5)
		return false, nil
	}
	return true, nil
}

// part is a NAME.part file being filled, with the MD5 of what it holds so
// far: hashing rides on the write, so verification needs no second read.
type part struct {
	f    *os.File
	path string
	// have is the number of bytes in the file and hashed into md5.
	have int64
	// high is the largest have ever reached; growth past it is progress.
	high int64
	md5  hash.Hash
}

// openPart opens or creates path and hashes the bytes an earlier attempt left
// in it, so that the transfer can continue from its end.
func openPart(ctx context.Context, path string, f File) (*part, error) {
	// 0666 less the umask: the rule of every output folder (see outset).
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	p := &part{f: fh, path: path, md5: md5.New()}
	st, err := fh.Stat()
	if err != nil {
		p.close()
		return nil, err
	}
	if st.Size() > f.Size {
		// Longer than the file can be: not a prefix of it.
		err = p.reset()
	} else {
		var n int64
		n, err = io.Copy(p.md5, ctxio.Reader(ctx, io.LimitReader(fh, st.Size())))
		p.have, p.high = n, n
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// reset empties the part file, for a server that ignores a range request.
func (p *part) reset() error {
	if err := p.f.Truncate(0); err != nil {
		return err
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	p.have = 0
	p.md5.Reset()
	return nil
}

func (p *part) write(b []byte) error {
	if _, err := p.f.Write(b); err != nil {
		return err
	}
	p.md5.Write(b)
	p.have += int64(len(b))
	p.high = max(p.high, p.have)
	return nil
}

func (p *part) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// discard removes a part file whose bytes are known to be wrong: resuming on
// top of them could never verify.
func (p *part) discard() {
	p.close()
	os.Remove(p.path)
}

// verify checks the whole file against f and closes it, for the set to sync
// and rename. On a mismatch the part file is removed.
func (p *part) verify(f File) error {
	if sum := hex.EncodeToString(p.md5.Sum(nil)); p.have != f.Size || sum != f.MD5 {
		p.discard()
		return fmt.Errorf("%w: got %d bytes with MD5 %s, the record lists %d bytes with MD5 %s; removed %q", ErrChecksum, p.have, sum, f.Size, f.MD5, p.path)
	}
	err := p.f.Close()
	p.f = nil
	return err
}

// transfer is one attempt at moving the rest of f into p.
func (c *client) transfer(ctx context.Context, f File, p *part, transferred *int64) error {
	if p.have == f.Size {
		return nil
	}
	actx, kick, stop := c.watchdog(ctx)
	defer stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, f.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", c.userAgent)
	// Offsets must count the stored bytes, not a compressed encoding of them.
	req.Header.Set("Accept-Encoding", "identity")
	if p.have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", p.have))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.netError(ctx, actx, err)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusOK:
		if p.have > 0 {
			c.logf("%q: the server ignored the range request; restarting from byte 0", f.Key)
			if err := p.reset(); err != nil {
				return err
			}
			c.update(f, p.have)
		}
	case http.StatusPartialContent:
		from, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil || from != p.have {
			// Bytes from elsewhere in the file cannot be appended; start over
			// with a plain request.
			if err := p.reset(); err != nil {
				return err
			}
			c.update(f, p.have)
			return &retryable{Err: fmt.Errorf("asked for bytes from %d, the server answered Content-Range %q", from, resp.Header.Get("Content-Range"))}
		}
		if total >= 0 && total != f.Size {
			return fmt.Errorf("%w: the server's file has %d bytes, the record lists %d", ErrChecksum, total, f.Size)
		}
	case http.StatusRequestedRangeNotSatisfiable:
		if p.have > 0 {
			if err := p.reset(); err != nil {
				return err
			}
			c.update(f, p.have)
			return &retryable{Err: errors.New("the server refused to resume (416); restarting from byte 0")}
		}
		return statusError(req, resp)
	default:
		return statusError(req, resp)
	}
	if want := f.Size - p.have; resp.ContentLength >= 0 && resp.ContentLength != want {
		return fmt.Errorf("%w: the server sends %d bytes from byte %d, the record lists %d in all", ErrChecksum, resp.ContentLength, p.have, f.Size)
	}

	for {
		n, rerr := resp.Body.Read(c.buf)
		if n > 0 {
			kick()
			if p.have+int64(n) > f.Size {
				p.discard()
				return fmt.Errorf("%w: the server sent more than the %d bytes the record lists; removed %q", ErrChecksum, f.Size, p.path)
			}
			if err := p.write(c.buf[:n]); err != nil {
				return err
			}
			*transferred += int64(n)
			c.update(f, p.have)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return c.netError(ctx, actx, fmt.Errorf("connection lost at byte %d of %d: %w", p.have, f.Size, rerr))
		}
	}
	if p.have < f.Size {
		return &retryable{Err: fmt.Errorf("connection closed after byte %d of %d", p.have, f.Size)}
	}
	return nil
}

func (c *client) update(f File, have int64) {
	c.progress.Tell(progress.Report{Task: f.Key, Done: have, Total: f.Size})
}

// parseContentRange reads "bytes FROM-TO/TOTAL"; total is -1 for "*".
func parseContentRange(v string) (from, total int64, err error) {
	bad := fmt.Errorf("malformed Content-Range %q", v)
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, 0, bad
	}
	span, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, bad
	}
	a, _, ok := strings.Cut(span, "-")
	if !ok {
		return 0, 0, bad
	}
	if from, err = strconv.ParseInt(strings.TrimSpace(a), 10, 64); err != nil {
		return 0, 0, bad
	}
	if tot == "*" {
		return from, -1, nil
	}
	if total, err = strconv.ParseInt(strings.TrimSpace(tot), 10, 64); err != nil {
		return 0, 0, bad
	}
	return from, total, nil
}
