package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/labelpage"
	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
)

// labelOptions is what label's flags and argument say.
type labelOptions struct {
	sample string // the sample folder
	rater  string // NAME of labels-NAME.jsonl
	labels string // the labels file; default SAMPLE/labels-NAME.jsonl
	addr   string // loopback address to listen on
	// ready, when set, is told the page's URL once it listens (tests).
	ready func(url string)
}

var raterName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

var runLabel = parsed(parseLabel, runLabelOpts)

// parseLabel parses label's command line.
func parseLabel(env *cmdEnv, args []string) (labelOptions, error) {
	fs := newFlagSet(env, "label", synopsis("label"))
	rater := fs.String("rater", "", "the rater's `NAME` (letters, digits, '.', '_', '-'); the labels go to labels-NAME.jsonl")
	labels := fs.String("labels", "", "the labels `FILE` (default SAMPLE/labels-NAME.jsonl)")
	addr := fs.String("addr", "127.0.0.1:0", "loopback `ADDRESS` to listen on (port 0: any free port)")
	if err := parseFlags(fs, args); err != nil {
		return labelOptions{}, err
	}
	if fs.NArg() != 1 {
		return labelOptions{}, usageError{"label takes one sample folder"}
	}
	if !raterName.MatchString(*rater) {
		return labelOptions{}, usageError{"label needs --rater NAME (letters, digits, '.', '_', '-')"}
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return labelOptions{}, usageError{fmt.Sprintf("--addr %q: the page listens on a loopback address only", *addr)}
	}
	o := labelOptions{sample: fs.Arg(0), rater: *rater, labels: *labels, addr: *addr}
	if o.labels == "" {
		o.labels = filepath.Join(o.sample, "labels-"+o.rater+".jsonl")
	}
	return o, nil
}

// runLabelOpts serves the page until ctx ends.
func runLabelOpts(ctx context.Context, env *cmdEnv, o labelOptions) error {
	s, err := sample.Read(o.sample)
	if err != nil {
		return err
	}
	srv, err := labelpage.New(s, o.rater, o.labels)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	srv.Host = ln.Addr().String()
	url := "http://" + srv.Host + "/"
	fmt.Fprintf(env.stdout, "Label %d items as %s at %s (%d answered so far; answers go to %s)\n", len(s.Items), o.rater, url, srv.Answered(), o.labels)
	if o.ready != nil {
		o.ready(url)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintf(env.stdout, "%d of %d items answered\n", srv.Answered(), len(s.Items))
	return nil
}
