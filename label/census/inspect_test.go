package census

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestInspector(t *testing.T) {
	lines := []struct {
		line    string
		wantErr string // "", "syntax" or "record"
	}{
		{`{"server_id":"a","tools":[{"name":"x","inputSchema":{"properties":{"p":{"description":"d"},"q":{}},"$defs":{"D":{"properties":{"r":{}}}}}},{"name":"y"}]}`, ""},
		{`{"server_id":7,"tools":[{"name":"z","inputSchema":{"properties":{"p":{"description":1}}}}]}`, ""},
		{`{"server":"s","tool":{"name":"t","a.b":1,"":2}}`, ""},
		{"   ", ""},
		{`{"tools":5}`, "record"},
		{`{"tools":`, "syntax"},
		{`{"a":{"b":{"c":{"d":{"e":1}}}}}`, ""},
	}
	in := Inspector{MaxDepth: 3}
	for _, l := range lines {
		err := in.Add([]byte(l.line))
		var se *SyntaxError
		var re *RecordError
		got := ""
		switch {
		case errors.As(err, &se):
			got = "syntax"
		case errors.As(err, &re):
			got = "record"
		case err != nil:
			t.Fatalf("%s: %T %v", l.line, err, err)
		}
		if got != l.wantErr {
			t.Errorf("%s: got error %q, want %q", l.line, got, l.wantErr)
		}
	}
	var b strings.Builder
	if err := in.Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		regexp.QuoteMeta(`lines: 7 (blank 1, not JSON 1, records 5)`),
		regexp.QuoteMeta(`shapes: server 2 (40.0%) flat 1 (20.0%) not a record 1 (20.0%) tool 1 (20.0%)`),
		// records, percent, count, types, path.
		`2 +40\.0% +3 +dict +tools\[\]$`,
		`2 +40\.0% +3 +str +tools\[\]\.name$`,
		`2 +40\.0% +2 +int:1 str:1 +server_id$`,
		`3 +60\.0% +3 +int:1 list:2 +tools$`,
		`2 +40\.0% +2 +dict +tools\[\]\.inputSchema$`,
		`1 +20\.0% +1 +int +tool\."a\.b"$`,
		`1 +20\.0% +1 +int +tool\.""$`,
		`1 +20\.0% +1 +dict +a\.b\.c$`,
	} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(out) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// MaxDepth 3 stops at tools[].inputSchema and a.b.c.
	for _, not := range []string{"tools[].inputSchema.properties", "a.b.c.d"} {
		if strings.Contains(out, not) {
			t.Errorf("summary goes deeper than MaxDepth: %s\n%s", not, out)
		}
	}

	// The default depth reaches property descriptions, counted by wildcard.
	var deep Inspector
	for _, l := range lines {
		_ = deep.Add([]byte(l.line))
	}
	b.Reset()
	if err := deep.Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`2 +40\.0% +3 +dict +tools\[\]\.inputSchema\.properties\.\*$`,
		`2 +40\.0% +2 +int:1 str:1 +tools\[\]\.inputSchema\.properties\.\*\.description$`,
		`1 +20\.0% +1 +dict +tools\[\]\.inputSchema\.\$defs\.\*\.properties\.\*$`,
	} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(b.String()) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}

	// n limits the rows to the most frequent paths.
	b.Reset()
	if err := deep.Write(&b, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the 2 most frequent") || strings.Count(b.String(), "\n") != 6 {
		t.Errorf("Write(w, 2):\n%s", b.String())
	}
}

func TestInspectorEmpty(t *testing.T) {
	var in Inspector
	var b strings.Builder
	if err := in.Write(&b, 10); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "shapes: none") {
		t.Errorf("empty summary:\n%s", b.String())
	}
}
