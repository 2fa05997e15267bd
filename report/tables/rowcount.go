package tables

import (
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// checkedRows is the row count of a tools.parquet, checked before anything
// is sized by it: the footer's num_rows is the file's own claim, and a
// crafted one (negative, or billions in a file of kilobytes) must fail
// naming the file, not panic in makeslice or exhaust memory. The count
// must be the sum of the row groups' counts, none negative, and each row
// group's count backed by each of its column chunks' value counts. sizeHint is
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
		rg := md.RowGroup(i)
		n := rg.NumRows()
		if n < 0 || sum+n < sum {
			return 0, 0, fmt.Errorf("%s: row group %d claims %d rows", path, i, n)
		}
		// Every row has a value (or a null) in each column: a row
		// group's count must be backed by each column chunk's.
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: row group %d: %w", path, i, err)
			}
			if cc.NumValues() < n {
				return 0, 0, fmt.Errorf("%s: row group %d claims %d rows, but its column %s holds %d values", path, i, n, cc.PathInSchema(), cc.NumValues())
			}
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
