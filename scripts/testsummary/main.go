// Command testsummary reads `go test -json` on stdin and prints what a
// reader of `make test` needs: each package's result line, the output of
// every failed test, and at the end every skipped test with its reason,
// which plain `go test` does not show, then every failed test (and every
// package that failed outside a test: a build error, a panic, a timeout),
// so that the last lines say what broke. It exits 1 when a test or package
// failed, as go test would have.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// summary gathers the output of each test until its verdict.
type summary struct {
	output  map[string][]string // package + "\x00" + test -> lines
	skipped []string
	// failures are the failed tests, and the packages that failed with
	// no failed test of their own.
	failures  []string
	pkgFailed map[string]bool // packages with a failed test
	failed    bool
}

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer) (bool, error) {
	s := &summary{output: map[string][]string{}, pkgFailed: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A build failure is printed as text, not JSON.
			fmt.Fprintln(w, sc.Text())
			s.failed = true
			s.failures = append(s.failures, "(not a test event) "+sc.Text())
			continue
		}
		s.take(w, e)
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	s.report(w)
	return s.failed, nil
}

func (s *summary) take(w io.Writer, e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		fmt.Fprint(w, e.Output)
		return
	case "build-fail":
		s.failed = true
		s.failures = append(s.failures, e.Package+" (build failed)")
		s.pkgFailed[e.Package] = true
		return
	case "output":
		if e.Test == "" {
			// A package's own lines: its ok/FAIL line, build errors.
			if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") ||
				(!strings.HasPrefix(e.Output, "PASS") && !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "--- ")) {
				fmt.Fprint(w, e.Output)
			}
			return
		}
		s.output[key] = append(s.output[key], e.Output)
	case "fail":
		s.failed = true
		if e.Test != "" {
			fmt.Fprint(w, strings.Join(s.output[key], ""))
			s.failures = append(s.failures, e.Package+" "+e.Test)
			s.pkgFailed[e.Package] = true
		} else if !s.pkgFailed[e.Package] {
			s.failures = append(s.failures, e.Package+" (the package failed outside any test: a panic, a timeout, TestMain)")
		}
		delete(s.output, key)
	case "skip":
		if e.Test != "" {
			s.skipped = append(s.skipped, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(s.output[key])))
		}
		delete(s.output, key)
	case "pass":
		delete(s.output, key)
	}
}

// reason is the skip message among a skipped test's output lines: the
// lines after "--- SKIP", which hold the t.Skip text with its file:line.
func reason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}

func (s *summary) report(w io.Writer) {
	list(w, "skipped", s.skipped)
	list(w, "failed", s.failures)
}

// list prints the tests of one verdict, sorted, under a count.
func list(w io.Writer, verdict string, tests []string) {
	if len(tests) == 0 {
		fmt.Fprintf(w, "\nno test %s\n", verdict)
		return
	}
	sort.Strings(tests)
	fmt.Fprintf(w, "\n%d tests %s:\n", len(tests), verdict)
	for _, l := range tests {
		fmt.Fprintln(w, "  "+l)
	}
}
