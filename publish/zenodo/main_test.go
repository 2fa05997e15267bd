package zenodo

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a request leaves a goroutine
// behind (a response body not closed, a connection kept).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
