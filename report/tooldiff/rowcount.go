package tooldiff

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// checkedRows is the row count of a tools.parquet, checked before anything
// is sized by it: the footer's num_rows is the file's own claim, and a
// crafted one (negative, or billions in a file of kilobytes) must fail
// naming the file, not panic in makeslice or exhaust memory. The count
// must be the sum of the row groups' counts, none negative. sizeHint is
// what a caller may allocate for up front: the count, but never more rows
// than the file has bytes, since the row groups' counts are claims too;
// past it, the caller's slice grows as the rows actually come.
func checkedRows(path string, f *os.File, pf *file.Reader) (rows, sizeHint int64, err error) {
	rows = pf.NumRows()
	if rows < 0 {
		return 0, 0, fmt.Errorf("%s: the footer claims %d rows", path, rows)
	}
	var sum int64
	md := pf.MetaData()
	for i := range md.NumRowGroups() {
		n := md.RowGroup(i).NumRows()
		if n < 0 || sum+n < sum {
			return 0, 0, fmt.Errorf("%s: row group %d claims %d rows", path, i, n)
		}
		sum += n
	}
	if sum != rows {
		return 0, 0, fmt.Errorf("%s: the footer claims %d rows, its %d row groups %d together", path, rows, md.NumRowGroups(), sum)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return rows, min(rows, fi.Size()), nil
}
