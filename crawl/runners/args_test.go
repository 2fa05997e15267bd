package runners

import (
	"slices"
	"testing"
)

// TestPackageArgs: named and positional arguments with their values or
// defaults, {variables} filled with their defaults, and an argument whose
// variable has no default left out, none invented.
func TestPackageArgs(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name string
		args []Argument
		want []string
	}{
		{"positional", []Argument{{Type: "positional", Value: "stdio"}, {Type: "positional", Default: s("x")}, {Type: "positional"}}, []string{"stdio", "x"}},
		{"named", []Argument{{Type: "named", Name: "--flag"}, {Type: "named", Name: "--level", Default: s("3")}}, []string{"--flag", "--level", "3"}},
		{"variable", []Argument{{Type: "named", Name: "--port", Value: "{port}", Variables: map[string]*string{"port": s("8080")}},
			{Type: "positional", Value: "--host={host}:{port}", Variables: map[string]*string{"host": s("localhost"), "port": s("1")}}},
			[]string{"--port", "8080", "--host=localhost:1"}},
		{"variable-no-default", []Argument{{Type: "named", Name: "--token", Value: "{token}", Variables: map[string]*string{"token": nil}},
			{Type: "positional", Value: "keep"}}, []string{"keep"}},
		{"braces-not-a-variable", []Argument{{Type: "positional", Value: "{json}"}}, []string{"{json}"}},
	} {
		if got := packageArgs(&Package{PackageArguments: tc.args}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPyPIModule: runtime arguments that name a module with -m, positional
// or named, choose it; anything else leaves the console script.
func TestPyPIModule(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		args []Argument
		want string
	}{
		{[]Argument{{Type: "positional", Value: "-m"}, {Type: "positional", Value: "mcp_server.main"}}, "mcp_server.main"},
		{[]Argument{{Type: "named", Name: "-m", Default: s("tiny")}}, "tiny"},
		{[]Argument{{Type: "positional", Value: "-m"}, {Type: "positional", Value: "os; rm -rf /"}}, ""},
		{[]Argument{{Type: "named", Name: "--from", Value: "x==1"}}, ""},
		{nil, ""},
	} {
		if got := pypiModule(&Package{RuntimeArguments: tc.args}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
