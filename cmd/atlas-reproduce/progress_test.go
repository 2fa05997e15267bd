package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestBarsOnlyHere: the packages report progress through callbacks and
// draw nothing; this command alone imports the progress bar library. The
// last case proves the check sees it where it is.
func TestBarsOnlyHere(t *testing.T) {
	bars := []string{"github.com/schollz/progressbar"}
	const mod = "github.com/atlas-reproduce/atlas-reproduce/"
	for _, tc := range []struct {
		pkg  string
		want bool
	}{
		{mod + "pipeline", false},
		{mod + "crawl", false},
		{mod + "fetch", false},
		{mod + "synth", false},
		{mod + "cmd/atlas-reproduce", true},
	} {
		t.Run(strings.TrimPrefix(tc.pkg, mod), func(t *testing.T) {
			found := testenv.DepsIn(t, tc.pkg, bars)
			if got := len(found) > 0; got != tc.want {
				t.Errorf("%s depends on the progress bar library: %v, want %v (%s)", tc.pkg, got, tc.want, strings.Join(found, ", "))
			}
		})
	}
}

// TestConsole: each bar draws what it did before the packages reported
// through callbacks, and a log line first takes the bar out of its way.
func TestConsole(t *testing.T) {
	for _, tc := range []struct {
		name string
		draw func(c *console)
		want []string
	}{
		{"crawl", func(c *console) {
			p := c.crawlProgress(true)
			p(progress.Report{Task: "crawl", Done: 1, Total: 3})
			p(progress.Report{Task: "crawl", Done: 2, Total: 3, Failed: 1})
		}, []string{"crawl: 1 reachable, 1 unreachable", "2/3"}},
		{"run", func(c *console) {
			p := c.fileProgress(true)
			p(progress.Report{Task: "server_tools.jsonl.gz", Done: 1000, Total: 4000})
		}, []string{"server_tools.jsonl.gz", "25%"}},
		{"fetch, resumed", func(c *console) {
			r := &fetchReporter{con: c, bars: true}
			r.tell(progress.Report{Task: "census.zip", Done: 2048, Total: 4096})
			r.tell(progress.Report{Task: "census.zip", Done: 3072, Total: 4096})
		}, []string{`"census.zip" (resumed at 2.0 KiB)`, "0%"}}, // throttled: the blank state shows
		{"synth", func(c *console) {
			c.toolsProgress(true, 10)(progress.Report{Task: "synth", Done: 4, Total: 10})
		}, []string{"synth", "/10", "tools"}}, // throttled: the blank state shows
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			env := &cmdEnv{stderr: &out}
			tc.draw(env.console())
			drawn := out.String()
			for _, w := range tc.want {
				if !strings.Contains(drawn, w) {
					t.Errorf("bar %q lacks %q", drawn, w)
				}
			}
			env.logger(slog.LevelInfo).Info("a line")
			logged := strings.TrimPrefix(out.String(), drawn)
			before, line, ok := strings.Cut(logged, "a line\n")
			if !ok || !strings.HasSuffix(before, "\r") || line != "" {
				t.Errorf("after the bar %q came %q, want the bar cleared, then the line", drawn, logged)
			}
			env.console().end(false)
			if env.console().bar != nil {
				t.Error("end left the bar")
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		c := &console{}
		if c.crawlProgress(false) != nil || c.fileProgress(false) != nil || c.toolsProgress(false, 1) != nil {
			t.Error("a bar is drawn with bars off")
		}
	})
}
