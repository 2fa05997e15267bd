package crawl

import (
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestNoParquet keeps arrow-go out of crawl: it writes census releases that
// the run reads and needs no Parquet to write them. The second case
// proves the check sees arrow-go where it is.
func TestNoParquet(t *testing.T) {
	heavy := []string{"github.com/apache/arrow-go"}
	t.Run("crawl", func(t *testing.T) {
		if found := testenv.DepsIn(t, ".", heavy); len(found) > 0 {
			t.Errorf("crawl depends on %s", strings.Join(found, ", "))
		}
	})
	t.Run("the check sees report/tables", func(t *testing.T) {
		if found := testenv.DepsIn(t, "github.com/atlas-reproduce/atlas-reproduce/report/tables", heavy); len(found) == 0 {
			t.Error("no arrow-go found in report/tables")
		}
	})
}
