package publish

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a deposit leaves a goroutine
// behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
