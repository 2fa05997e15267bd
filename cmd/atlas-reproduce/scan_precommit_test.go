package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"go.yaml.in/yaml/v3"
)

// TestPreCommitHook holds .pre-commit-hooks.yaml to the command: its files
// pattern matches every project config the scan reads, and its entry,
// run against the fixture repository, parses and fails the verdict on the
// fixture's unpinned server as a hook should.
func TestPreCommitHook(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID, Entry, Language, Files string
		PassFilenames              bool `yaml:"pass_filenames"`
	}
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].Language != "golang" || hooks[0].PassFilenames {
		t.Fatalf("hooks %+v", hooks)
	}
	h := hooks[0]
	files := regexp.MustCompile(h.Files)
	for _, l := range agentconfig.ProjectLocations("") {
		if p := filepath.ToSlash(l.Path); !files.MatchString(p) {
			t.Errorf("files pattern misses %s", p)
		}
	}
	args := strings.Fields(h.Entry)
	if args[0] != "atlas-reproduce" || args[1] != "scan" {
		t.Fatalf("entry %q", h.Entry)
	}
	repo := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "repo")
	for i, a := range args {
		if a == "." {
			args[i] = repo
		}
	}
	env := &cmdEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	err = runScan(context.Background(), env, args[2:])
	var v verdictError
	if !errors.As(err, &v) || !strings.Contains(err.Error(), "time is unpinned") {
		t.Errorf("hook entry on the fixture repository: %v; want the unpinned time server as a verdict failure", err)
	}
}
