package publish

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ctxio"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/source"
)

// writeZip writes the census files of data into the zip name of set, in
// CensusFiles order, each member stamped with the census date at 00:00
// UTC and mode 0644, so that the bytes depend on the files' contents
// alone: not on their mtimes, owners or the time zone. The gzipped members
// are stored as they are (compressing them again gains nothing); the
// candidates are deflated. It returns each census file's SHA-256 (of its
// own bytes, as SHA256SUMS lists them), their total size, and the zip's
// SHA-256 and size.
func writeZip(ctx context.Context, set *outset.Set, name, data, date string) (map[string]string, int64, string, int64, error) {
	stamp, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil, 0, "", 0, err
	}
	src, err := source.Open(data)
	if err != nil {
		return nil, 0, "", 0, err
	}
	defer src.Close()
	f, err := set.Create(name)
	if err != nil {
		return nil, 0, "", 0, err
	}
	zsum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, zsum), 1<<20)
	zw := zip.NewWriter(bw)
	sums := map[string]string{}
	var total int64
	for _, n := range CensusFiles() {
		in, err := src.Open(n)
		if err != nil {
			return nil, 0, "", 0, err
		}
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, Modified: stamp.UTC()}
		if strings.HasSuffix(n, ".gz") {
			h.Method = zip.Store
		}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			in.Close()
			return nil, 0, "", 0, err
		}
		hr := hashverify.NewReader(ctxio.Reader(ctx, in))
		_, err = io.Copy(w, hr)
		in.Close()
		if err != nil {
			return nil, 0, "", 0, fmt.Errorf("%s: %w", in.Location, err)
		}
		sums[n] = hr.Sum()
		total += hr.N()
	}
	if err := zw.Close(); err != nil {
		return nil, 0, "", 0, err
	}
	if err := bw.Flush(); err != nil {
		return nil, 0, "", 0, err
	}
	// The zip is a new file, so its size is what was written.
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, "", 0, err
	}
	return sums, total, hex.EncodeToString(zsum.Sum(nil)), fi.Size(), nil
}
