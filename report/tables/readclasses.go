package tables

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ClassRow is one row of a classes.parquet: a class or a bucket, its
// tools and, for a class, the tools that require it.
type ClassRow struct {
	Label                  string
	Normative, HasRequired bool
	Tools, Required        int64
}

// ReadClasses reads the rows of a classes.parquet (a dozen rows), for
// holding a published table to its report.json.
func ReadClasses(path string) ([]ClassRow, error) {
	f, pf, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer closeParquet(f, pf)
	if n := pf.NumRows(); n > 1000 {
		return nil, fmt.Errorf("%s: %d rows: not a classes.parquet", path, n)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := []string{"label", "normative", "tools", "required"}
	idx := make([]int, len(names))
	sc := pf.MetaData().Schema
	for i, n := range names {
		if idx[i] = sc.ColumnIndexByName(n); idx[i] < 0 {
			return nil, fmt.Errorf("%s: no %s column: not a classes.parquet", path, n)
		}
	}
	rr, err := fr.GetRecordReader(context.Background(), idx, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	var out []ClassRow
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		label, ok1 := rec.Column(0).(*array.String)
		norm, ok2 := rec.Column(1).(*array.Boolean)
		tools, ok3 := rec.Column(2).(*array.Int64)
		req, ok4 := rec.Column(3).(*array.Int64)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, fmt.Errorf("%s: columns of unexpected types: not a classes.parquet", path)
		}
		for i := range int(rec.NumRows()) {
			out = append(out, ClassRow{Label: label.Value(i), Normative: norm.Value(i), Tools: tools.Value(i), HasRequired: !req.IsNull(i), Required: req.Value(i)})
		}
	}
	return out, nil
}
