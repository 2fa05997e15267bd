package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
)

// configFlag is --config: alone it means "the configs of this user's
// clients", --config=FILE names a file. It is a boolean flag to the flag
// package so that bare --config parses; `--config FILE` leaves FILE as an
// argument, which parseScan takes as the file.
type configFlag struct {
	set   bool
	files []string
}

func (c *configFlag) String() string { return strings.Join(c.files, ",") }

func (c *configFlag) Set(v string) error {
	c.set = true
	if v != "true" {
		c.files = append(c.files, v)
	}
	return nil
}

func (c *configFlag) IsBoolFlag() bool { return true }

// scanConfigOptions is `scan --config` / `scan --repo` as a test calls it.
type scanConfigOptions struct {
	// Files are named config files; Home (the user's, for the user-wide
	// files) and Repo (a repository's committed files) are searched.
	Files []string
	Home  string
	Repo  string
	JSON  bool
	// SARIF writes the findings as SARIF 2.1.0 (writeConfigSARIF).
	SARIF bool
	// List only lists; otherwise each server is scanned (see
	// scanConfigured) with Probe and Packages.
	List bool
	// NoLocal lists local commands without running them (--no-local).
	NoLocal bool
	// FailOn makes the verdict fail (exit 1) on these findings.
	FailOn failOn
	// Lock is the servers lock file (see configLock); Approve accepts
	// the changes found against it.
	Lock    string
	Approve bool
	// Suppressions is a suppressions file (readSuppressions), applied as
	// of Now (the clock in use, a fixed instant in tests).
	Suppressions string
	Now          time.Time
	Probe        probe.Options
	Packages     *runners.Options
}

// configServer is one listed server: where it is written and what runs it.
type configServer struct {
	agentconfig.Server
	// ID names the server in the lock and in SARIF fingerprints (lockID).
	ID       string             `json:"id"`
	Target   agentconfig.Target `json:"target"`
	Unpinned bool               `json:"unpinned,omitempty"`
	// Resolved is the coordinate an unpinned server's runner takes now,
	// as the registry answered when it was scanned.
	Resolved string `json:"resolved,omitempty"`
	// UnpinnedSuppressed is the suppression accepting an unpinned server.
	UnpinnedSuppressed *suppressedClass `json:"unpinned_suppressed,omitempty"`
	// NeedsConfiguration names the variables the environment lacks; a
	// server with any is not started and not counted as failed.
	NeedsConfiguration []string `json:"needs_configuration,omitempty"`
	// Scan is what scanning the server came to, Tools its labelled tools.
	Scan  string        `json:"scan,omitempty"`
	Tools []scannedTool `json:"tools,omitempty"`
	// Changes are the tools changed, renamed, added or removed since the
	// lock; ChangesApproved says --approve accepted them.
	Changes         []toolid.Change `json:"changes,omitempty"`
	ChangesApproved bool            `json:"changes_approved,omitempty"`
	// raw is the server as read, values unredacted, for the scan alone;
	// doc its tools/list result once scanned, for the lock.
	raw agentconfig.Server
	doc []byte
}

// configServers reads every config o names, in order, each server with its
// runner target and the variables the environment lacks.
func configServers(o scanConfigOptions, lookup func(string) (string, bool)) ([]configServer, error) {
	var locs []agentconfig.Location
	for _, f := range o.Files {
		c, ok := agentconfig.Guess(f)
		if !ok {
			return nil, usageError{fmt.Sprintf("--config %s: cannot tell which client's format the file is in from its name", f)}
		}
		locs = append(locs, agentconfig.Location{Client: c, Path: f, Scope: "file"})
	}
	if o.Home != "" || o.Repo != "" {
		found, err := agentconfig.Discover(o.Home, o.Repo)
		if err != nil {
			return nil, err
		}
		locs = append(locs, found...)
	}
	var out []configServer
	for _, l := range locs {
		cfg, err := agentconfig.ReadFile(l.Client, l.Path)
		if err != nil {
			return nil, err
		}
		for _, s := range cfg.Servers {
			_, missing := agentconfig.Resolve(s, lookup)
			t := agentconfig.TargetOf(s)
			shown := s
			shown.Env, shown.Headers = redacted(s.Env), redacted(s.Headers)
			out = append(out, configServer{Server: shown, ID: lockID(o, s.File, s.Name), Target: t, Unpinned: !t.Pinned(), NeedsConfiguration: missing, raw: s})
		}
	}
	// Two servers of one name in one file (Claude Code's projects) keep
	// apart in the lock by their order.
	seen := map[string]int{}
	for i := range out {
		if n := seen[out[i].ID]; n > 0 {
			seen[out[i].ID]++
			out[i].ID += fmt.Sprintf("#%d", n)
		} else {
			seen[out[i].ID] = 1
		}
	}
	return out, nil
}

