package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestNewCopiesPolicy: New normalises the classes into a copy of its own;
// the caller's slices are left as given, and changing them afterwards does
// not change the proxy's policy.
func TestNewCopiesPolicy(t *testing.T) {
	hide := []string{"command-string"}
	deny := []string{"gg:filesystem-path"}
	allow := []string{"x"}
	p := newProxy(t, Upstream{URL: "http://127.0.0.1:1"}, Policy{Hide: hide, Deny: deny, AllowTools: allow})
	if hide[0] != "command-string" || deny[0] != "gg:filesystem-path" {
		t.Errorf("New wrote into the caller's slices: %q %q", hide, deny)
	}
	hide[0], deny[0], allow[0] = "changed", "changed", "changed"
	pol := p.cfg.Policy
	if !slices.Equal(pol.Hide, []string{"gg:command-string"}) || !slices.Equal(pol.Deny, []string{"gg:filesystem-path"}) || !slices.Equal(pol.AllowTools, []string{"x"}) {
		t.Errorf("the proxy's policy followed the caller's slices: %+v", pol)
	}
}

// TestHideOrder: under --hide, what is listed does not depend on order: a
// hidden tool and a harmless one sharing its name, in either order, on one
// page or on two, always list the harmless one only, and calling the name
// is refused once both were listed.
func TestHideOrder(t *testing.T) {
	harmless := `{"name":"run_cmd","description":"harmless","inputSchema":{"type":"object"}}`
	for _, c := range []struct {
		name  string
		pages [][]string
	}{
		{"one page, hidden first", [][]string{{toolRun, harmless}}},
		{"one page, harmless first", [][]string{{harmless, toolRun}}},
		{"two pages, hidden first", [][]string{{toolRun}, {harmless}}},
		{"two pages, harmless first", [][]string{{harmless}, {toolRun}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newScriptUpstream(t, "[]", func(w http.ResponseWriter, method string, id, params json.RawMessage) bool {
				if method != "tools/list" {
					return false
				}
				var lp struct{ Cursor string }
				json.Unmarshal(params, &lp)
				page := 0
				if lp.Cursor != "" {
					fmt.Sscan(lp.Cursor, &page)
				}
				next := ""
				if page+1 < len(c.pages) {
					next = fmt.Sprintf(`,"nextCursor":"%d"`, page+1)
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s}}`, id, strings.Join(c.pages[page], ","), next)
				return true
			})
			p := newProxy(t, Upstream{URL: up.URL}, Policy{Hide: []string{"command-string"}})
			cl := rawStdio(t, p)
			list := cl.handshake()
			var listed [][]byte
			for page := 0; ; page++ {
				var res struct {
					Tools      []json.RawMessage
					NextCursor string
				}
				if err := json.Unmarshal(list.Result, &res); err != nil {
					t.Fatalf("page %d: %v %s", page, err, list.Result)
				}
				for _, tool := range res.Tools {
					listed = append(listed, tool)
				}
				if res.NextCursor == "" {
					break
				}
				cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":%q}}`, 100+page, res.NextCursor))
				list = cl.recv()
			}
			if len(listed) != 1 || !bytes.Contains(listed[0], []byte(`"harmless"`)) {
				t.Errorf("listed %s, want the harmless run_cmd only", bytes.Join(listed, []byte(", ")))
			}
			cl.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_cmd","arguments":{}}}`)
			if m := cl.recv(); m.Error == nil || m.Error.Code != CodeDenied {
				t.Errorf("call run_cmd: %+v, want refused", m)
			}
			if got := up.called(); len(got) != 0 {
				t.Errorf("upstream was sent %q", got)
			}
		})
	}
}
