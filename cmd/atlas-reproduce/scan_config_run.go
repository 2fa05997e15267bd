package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// scannedTool is one tool of a scanned server with its classes: those in
// force, and those a suppression accepts (see suppressions).
type scannedTool struct {
	Name       string            `json:"name"`
	Definition string            `json:"definition_sha256,omitempty"`
	Classes    []string          `json:"classes"`
	Suppressed []suppressedClass `json:"suppressed,omitempty"`
	// Properties are the tool's parameters that carry a class, for the
	// SARIF results.
	Properties []scannedProperty `json:"properties,omitempty"`
}

// scannedProperty is one labelled parameter of a tool.
type scannedProperty struct {
	Name    string   `json:"name"`
	Where   string   `json:"where"`
	Classes []string `json:"classes"`
}

// headerTransport sends a configured server's headers with every request.
// The values come from the resolved config and are never printed.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	// host is the configured URL's host: a redirect elsewhere does not
	// carry the server's token to another host.
	host string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != h.host {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// scanConfigured asks one listed server for its tools: a remote server
// with its resolved headers, a pinned package through the crawl's
// sandboxed runner with the config's arguments and (resolved) env, a local
// command in the sandbox (local). An unpinned package is resolved
// (resolveUnpinned), the version found recorded in s.Resolved and scanned.
// It returns the state to show and the labelled tools, and doc, the
// server's tools/list result as a census record for the lock (nil when
// the server was not scanned).
func scanConfigured(ctx context.Context, s *configServer, lookup func(string) (string, bool), po probe.Options, pko *runners.Options, local *localRunner) (state string, tools []scannedTool, doc []byte) {
	switch {
	case s.Disabled:
		return "disabled", nil, nil
	case len(s.NeedsConfiguration) > 0:
		return "needs configuration", nil, nil
	}
	// s.Server's env and headers are redacted for output; resolve from
	// the config as read.
	full, _ := agentconfig.Resolve(s.raw, lookup)
	// An error may quote what it was given (a URL with a token in its
	// query, a header): the state shown never holds a resolved value.
	defer func() { state = scrubSecrets(state, s.raw, full) }()
	var id string
	var r probe.Result
	var err error
	// The user configured this server: a local address is a fair target,
	// and so is a registry on loopback for its package.
	po.AllowAddr = probe.AnyAddr
	switch coord := s.Target.Coordinate(); {
	case s.Target.Kind == agentconfig.KindRemote:
		base := http.DefaultTransport.(*http.Transport).Clone()
		u, perr := url.Parse(full.URL)
		if perr != nil {
			return "failed: " + perr.Error(), nil, nil
		}
		po.Transport = headerTransport{base: base, headers: full.Headers, host: u.Host}
		id, r, err = probe.Scan(ctx, full.URL, po)
	case coord != "" && pko != nil:
		id, r, err = runners.ScanPackageWith(ctx, coord, s.Target.Args, serverEnv(s.Target, full.Env), po, *pko)
	case coord != "":
		return "not scanned: no package options", nil, nil
	case s.Target.Kind == agentconfig.KindLocal && (local == nil || local.Skip):
		return "skipped (--no-local)", nil, nil
	case s.Target.Kind == agentconfig.KindLocal:
		id = s.ID
		r, err = local.scan(ctx, full, po)
	case pko == nil:
		return "not scanned: no package options", nil, nil
	default:
		// An unpinned package: the version its runner would take now,
		// recorded, is the one scanned.
		rt, rerr := resolveUnpinned(ctx, s.Target)
		if rerr != nil {
			return "not resolved: " + rerr.Error(), nil, nil
		}
		s.Resolved = rt.Coordinate()
		id, r, err = runners.ScanPackageWith(ctx, s.Resolved, s.Target.Args, serverEnv(s.Target, full.Env), po, *pko)
	}
	if err != nil {
		return "failed: " + err.Error(), nil, nil
	}
	if !r.Reachable {
		return "unreachable (" + r.ErrorKind + ")", nil, nil
	}
	doc = probe.AppendToolsRecord(nil, id, r.Tools)
	err = label.NewLabeller().WithDefinitionHash(definitionHash()).Record(doc, func(t *label.ToolLabels) error {
		name := ""
		if t.Tool != nil {
			name = *t.Tool
		}
		st := scannedTool{Name: name, Definition: t.DefinitionSHA256, Classes: t.Classes}
		for _, p := range t.Properties {
			if cs := normative(p.Classes); len(cs) > 0 {
				st.Properties = append(st.Properties, scannedProperty{Name: p.Name, Where: p.Where, Classes: cs})
			}
		}
		tools = append(tools, st)
		return nil
	})
	if err != nil {
		return "failed: " + err.Error(), nil, nil
	}
	return "scanned: " + countTools(len(tools)), tools, doc
}

// normative keeps the ids of ids that are normative classes (a property's
// labels may hold buckets too).
func normative(ids []string) []string {
	var out []string
	for _, id := range ids {
		if r, ok := classify.Lookup(id); ok && r.Normative {
			out = append(out, id)
		}
	}
	return out
}

// scrubSecrets hides in text every env and header value of the server as
// resolved (and their words: a "Bearer TOKEN" quoted in part), as the
// listing hides them, and the resolved URL where variables made it differ
// from the URL as written.
func scrubSecrets(text string, raw, full agentconfig.Server) string {
	var secrets []string
	for _, m := range []map[string]string{full.Env, full.Headers} {
		for _, v := range m {
			secrets = append(secrets, v)
			secrets = append(secrets, strings.Fields(v)...)
		}
	}
	if full.URL != raw.URL {
		secrets = append(secrets, full.URL)
	}
	// Longest first, so that a value is hidden whole before its words.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, v := range secrets {
		if len(v) >= 4 { // a short word ("Bearer" aside) would hide too much
			text = strings.ReplaceAll(text, v, "<redacted>")
		}
	}
	return text
}

// serverEnv is the environment a configured package's server gets: the
// config's env for npx and uvx, which the client passes to the command
// that becomes the server; for docker run, only what its -e options pass
// to the container (the config's env is the docker command's).
func serverEnv(t agentconfig.Target, env map[string]string) map[string]string {
	if t.Kind != agentconfig.KindOCI {
		return env
	}
	return t.ContainerEnv(env, os.LookupEnv)
}
