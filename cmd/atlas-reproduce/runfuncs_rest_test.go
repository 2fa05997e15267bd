package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/bench"
)

// runFunctionTests names, for every command, the test that calls its run
// function with an options struct, no flags parsed.
var runFunctionTests = map[string]string{
	"bench": "TestRunFunctionsBenchProxy", "candidates": "TestRunFunctionsNoFlags", "classify": "TestRunFunctions",
	"crawl": "TestRunFunctionsNoFlags", "diff": "TestRunFunctions", "evaluate": "TestEvaluateCommand",
	"fetch": "TestExitCodesOfEachCommand", "history": "TestRunFunctionsNoFlags", "inspect": "TestRunFunctions",
	"label": "TestLabelCommand", "merge": "TestExitCodesOfEachCommand", "proxy": "TestRunFunctionsBenchProxy",
	"publish": "TestExitCodesOfEachCommand", "reproduce": "TestExitCodesOfEachCommand", "run": "TestExitCodesOfEachCommand",
	"sample": "TestSampleThenEvaluate", "sandbox": "TestRunFunctionsNoFlags", "scan": "TestScanRunFunction",
	"serve": "TestRunFunctions", "synth": "TestRunFunctions", "version": "TestRunFunctions",
}

// TestEveryCommandHasARunFunctionTest: a command added without a test of
// its run function fails here.
func TestEveryCommandHasARunFunctionTest(t *testing.T) {
	for _, c := range commandList {
		if runFunctionTests[c.name] == "" {
			t.Errorf("command %s: no test calls its run function (add one and name it in runFunctionTests)", c.name)
		}
	}
	for name := range runFunctionTests {
		if _, ok := commands[name]; !ok {
			t.Errorf("runFunctionTests names %s, which is no command", name)
		}
	}
}

// TestRunFunctionsBenchProxy calls bench's and proxy's run functions.
func TestRunFunctionsBenchProxy(t *testing.T) {
	ctx := context.Background()
	t.Run("bench", func(t *testing.T) {
		var out, errOut strings.Builder
		env := &cmdEnv{stdout: &out, stderr: &errOut}
		o := benchOptions{binary: binary, opt: bench.Options{Tools: 400, Scales: []int{1}, Runs: 1}}
		if err := benchRun(ctx, env, o); err != nil {
			t.Fatalf("%v; stderr %s", err, errOut.String())
		}
		for _, w := range []string{"gzip -dc", "400"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("bench's table lacks %q:\n%s", w, out.String())
			}
		}
	})
	t.Run("proxy", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var errOut strings.Builder
		env := &cmdEnv{stdin: inR, stdout: outW, stderr: &errOut}
		o, err := parseProxy(env, []string{"--stdio", "--upstream-cmd", binary + " serve --stdio"})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- proxyRun(ctx, env, o)
			outW.Close()
		}()
		lines := bufio.NewScanner(outR)
		lines.Buffer(nil, 1<<20)
		ask := func(req, id string) string {
			if _, err := io.WriteString(inW, req+"\n"); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				if strings.Contains(lines.Text(), `"id":`+id) {
					return lines.Text()
				}
			}
			t.Fatalf("no answer to request %s; stderr %s", id, errOut.String())
			return ""
		}
		ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "1")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		if got := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2"); !strings.Contains(got, `"tools"`) || !strings.Contains(got, "gg:") {
			t.Errorf("tools/list through the proxy: %s", got)
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Errorf("%v; stderr %s", err, errOut.String())
		}
	})
}
