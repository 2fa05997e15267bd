package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/outtext"
)

// Process is a program a runner prepared (an install's entry point in
// the sandbox, a local command) that the probe starts and speaks MCP to.
// It is the seam between the probe and the runners: the probe knows
// nothing of how or where the program runs.
type Process interface {
	// Start starts the program; it is waited for once it started.
	Start() error
	// Wait waits for the program, and all it started, to end.
	Wait() error
	// Kill ends the program and all it started.
	Kill()
	// MemoryExceeded says the program ended because it passed its
	// memory bound.
	MemoryExceeded() bool
}

// Start prepares the program of one probe, with its standard input,
// output and error connected to stdin, stdout and stderr, ending when ctx
// does; the probe then starts it.
type Start func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) Process

// stderrKeep bounds what is kept of a server's standard error for its
// record.
const stderrKeep = 2 << 10

// Command runs the program start returns and speaks MCP to it over
// its standard input and output, through the SDK's newline-delimited
// JSON transport, with the bounds of Probe: one deadline for the whole
// exchange, the byte cap and memory budget on everything it prints, the
// same capture of raw tools and the same error kinds, plus exited for a
// program that ends before the listing is done. The program is killed,
// with its whole process tree, when the listing is done or fails.
func (p *Prober) Command(ctx context.Context, start Start) (r Result) {
	ctx, cancel := withProbeDeadline(ctx, p.opt.Timeout)
	defer cancel()
	defer recoverClientFailure(&r)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return Result{ErrorKind: KindProtocol, Error: err.Error()}
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return Result{ErrorKind: KindProtocol, Error: err.Error()}
	}
	var stderr bytes.Buffer
	cmd := start(ctx, stdinR, stdoutW, &outtext.LimitedBuffer{B: &stderr, Max: stderrKeep})
	err = cmd.Start()
	// The child has its ends now; only it may hold them, so that its
	// exit is an end of file here.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return Result{Transport: TransportStdio, ErrorKind: KindExited, Error: "starting the sandbox: " + err.Error()}
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	var once sync.Once
	kill := func() { once.Do(cmd.Kill) }
	stopKill := context.AfterFunc(ctx, kill)
	defer func() {
		stopKill()
		kill()
		<-exited
		if cmd.MemoryExceeded() {
			r = Result{Transport: TransportStdio, ErrorKind: KindMemory, Error: waitErr.Error()}
			if s := strings.TrimSpace(stderr.String()); s != "" {
				r.Error += "; stderr: " + outtext.FirstLines(outtext.Steady(s), 5)
			}
		}
	}()

	hs := &httpState{ctx: ctx, p: p, mem: p.opt.Budget.newAccount()}
	out := &countedBody{rc: stdoutR, hs: hs, done: func() {}}
	lines := newMessageLines(out)
	r = p.session(ctx, hs, &mcp.IOTransport{Reader: readCloser{lines, out}, Writer: stdinW, MaxLineLength: p.maxEventSize()}, TransportStdio)
	out.Close()
	r.SkippedLines = lines.Skipped
	stdinW.Close()
	if r.Reachable || (r.ErrorKind != KindProtocol && r.ErrorKind != KindConnect) {
		// A kind decided where the failure was met stands.
		return r
	}
	// A connection that ended is most often the program's end: give it a
	// moment to be reaped, so that its exit is what the record says.
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-exited:
		r.ErrorKind = KindExited
		r.Error = fmt.Sprintf("%s; the server exited (%s)", r.Error, exitText(waitErr))
		if s := strings.TrimSpace(stderr.String()); s != "" {
			r.Error += "; stderr: " + outtext.FirstLines(outtext.Steady(s), 5)
		}
	case <-t.C:
	case <-ctx.Done():
	}
	return r
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// readCloser reads from one value and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
