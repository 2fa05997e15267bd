package classify

import (
	"slices"
	"strings"
	"testing"
)

func TestParseClasses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{" , ,", nil, ""},
		{"gg:command-string", []string{"gg:command-string"}, ""},
		{"command-string", []string{"gg:command-string"}, ""},
		{"command_string", []string{"gg:command-string"}, ""},
		{"GG:Command_String", []string{"gg:command-string"}, ""},
		{"url-endpoint, gg:credential-value,money_amount", []string{"gg:url-endpoint", "gg:credential-value", "gg:money-amount"}, ""},
		{"filesystem-path,gg:filesystem-path", []string{"gg:filesystem-path"}, ""},
		{"command", nil, `unknown class "command": want one of gg:command-string, gg:credential-value, gg:filesystem-path, gg:money-amount, gg:url-endpoint`},
		{"gg:command-string,nope", nil, `unknown class "nope"`},
		{"raw_content_blob", nil, `unknown class "raw_content_blob"`}, // a bucket is no class
		{"gg:raw-content-blob", nil, `unknown class`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseClasses(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseClasses(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseClasses(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
