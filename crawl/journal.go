package crawl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// JournalFile is the journal's name in the output folder.
const JournalFile = "crawl.journal.jsonl"

// ServerRecord is one line of servers.jsonl.gz. The fields from Transport
// to ToolsCapability are set whenever initialize succeeded, reachable or
// not: they are what the server said of itself.
type ServerRecord struct {
	ServerID        string          `json:"server_id"`
	URL             string          `json:"url"`
	Reachable       bool            `json:"reachable"`
	Transport       string          `json:"transport,omitempty"`
	ProtocolVersion string          `json:"protocol_version,omitempty"`
	ServerInfo      json.RawMessage `json:"server_info,omitempty"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	Instructions    *string         `json:"instructions,omitempty"`
	ToolsCapability *bool           `json:"tools_capability,omitempty"`
	ToolCount       int             `json:"tool_count"`
	ElapsedMS       *int64          `json:"elapsed_ms,omitempty"`
	ErrorKind       string          `json:"error_kind,omitempty"`
	Error           string          `json:"error,omitempty"`
	// ResourceMetadata is the protected resource metadata URL an
	// auth_required server named in its WWW-Authenticate challenge.
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	// Generation is how the protocol version was negotiated:
	// "stateless" (server/discover) or "session" (initialize).
	Generation string `json:"generation,omitempty"`
	// SupportedVersions are the revisions the server said it speaks (see
	// Result.SupportedVersions).
	SupportedVersions []string `json:"supported_versions,omitempty"`
	// ToolsTTLMs and ToolsCacheScope are the cache hints of the server's
	// tools/list answer.
	ToolsTTLMs      *int64 `json:"tools_ttl_ms,omitempty"`
	ToolsCacheScope string `json:"tools_cache_scope,omitempty"`
	// FailedStep names the step of an unreachable server that failed;
	// RPCError is the JSON-RPC error the server answered it with.
	FailedStep string          `json:"failed_step,omitempty"`
	RPCError   *probe.RPCError `json:"rpc_error,omitempty"`
	// StdoutSkippedLines counts the lines of a stdio server's output that
	// were left out as no message (a banner, say).
	StdoutSkippedLines int `json:"stdout_skipped_lines,omitempty"`
	// Runner, for a packaged server, says which runner ran it and what.
	Runner *probe.RunnerInfo `json:"runner,omitempty"`
	// Package is the coordinate of a packaged server; URL is then empty.
	Package string `json:"package,omitempty"`
}

// entry is one line of the journal: a finished candidate.
type entry struct {
	Server ServerRecord      `json:"server"`
	Tools  []json.RawMessage `json:"tools,omitempty"`
}

// span locates an entry's line in the journal.
type span struct {
	off, n    int64
	reachable bool
}

// journal is the append-only record of finished candidates. Each append is
// synced before the candidate counts as finished, so a crash loses at most
// the line being written; that torn line is cut off when the journal is
// opened again.
type journal struct {
	f    *os.File
	name string
	end  int64
	done map[string]span // server_id -> line
	buf  bytes.Buffer
	// header is the first line: the run that began the journal; nil for
	// a new journal (or one written before headers were).
	header *runHeader
}

// runHeader is the journal's first line: when the crawl whose probes it
// holds began, with which options and candidates. A resumed crawl must
// use the same, so that release.json tells the truth about every probe.
type runHeader struct {
	Started    string          `json:"started"`
	Options    release.Options `json:"options"`
	Candidates release.Source  `json:"candidates"`
}

// differs names in words how o, the journal's header, and h, this run's,
// differ: each flag with its value then and now, or the candidates; ""
// when they are the same.
func (h *runHeader) differs(o *runHeader) string {
	var d []string
	for _, f := range optionFlags {
		if then, now := f.value(o.Options), f.value(h.Options); then != now {
			d = append(d, fmt.Sprintf("%s %s then, %s now", f.flag, orNone(then), orNone(now)))
		}
	}
	if h.Candidates != o.Candidates {
		d = append(d, fmt.Sprintf("candidates %s then, %s now", describeSource(o.Candidates), describeSource(h.Candidates)))
	}
	return strings.Join(d, "; ")
}

// describeSource names a candidates source in words.
func describeSource(s release.Source) string {
	if s.Registry != "" {
		if s.UpdatedSince != "" {
			return fmt.Sprintf("the registry %s updated since %s", s.Registry, s.UpdatedSince)
		}
		return "the registry " + s.Registry
	}
	sum := s.SHA256
	if len(sum) > 12 {
		sum = sum[:12]
	}
	return fmt.Sprintf("the file %s (SHA-256 %s…)", s.File, sum)
}

// orNone is v, or "none" for a flag not given.
func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

// writeHeader writes the header of a new, empty journal.
func (j *journal) writeHeader(h *runHeader) error {
	b, err := json.Marshal(struct {
		Crawl *runHeader `json:"crawl"`
	}{h})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	j.end += int64(len(b))
	j.header = h
	return nil
}

// openJournal opens (or creates) the journal and replays it.
func openJournal(name string) (*journal, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f, name: name, done: map[string]span{}}
	if err := j.replay(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *journal) replay() error {
	br := bufio.NewReaderSize(j.f, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				// A torn last line: the append it belongs to never
				// finished, so its candidate is not finished either.
				if err := j.f.Truncate(off); err != nil {
					return fmt.Errorf("%s: cutting the torn last line: %w", j.name, err)
				}
			}
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		var e struct {
			Server struct {
				ServerID  string `json:"server_id"`
				Reachable bool   `json:"reachable"`
			} `json:"server"`
			Crawl *runHeader `json:"crawl"`
		}
		err = json.Unmarshal(line, &e)
		if err == nil && n == 1 && e.Crawl != nil {
			j.header = e.Crawl
			off += int64(len(line))
			continue
		}
		if err != nil || e.Server.ServerID == "" {
			return fmt.Errorf("%s:%d: not a journal entry (remove the file to crawl afresh)", j.name, n)
		}
		j.done[e.Server.ServerID] = span{off, int64(len(line)), e.Server.Reachable}
		off += int64(len(line))
	}
	j.end = off
	_, err := j.f.Seek(off, io.SeekStart)
	return err
}

// append writes e, syncs, and marks its candidate finished.
func (j *journal) append(e *entry) error {
	j.buf.Reset()
	enc := json.NewEncoder(&j.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if _, err := j.f.Write(j.buf.Bytes()); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	n := int64(j.buf.Len())
	j.done[e.Server.ServerID] = span{j.end, n, e.Server.Reachable}
	j.end += n
	return nil
}

// read returns the entry of a finished candidate.
func (j *journal) read(s span) (*entry, error) {
	b := make([]byte, s.n)
	if _, err := j.f.ReadAt(b, s.off); err != nil {
		return nil, fmt.Errorf("%s: %w", j.name, err)
	}
	e := new(entry)
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("%s: offset %d: %w", j.name, s.off, err)
	}
	return e, nil
}

func (j *journal) close() error { return j.f.Close() }