// runScanConfig lists the configured servers, as a table or JSON Lines.
// Values are printed as written in the config, never resolved: a
// substituted secret must not reach the terminal or a CI log.
func runScanConfig(ctx context.Context, env *cmdEnv, o scanConfigOptions) error {
	switch {
	case o.Lock != "" && o.List:
		return usageError{"--lock pins the tools of the servers scanned; --list starts none"}
	case o.Approve && o.Lock == "":
		return usageError{"--approve accepts the changes against a --lock FILE"}
	case o.FailOn.changed && o.Lock == "":
		return usageError{"--fail-on changed needs a --lock FILE to compare with"}
	}
	var sups []suppression
	if o.Suppressions != "" {
		var err error
		if sups, err = readSuppressions(o.Suppressions); err != nil {
			return err
		}
	}
	servers, err := configServers(o, os.LookupEnv)
	if err != nil {
		return err
	}
	// The lock is read before any server is asked: one that can be
	// neither read nor written fails at once.
	var pinned *toolid.ServersLock
	if o.Lock != "" {
		if pinned, err = toolid.ReadPinnedServers(o.Lock); err != nil {
			return err
		}
	}
	if !o.List {
		local := &localRunner{Skip: o.NoLocal, Repo: o.Repo, Home: o.Home}
		if local.Home == "" {
			local.Home, _ = os.UserHomeDir()
		}
		if o.Packages != nil {
			local.Limits = o.Packages.Limits
		}
		for i := range servers {
			servers[i].Scan, servers[i].Tools, servers[i].doc = scanConfigured(ctx, &servers[i], os.LookupEnv, o.Probe, o.Packages, local)
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
	}
	if o.Lock != "" {
		if _, err := configLock(env, o, pinned, servers); err != nil {
			return err
		}
		for i := range servers {
			servers[i].ChangesApproved = o.Approve && len(servers[i].Changes) > 0
		}
	}
	suppress(sups, servers, o.Now, env.stderr)
	if o.SARIF {
		if err := writeConfigSARIF(env.stdout, servers); err != nil {
			return err
		}
		return o.FailOn.verdict(servers)
	}
	if o.JSON {
		enc := json.NewEncoder(env.stdout)
		for _, s := range servers {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return o.FailOn.verdict(servers)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tSERVER\tRUNNER\tTARGET\tSTATE\tWHERE")
	for _, s := range servers {
		target := s.Target.Coordinate()
		switch {
		case s.Target.Kind == agentconfig.KindRemote:
			target = s.URL
		case s.Target.Kind == agentconfig.KindLocal:
			target = strings.Join(append([]string{s.Command}, s.Args...), " ")
		case target == "" && s.Resolved != "":
			target = s.Target.Package + " (unpinned; now " + s.Resolved + ")"
		case target == "":
			target = s.Target.Package + " (unpinned)"
		}
		state := "ready"
		if s.Scan != "" {
			state = s.Scan
		}
		switch {
		case s.Disabled:
			state = "disabled"
		case len(s.NeedsConfiguration) > 0:
			state = "needs " + strings.Join(s.NeedsConfiguration, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s:%d\n", s.Client, termtext.Safe(s.Name), s.Target.Kind,
			termtext.Safe(target), termtext.Safe(state), termtext.Safe(s.File), s.Line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeFindings(env.stdout, servers); err != nil {
		return err
	}
	if len(servers) == 0 {
		fmt.Fprintln(env.stderr, "scan: no MCP server configured in the files searched")
	}
	return o.FailOn.verdict(servers)
}

// redacted keeps the names of m and hides its values, unless a value is
// only variable references: a token written into a config file must not be
// copied into a CI log by the tool that flags it.
func redacted(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if agentconfig.OnlyVariables(v) {
			out[k] = v
		} else {
			out[k] = "<redacted>"
		}
	}
	return out
}

// writeFindings lists each finding under the servers' table: the classes
// of each tool, unpinned servers and the changes since the lock, each open
// or with the suppression or approval that accepts it.
func writeFindings(w io.Writer, servers []configServer) error {
	type row struct{ server, tool, finding, status, where string }
	var rows []row
	for _, s := range servers {
		where := fmt.Sprintf("%s:%d", s.File, s.Line)
		if s.Unpinned && !s.Disabled {
			st := "open"
			if a := s.UnpinnedSuppressed; a != nil {
				st = suppressedStatus(*a)
			}
			rows = append(rows, row{s.Name, "", "unpinned", st, where})
		}
		for _, t := range s.Tools {
			for _, c := range t.Classes {
				rows = append(rows, row{s.Name, t.Name, c, "open", where})
			}
			for _, a := range t.Suppressed {
				rows = append(rows, row{s.Name, t.Name, a.Class, suppressedStatus(a), where})
			}
		}
		for _, c := range s.Changes {
			st := "open"
			if s.ChangesApproved {
				st = "approved"
			}
			rows = append(rows, row{s.Name, toolid.ToolName(c.Tool()), c.Kind.String(), st, where})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSERVER\tTOOL\tFINDING\tSTATUS\tWHERE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Safe(r.server), termtext.Safe(r.tool), r.finding, termtext.Safe(r.status), termtext.Safe(r.where))
	}
	return tw.Flush()
}

// suppressedStatus is how the table shows an accepted finding.
func suppressedStatus(a suppressedClass) string {
	s := "suppressed (" + a.At
	if a.Expires != "" {
		s += ", until " + a.Expires
	}
	return s + "): " + a.Reason
}
