package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedAssembly checks that block8_amd64.s is exactly what the
// generator writes, so nobody edits the generated file by hand or changes
// the generator without regenerating.
func TestCommittedAssembly(t *testing.T) {
	committed, err := os.ReadFile("../block8_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if got := generate(); !bytes.Equal(got, committed) {
		t.Fatal("../block8_amd64.s differs from the generator's output; run go generate in internal/sha256x8")
	}
}
