package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestNodeInterop holds the proxy to the SDKs' own clients on servers of
// other implementations, installed from internal/testenv/npm's lockfile:
// every tool an SDK's client lists through the proxy is the one it lists
// directly (name, input schema, its own _meta) plus one param-risk member
// holding the labels package label gives the tool; a 2026-07-28-only
// server is reached through the proxy by a 2025 client and a 2026-07-28
// one; server-everything's task tool runs to completion through it.
func TestNodeInterop(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	cases := []struct {
		name, script string
		args         []string
		client       string // the SDK client listing the tools directly
		// through names the SDK clients listing them through the proxy and
		// the revision each must negotiate with it: the 1.x client speaks
		// 2025-11-25 only; the v2 one gets 2026-07-28 from a proxy whose
		// upstream speaks it.
		through []through
	}{
		{name: "TypeScript SDK 1.x, sessions", script: "ts1-server.mjs", client: "v1", through: []through{{"v1", legacyVersion}, {"v2", legacyVersion}}},
		{name: "TypeScript SDK v2, 2026-07-28 only", script: "ts2-server.mjs", args: []string{"reject"}, client: "v2", through: []through{{"v1", legacyVersion}, {"v2", statelessVersion}}},
		{name: "TypeScript SDK v2, stateless", script: "ts2-server.mjs", args: []string{"stateless"}, client: "v2", through: []through{{"v1", legacyVersion}, {"v2", statelessVersion}}},
		{name: "server-everything", script: "everything.mjs", client: "v1", through: []through{{"v1", legacyVersion}}},
	}
	var scripts [][]string
	for _, c := range cases {
		scripts = append(scripts, append([]string{c.script}, c.args...))
	}
	scripts = append(scripts, []string{"forged-server.mjs"})
	urls := testenv.NodeServers(t, scripts...)
	proxied := make([]string, len(cases))
	var clients []testenv.NodeClient
	for i, c := range cases {
		proxied[i] = serveHTTP(t, newProxy(t, Upstream{URL: urls[i]}, Policy{})) + "/mcp"
		clients = append(clients, testenv.NodeClient{Gen: c.client, URL: urls[i]})
		for _, th := range c.through {
			clients = append(clients, testenv.NodeClient{Gen: th.gen, URL: proxied[i]})
		}
	}
	listed := testenv.NodeListTools(t, json.RawMessage(`{}`), clients...)
	t.Run("tools", func(t *testing.T) {
		n := 0
		for _, c := range cases {
			direct := listed[n]
			n++
			for _, th := range c.through {
				got := listed[n]
				n++
				t.Run(c.name+"/"+th.gen+" client", func(t *testing.T) {
					if got.ProtocolVersion != th.version {
						t.Errorf("the %s client negotiated %s through the proxy, want %s (%s directly)", th.gen, got.ProtocolVersion, th.version, direct.ProtocolVersion)
					}
					checkThrough(t, got.Tools, direct.Tools)
				})
			}
		}
	})
	t.Run("forged key", func(t *testing.T) {
		p1 := newProxy(t, Upstream{URL: urls[len(cases)]}, Policy{})
		first := serveHTTP(t, p1) + "/mcp"
		p2 := newProxy(t, Upstream{URL: first}, Policy{})
		second := serveHTTP(t, p2) + "/mcp"
		for _, c := range []struct {
			name, url string
			p         *Proxy
		}{{"one proxy", first, p1}, {"two proxies", second, p2}} {
			t.Run(c.name, func(t *testing.T) {
				checkForged(t, c.url)
				// Each of the four tools spoke for the proxy: two forged
				// the key, two sent a _meta that is no object; behind
				// another proxy, all four carry its key.
				if n := testCounter(t, c.p, "atlas_proxy_labels_replaced_total", ""); n != 4 {
					t.Errorf("%v forged labels counted, want 4", n)
				}
			})
		}
	})
	t.Run("task", func(t *testing.T) {
		// The same task run directly and through the proxy, at once: each
		// takes the server's four stages.
		everything := len(cases) - 1
		runs := make([]taskRun, 2)
		t.Run("runs", func(t *testing.T) {
			for i, url := range []string{urls[everything], proxied[everything]} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					runs[i] = runTask(t, url)
				})
			}
		})
		direct, got := runs[0], runs[1]
		if direct.Error != "" || direct.Task.Status != "completed" {
			t.Fatalf("directly: %+v", direct)
		}
		if got.Error != "" || got.Task.Status != "completed" {
			t.Errorf("through the proxy the task did not complete: %+v", got)
		}
		if !slices.Equal(got.Types, direct.Types) || got.Types[len(got.Types)-1] != "result" {
			t.Errorf("through the proxy the client saw %q, directly %q", got.Types, direct.Types)
		}
		// The same but for the task id in the result's _meta.
		if !bytes.Equal(compact(t, got.Result.Content), compact(t, direct.Result.Content)) || len(direct.Result.Content) == 0 {
			t.Errorf("result through the proxy %s, directly %s", got.Result, direct.Result)
		}
		if got.Listed < 1 {
			t.Errorf("tasks/list through the proxy lists %d tasks", got.Listed)
		}
	})
}

// through is an SDK client listing tools through the proxy and the
// protocol revision it must negotiate.
type through struct{ gen, version string }

// taskRun is what run-task.mjs prints.
type taskRun struct {
	Types  []string `json:"types"`
	Result struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Task struct {
		Status string `json:"status"`
	} `json:"task"`
	Listed int    `json:"listed"`
	Error  string `json:"error"`
}

