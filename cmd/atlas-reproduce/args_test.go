package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestParseFlagsOneRule: every subcommand takes flags before, between and
// after its positional arguments, and "--" ends the flags.
func TestParseFlagsOneRule(t *testing.T) {
	for _, tc := range []struct {
		args       string
		positional []string
		json       bool
		format     string
		usage      bool
	}{
		{args: "OLD NEW", positional: []string{"OLD", "NEW"}},
		{args: "--json OLD NEW", positional: []string{"OLD", "NEW"}, json: true},
		{args: "OLD NEW --json", positional: []string{"OLD", "NEW"}, json: true},
		{args: "OLD --format sarif NEW", positional: []string{"OLD", "NEW"}, format: "sarif"},
		{args: "- NEW --json", positional: []string{"-", "NEW"}, json: true},
		{args: "OLD -- --json", positional: []string{"OLD", "--json"}},
		{args: "-- -x", positional: []string{"-x"}},
		{args: "OLD --bogus", usage: true},
		{args: "", positional: nil},
	} {
		t.Run(tc.args, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			asJSON := fs.Bool("json", false, "")
			format := fs.String("format", "", "")
			err := parseFlags(fs, strings.Fields(tc.args))
			var ue usageError
			if tc.usage {
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fs.Args(); !slices.Equal(got, tc.positional) && !(len(got) == 0 && len(tc.positional) == 0) {
				t.Errorf("positional %q, want %q", got, tc.positional)
			}
			if *asJSON != tc.json || *format != tc.format {
				t.Errorf("--json %v --format %q, want %v %q", *asJSON, *format, tc.json, tc.format)
			}
		})
	}
}

// TestFetchAndReproduceShareValidation: reproduce refuses what fetch
// refuses, before any network request.
func TestFetchAndReproduceShareValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad record", []string{"--dest", "d", "--record", "../etc"}, "not a Zenodo record ID"},
		{"negative retries", []string{"--dest", "d", "--retries", "-1"}, "--retries must not be negative"},
		{"negative timeout", []string{"--dest", "d", "--timeout", "-1s"}, "--timeout must not be negative"},
		{"no dest", nil, "--dest is required"},
	} {
		for _, cmd := range []string{"fetch", "reproduce"} {
			t.Run(cmd+" "+tc.name, func(t *testing.T) {
				args := append([]string{cmd}, tc.args...)
				if cmd == "reproduce" {
					args = append(args, "--out", t.TempDir())
				}
				_, stderr, code := run(t, "", args...)
				if code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
				}
			})
		}
	}
}
