package crawl

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestNoParquet keeps arrow-go out of crawl: it writes census releases that
// the run reads and needs no Parquet to write them.
func TestNoParquet(t *testing.T) {
	testenv.NoDeps(t, ".", []string{"github.com/apache/arrow-go"}, "github.com/atlas-reproduce/atlas-reproduce/report/tables")
}
