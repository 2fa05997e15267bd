package probe_test

import (
	"os"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
)

// TestMain fails the tests when a goroutine is left behind (crawltest.Main).
func TestMain(m *testing.M) { os.Exit(crawltest.Main(m)) }
