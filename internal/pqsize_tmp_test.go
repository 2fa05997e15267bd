package internal_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

func TestSizes(t *testing.T) {
	f, err := file.OpenParquetFile(os.Getenv("PQ"), false)
	if err != nil {
		t.Fatal(err)
	}
	md := f.MetaData()
	sums := map[string]int64{}
	dict := map[string]int{}
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		for c := 0; c < md.Schema.NumColumns(); c++ {
			cc, _ := md.RowGroup(rg).ColumnChunk(c)
			sums[md.Schema.Column(c).Name()] += cc.TotalCompressedSize()
			if cc.HasDictionaryPage() {
				dict[md.Schema.Column(c).Name()]++
			}
		}
	}
	for c := 0; c < md.Schema.NumColumns(); c++ {
		n := md.Schema.Column(c).Name()
		fmt.Printf("%-28s %10d dictRG=%d/%d\n", n, sums[n], dict[n], md.NumRowGroups())
	}
}