func runTask(t *testing.T, url string) taskRun {
	t.Helper()
	var r taskRun
	out := testenv.NodeRun(t, "run-task.mjs", url)
	if err := json.Unmarshal(out, &r); err != nil || len(r.Types) == 0 {
		t.Errorf("run-task.mjs printed %s: %v", out, err)
		r.Types = []string{""}
	}
	return r
}

// checkThrough compares the tools an SDK's client listed through the proxy
// with those it listed directly.
func checkThrough(t *testing.T, got, direct []json.RawMessage) {
	t.Helper()
	if len(got) != len(direct) || len(got) == 0 {
		t.Fatalf("%d tools through the proxy, %d directly", len(got), len(direct))
	}
	for i := range got {
		g, d := toolParts(t, got[i]), toolParts(t, direct[i])
		if g.name != d.name || !bytes.Equal(g.schema, d.schema) {
			t.Errorf("tool %d: %s %s through the proxy, %s %s directly", i, g.name, g.schema, d.name, d.schema)
		}
		ours, ok := g.meta[MetaKey]
		if !ok {
			t.Errorf("tool %s: no %s in %s", g.name, MetaKey, got[i])
			continue
		}
		delete(g.meta, MetaKey)
		if _, forged := d.meta[MetaKey]; forged || fmt.Sprint(g.meta) != fmt.Sprint(d.meta) {
			t.Errorf("tool %s: _meta %v through the proxy, %v directly", g.name, g.meta, d.meta)
		}
		checkLabels(t, ours, direct[i])
	}
}

// checkLabels checks the proxy's member against package label's labels of
// the tool.
func checkLabels(t *testing.T, ours json.RawMessage, tool []byte) {
	t.Helper()
	want, err := label.Document(append(append([]byte(`{"tools":[`), tool...), "]}"...))
	if err != nil || len(want) != 1 {
		t.Fatalf("label.Document: %v (%d tools)", err, len(want))
	}
	var l metaLabels
	if err := json.Unmarshal(ours, &l); err != nil {
		t.Fatal(err)
	}
	if l.Rules != Rules || !slices.Equal(l.Classes, want[0].Classes) || !slices.Equal(l.RequiredClasses, want[0].RequiredClasses) {
		t.Errorf("labels %s, package label gives classes %q required %q", ours, want[0].Classes, want[0].RequiredClasses)
	}
}

type parts struct {
	name   string
	schema []byte // canonical
	meta   map[string]json.RawMessage
}

func toolParts(t *testing.T, tool []byte) parts {
	t.Helper()
	var v struct {
		Name        string                     `json:"name"`
		InputSchema json.RawMessage            `json:"inputSchema"`
		Meta        map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(tool, &v); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	c, err := census.AppendCanonical(nil, v.InputSchema)
	if err != nil {
		t.Fatalf("%s: %v", v.InputSchema, err)
	}
	return parts{v.Name, c, v.Meta}
}

// checkForged lists the forged server's tools through url with a Go
// client and checks the raw result: no object with a key twice, each
// tool's _meta an object with one param-risk member, the proxy's labels.
func checkForged(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	tr, rec := record(&mcp.StreamableClientTransport{Endpoint: url})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	raw := rec.last("tools/list")
	if err := noDuplicateKeys(raw); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	tools := toolsOf(t, raw)
	if len(tools) != 4 {
		t.Fatalf("%d tools: %s", len(tools), raw)
	}
	for _, tool := range tools {
		var v struct {
			Name string          `json:"name"`
			Meta json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(tool, &v)
		if len(v.Meta) == 0 || v.Meta[0] != '{' {
			t.Errorf("%s: _meta %s is no object", v.Name, v.Meta)
			continue
		}
		if n := bytes.Count(tool, []byte(`"`+MetaKey+`"`)); n != 1 {
			t.Errorf("%s: %s %d times: %s", v.Name, MetaKey, n, tool)
		}
		l := labelsOf(t, tool)
		if l == nil || len(l.Classes) == 0 {
			t.Errorf("%s: the forged labels survived: %s", v.Name, tool)
			continue
		}
		checkLabels(t, l.raw, tool)
		if v.Name == "forged_among" && (!bytes.Contains(v.Meta, []byte(`"vendor/x":1`)) || !bytes.Contains(v.Meta, []byte(`"vendor/y":[2]`))) {
			t.Errorf("%s: the server's own _meta members were lost: %s", v.Name, v.Meta)
		}
	}
}

// noDuplicateKeys walks a JSON document and fails on the first object
// holding a key twice, which a decoded map would hide.
func noDuplicateKeys(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if seen[k.(string)] {
					return fmt.Errorf("key %q twice", k)
				}
				seen[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data: %v", err)
	}
	return nil
}

// TestNoDuplicateKeys: the check of the forged-key test sees a key twice
// at any depth, which a decoded map hides.
func TestNoDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"tools":[{"_meta":{"a":1,"b":{"a":2}}}]}`, true},
		{`{"tools":[{"_meta":{"a":1},"_meta":{"a":1}}]}`, false},
		{`{"tools":[{"_meta":{"` + MetaKey + `":{},"` + MetaKey + `":{}}}]}`, false},
		{`[{"x":[{"k":1,"k":2}]}]`, false},
		{`{"a":1} {}`, false},
	} {
		if err := noDuplicateKeys([]byte(tc.doc)); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.doc, err)
		}
	}
}
