package serve

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestNoParquet keeps arrow-go out of serve: it labels with package label
// and writes SARIF through report/sarif, so a gateway that embeds its
// handler links no Parquet.
func TestNoParquet(t *testing.T) {
	testenv.NoDeps(t, ".", []string{"github.com/apache/arrow-go"}, "github.com/atlas-reproduce/atlas-reproduce/report/tables")
}
