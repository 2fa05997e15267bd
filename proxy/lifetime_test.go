package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// hangServer is a stdio server that never answers: it says its pid on
// stderr once the first line (the initialize) came, then reads until its
// stdin ends.
func hangServer(in io.Reader, errOut io.Writer) {
	br := bufio.NewReader(in)
	br.ReadString('\n')
	fmt.Fprintf(errOut, "%d\n", os.Getpid())
	io.Copy(io.Discard, br)
}

// firstLine sends the first line written to it on ch.
type firstLine struct {
	once sync.Once
	ch   chan string
}

func (f *firstLine) Write(b []byte) (int, error) {
	f.once.Do(func() { f.ch <- strings.TrimSpace(string(b)) })
	return len(b), nil
}

// TestShutdownDuringInitialize: a proxy shut down while a client's
// initialize waits for the upstream answers the client, and Serve returns
// only once every relay, upstream request and command has ended: the
// command has been waited for (its pid is gone), and no goroutine is left.
func TestShutdownDuringInitialize(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"http", "command"} {
		t.Run(kind, func(t *testing.T) {
			reached := make(chan string, 1)
			var up Upstream
			switch kind {
			case "http":
				// An upstream that holds the initialize until the proxy
				// gives up on it.
				up.URL = newLoopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost {
						http.Error(w, "no", http.StatusMethodNotAllowed)
						return
					}
					var m struct{ Method string }
					json.NewDecoder(r.Body).Decode(&m)
					if m.Method != "initialize" {
						http.Error(w, "no", http.StatusNotFound)
						return
					}
					reached <- ""
					<-r.Context().Done()
				}))
			case "command":
				up = Upstream{Command: []string{exe, "-test.run=^$"}, Env: append(os.Environ(), stdioServerEnv+"=hang"),
					Stderr: &firstLine{ch: reached}}
			}
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			p := newProxy(t, up, Policy{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- p.Serve(ctx, ln) }()
			answered := make(chan int, 1)
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			go func() {
				body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
				req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := client.Do(req)
				if err != nil {
					answered <- -1
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered <- resp.StatusCode
			}()
			pid := <-reached // the initialize waits upstream
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if code := <-answered; code < 400 {
				t.Errorf("the initialize cut by the shutdown was answered %d", code)
			}
			if pid != "" {
				n, _ := strconv.Atoi(pid)
				if err := syscall.Kill(n, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("the upstream command (pid %d) outlived Serve: %v", n, err)
				}
			}
			if n := p.sessions.count(); n != 0 {
				t.Errorf("%d sessions left", n)
			}
		})
	}
}

// readNotice closes returned when a Read of its reader has returned.
type readNotice struct {
	r        io.Reader
	once     sync.Once
	returned chan struct{}
}

func (n *readNotice) Read(b []byte) (int, error) {
	k, err := n.r.Read(b)
	n.once.Do(func() { close(n.returned) })
	return k, err
}

// TestServeStdioReaderNeverCloses: ServeStdio over a client that sends
// nothing and never closes its end returns on cancellation only once its
// reader has returned: closing a reader that is an io.Closer ends the
// Read; one that is not is waited for. No goroutine is left either way.
func TestServeStdioReaderNeverCloses(t *testing.T) {
	for _, closer := range []bool{true, false} {
		t.Run(fmt.Sprint("closer=", closer), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			srv := upstreamServer(nil, nil)
			p := newProxy(t, Upstream{Transport: func() mcp.Transport {
				st, ct := mcp.NewInMemoryTransports()
				go srv.Run(context.Background(), st)
				return ct
			}}, Policy{})
			pr, pw := io.Pipe()
			notice := &readNotice{r: pr, returned: make(chan struct{})}
			var r io.Reader = notice
			if closer {
				r = struct {
					io.Reader
					io.Closer
				}{notice, pr}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.ServeStdio(ctx, r, io.Discard) }()
			cancel()
			if !closer {
				// Nothing can end this Read but its writer.
				pw.Close()
			}
			if err := <-done; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
			select {
			case <-notice.returned:
			default:
				t.Error("ServeStdio returned while its Read was still blocked")
			}
			pw.Close()
		})
	}
}

// fakeUp is an upstream connection that hands what is written to it to
// the test, and answers nothing until closed.
type fakeUp struct {
	written chan jsonrpc.Message
	closed  chan struct{}
	once    sync.Once
}

func (f *fakeUp) SessionID() string { return "" }
func (f *fakeUp) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-f.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (f *fakeUp) Write(_ context.Context, m jsonrpc.Message) error {
	f.written <- m
	return nil
}
func (f *fakeUp) Close() error { f.once.Do(func() { close(f.closed) }); return nil }

// TestCancelledCallFreesID: a call the proxy makes whose context is
// cancelled leaves no pending entry and no waiter, tells the server, and
// its id can be used again at once.
func TestCancelledCallFreesID(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := newProxy(t, Upstream{URL: "http://127.0.0.1:1"}, Policy{})
	up := &fakeUp{written: make(chan jsonrpc.Message, 4), closed: make(chan struct{})}
	s := p.newSession(nil, up, func(context.Context, jsonrpc.Message) error { return nil }, nil)
	id, _ := jsonrpc.MakeID(float64(7))
	req := &jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(`{}`)}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.call(ctx, req)
		errc <- err
	}()
	if m := <-up.written; m.(*jsonrpc.Request).ID != id {
		t.Fatalf("upstream got %+v", m)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("call: %v", err)
	}
	// The notice is written before call returns.
	select {
	case m := <-up.written:
		if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "notifications/cancelled" || !strings.Contains(string(r.Params), `"requestId":7`) {
			t.Errorf("the server was told %+v", m)
		}
	default:
		t.Error("the server was not told of the cancellation")
	}
	s.mu.Lock()
	left := len(s.pending) + len(s.waiters)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d entries left behind", left)
	}
	// The same id, at once: admitted, not refused as in flight.
	if resp := s.admit(req); resp != nil {
		t.Errorf("the id is still refused: %+v", resp.Error)
	}
	up.Close()
}

// TestServeStdioBlockingStdin: ServeStdio over a file in blocking mode (a
// process's stdin, as a rule: a Read on it is not interrupted by Close)
// still returns on cancellation while its client sends nothing.
func TestServeStdioBlockingStdin(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	stdin := os.NewFile(uintptr(fds[0]), "stdin") // blocking, as a stdin pipe is
	writer := os.NewFile(uintptr(fds[1]), "client")
	defer writer.Close()
	srv := upstreamServer(nil, nil)
	p := newProxy(t, Upstream{Transport: func() mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		go srv.Run(context.Background(), st)
		return ct
	}}, Policy{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeStdio(ctx, stdin, io.Discard) }()
	cancel()
	guard := time.NewTimer(testTimeout)
	defer guard.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-guard.C:
		writer.Close() // let it go, and fail
		<-done
		t.Fatal("ServeStdio over a blocking stdin did not return on cancellation")
	}
}
