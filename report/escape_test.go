package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestMarkdownEscapesCraftedRelease: a crafted release.json's raw HTML,
// Markdown and terminal control sequences reach report.md literal, and
// tool names of a diff reach the terminal escaped.
func TestMarkdownEscapesCraftedRelease(t *testing.T) {
	const html = `<img src=x onerror=alert(1)>`
	const ctl = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"
	r := sampleReport(true)
	r.Release = &release.Release{
		Tool:       release.Tool{Name: html + ctl, Version: "[x](javascript:alert(1))", Revision: "`" + html},
		Started:    "<script>alert(1)</script>",
		Candidates: release.Source{Registry: html + ctl, UpdatedSince: html},
		Options:    release.Options{Timeout: html},
		Client:     release.Client{ProtocolVersion: html + ctl, ClientInfo: json.RawMessage(`{"name": "<b>x</b>"}`), Capabilities: json.RawMessage(`{}`)},
		Counts: release.Counts{UnreachableByKind: map[string]int{html: 1},
			ByProtocol:    []release.ProtocolCount{{ProtocolVersion: html + ctl, Generation: html, Servers: 1}},
			ByPackageType: []release.PackageTypeCount{{Type: html + ctl, Outcome: html, Servers: 1}}},
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	i := strings.Index(md, "## Crawl release")
	if i < 0 {
		t.Fatalf("no release section:\n%s", md)
	}
	md = md[i:]
	if j := strings.Index(md[1:], "\n## "); j >= 0 {
		md = md[:j+1] // the release section alone: the sample's other text is its own
	}
	// Outside code spans, no tag may open; inside them, HTML is inert.
	outside := stripCodeSpans(md)
	for _, bad := range []string{"<img", "<script", "<b>", "](javascript", "\x1b", "\x07"} {
		if unescaped(outside, bad) {
			t.Errorf("report.md holds %q outside code, not escaped:\n%s", bad, md)
		}
	}
	for _, bad := range []string{"\x1b", "\x07"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md holds a raw %q", bad)
		}
	}
	if got := mdCode("read\x1b]0;pwned\x07_file"); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("a diff's tool name reaches the terminal raw: %q", got)
	}
}

// unescaped says s holds sub not preceded by a backslash.
func unescaped(s, sub string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return false
		}
		if k := i + j; k == 0 || s[k-1] != '\\' {
			return true
		}
		i += j + 1
	}
}

// stripCodeSpans drops the inline code spans of md (fenced by runs of
// backticks), leaving the text Markdown renders as markup.
func stripCodeSpans(md string) string {
	var out strings.Builder
	for i := 0; i < len(md); {
		if md[i] != '`' || (i > 0 && md[i-1] == '\\') {
			out.WriteByte(md[i])
			i++
			continue
		}
		n := 0
		for i+n < len(md) && md[i+n] == '`' {
			n++
		}
		fence := md[i : i+n]
		end := strings.Index(md[i+n:], fence)
		if end < 0 {
			out.WriteString(fence)
			i += n
			continue
		}
		i += n + end + n
	}
	return out.String()
}
