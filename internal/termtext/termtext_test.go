package termtext

import "testing"

func TestSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcode", "plain text, ünïcode"},
		{"\x1b]52;c;cHduZWQ=\x07", `\x1b]52;c;cHduZWQ=\a`},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\a`},
		{"clear\x1b[2J", `clear\x1b[2J`},
		{"c1\u009b2J", `c1\u009b2J`},
		{"bidi\u202egnp.exe", `bidi\u202egnp.exe`},
		{"two\nlines\r", `two\nlines\r`},
		{"bad\xffutf8", `bad\xffutf8`},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"atlas-reproduce 2026-07-28", "atlas-reproduce 2026-07-28"},
		{`<img src=x onerror=alert(1)>`, `\<img src=x onerror=alert(1)\>`},
		{"[link](javascript:x) | *b* &amp;", `\[link\](javascript:x) \| \*b\* \&amp;`},
		{"esc\x1b[2J", `esc\\x1b\[2J`},
		{"v1", "v1"},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
