package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadFromQuoted: report.md's "Read from:" line, which reproduce
// prints to the terminal, carries a location with control characters
// quoted, and a plain one as it is.
func TestReadFromQuoted(t *testing.T) {
	r := &Report{Inputs: []Input{
		{Name: "servers.jsonl", Location: "a.zip!x\x1b]0;pwned\x07\n/servers.jsonl"},
		{Name: "server_tools.jsonl", Location: "/data/server_tools.jsonl"},
	}}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	i := strings.Index(md, "Read from: ")
	if i < 0 {
		t.Fatalf("no Read from line:\n%s", md)
	}
	line, _, _ := strings.Cut(md[i:], "\n")
	want := "Read from: `\"a.zip!x\\x1b]0;pwned\\a\\n/servers.jsonl\"`, `/data/server_tools.jsonl`"
	if line != want || strings.ContainsAny(md, "\x1b\x07") {
		t.Errorf("got  %q\nwant %q", line, want)
	}
}
