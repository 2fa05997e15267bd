package runner

import (
	"os/exec"
	"testing"
)

// referencePy is the Python reference the run's figures are held to.
const referencePy = "../bench/reference.py"

func python3(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the CPython oracle needs python3 on PATH: %v", err)
	}
	return p
}
