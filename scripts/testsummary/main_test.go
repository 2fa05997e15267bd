package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSkipsListed: skipped tests are listed at the end with their reason,
// then the failed tests and the packages that failed outside a test;
// failed tests' output is shown, passing tests are quiet.
func TestSkipsListed(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: chromium not found: install it\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: quiet pass\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:5: broke\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`{"Action":"output","Package":"q","Output":"panic: boom\n"}`,
		`{"Action":"fail","Package":"q"}`,
		`{"Action":"pass","Package":"r","Test":"TestD"}`,
		`{"Action":"pass","Package":"r"}`,
	}, "\n")
	var out bytes.Buffer
	failed, err := run(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	got := out.String()
	for _, want := range []string{"c_test.go:5: broke", "FAIL\tp", "1 tests skipped:\n  p TestA: a_test.go:9: chromium not found: install it\n",
		"2 tests failed:\n  p TestC\n  q (the package failed outside any test: a panic, a timeout, TestMain)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet pass") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
}

// TestNothingFailed: a clean run says no test failed, and exits 0.
func TestNothingFailed(t *testing.T) {
	in := `{"Action":"pass","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"p"}`
	var out bytes.Buffer
	failed, err := run(strings.NewReader(in), &out)
	if err != nil || failed || !strings.HasSuffix(out.String(), "no test skipped\n\nno test failed\n") {
		t.Errorf("failed %v, err %v, output:\n%s", failed, err, out.String())
	}
}
