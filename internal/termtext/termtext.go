// Package termtext makes text from strangers (servers, registries, crafted
// files) safe to print: to a terminal, where a control sequence would
// write the clipboard, retitle the window or clear the screen, and to a
// Markdown report, where raw HTML or markup would render.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Safe returns s with every rune that is not printable (C0 and C1
// controls, DEL, bidirectional and other format characters, invalid
// UTF-8) written as its Go escape (\x1b, \u202e), so that it shows
// instead of acting. Spaces stay; newlines and tabs are escaped too: a
// stranger's text must not forge lines of its own.
func Safe(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

func isSafe(s string) bool {
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		if (r == utf8.RuneError && n == 1) || (r != ' ' && !strconv.IsPrint(r)) {
			return false
		}
	}
	return true
}

// markdownSpecial are the ASCII punctuation characters that Markdown (or
// the HTML it allows) reads as markup inside a line; a backslash makes
// each literal. (Text written here never begins a line, where #, - and
// digits would matter.)
const markdownSpecial = "\\`*_[]<>|&~"

// Markdown returns s as literal Markdown text: Safe, then every character
// Markdown or raw HTML could read as markup escaped with a backslash.
func Markdown(s string) string {
	s = Safe(s)
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
