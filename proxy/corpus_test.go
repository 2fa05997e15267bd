package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// rawServer is a Streamable HTTP MCP server that sends the given tools
// verbatim in one tools/list page (a scriptUpstream): no SDK between the
// bytes and the wire.
func rawServer(t testing.TB, tools []json.RawMessage) *httptest.Server {
	list := []byte{'['}
	for i, tool := range tools {
		if i > 0 {
			list = append(list, ", "...)
		}
		list = append(list, tool...)
	}
	list = append(list, ']')
	return newScriptUpstream(t, string(list), nil).Server
}

// corpusTools returns the bundled real tools as the census holds them, and
// the labels classify gives each, read from its census record.
func corpusTools(t testing.TB) ([]json.RawMessage, []*label.ToolLabels) {
	data := realcorpus.MustRead(t)
	var tools []json.RawMessage
	var labels []*label.ToolLabels
	l := label.NewLabeller()
	for line := range bytes.Lines(data) {
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		err := l.Record(line, func(tl *label.ToolLabels) error {
			c := *tl
			labels = append(labels, &c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, rec.Tool)
	}
	if len(tools) != realcorpus.Tools || len(labels) != realcorpus.Tools {
		t.Fatalf("%d tools, %d labels; want %d", len(tools), len(labels), realcorpus.Tools)
	}
	return tools, labels
}

// TestRealCorpus serves every bundled real tool through the proxy: each
// gains exactly the labels classify prints for it, and nothing else of it
// changes.
func TestRealCorpus(t *testing.T) {
	tools, want := corpusTools(t)
	up := rawServer(t, tools)
	p := newProxy(t, Upstream{URL: up.URL}, Policy{})
	rtr, rec := record(stdioClient(t, p))
	cs := connectClient(t, rtr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// The SDK client may refuse some real schemas as typed tools; the
	// raw result it received is what is checked.
	cs.ListTools(ctx, nil)
	got := toolsOf(t, rec.last("tools/list"))
	checkListed(t, got, tools, nil)
	for i := range got {
		l := labelsOf(t, got[i])
		w := want[i]
		if l == nil {
			continue // reported by checkListed
		}
		if !slices.Equal(l.Classes, w.Classes) || !slices.Equal(l.RequiredClasses, w.RequiredClasses) || len(l.Properties) != len(w.Properties) {
			t.Errorf("tool %d: labels %s\nclassify: classes %q required %q, %d properties", i, l.raw, w.Classes, w.RequiredClasses, len(w.Properties))
			continue
		}
		for j, p := range l.Properties {
			wp := w.Properties[j]
			if p.Name != wp.Name || p.Where != wp.Where || p.Required != wp.Required || !slices.Equal(p.Classes, wp.Classes) {
				t.Errorf("tool %d property %d: %+v, classify %+v", i, j, p, wp)
			}
		}
	}
	if n := testCounter(t, p, "atlas_proxy_tools_labelled_total", ""); n != float64(len(tools)) {
		t.Errorf("labelled counter %v, want %d", n, len(tools))
	}
}
