package probe_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"go.uber.org/goleak"
)

// TestMain runs the tests, then fails when a goroutine is left behind:
// goleak.VerifyTestMain, with the test servers' SDK sessions closed first.
func TestMain(m *testing.M) {
	code := m.Run()
	crawltest.CloseSDKSessions()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
