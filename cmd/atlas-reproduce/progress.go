package main

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
)

// This file draws every progress bar of the command, and is where its log
// lines meet them. The packages report progress through callbacks and log
// through a *slog.Logger; the console draws the one bar of the moment on
// stderr and lifts it out of the way of each log line, which the command's
// one logger writes through it.

// console is the command's stderr, shared by its bar and its log lines.
type console struct {
	w   io.Writer
	mu  sync.Mutex
	bar *progressbar.ProgressBar // the bar drawn now, or nil
}

// Write writes p on its own line, clearing the bar first; the bar draws
// itself again on its next update.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar != nil {
		c.bar.Clear()
	}
	return c.w.Write(p)
}

// show makes bar the one drawn, ending the one before.
func (c *console) show(bar *progressbar.ProgressBar) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(false)
	c.bar = bar
}

// end takes the bar of the moment off the screen; with finish, it is drawn
// complete first.
func (c *console) end(finish bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(finish)
}

func (c *console) endLocked(finish bool) {
	if c.bar == nil {
		return
	}
	if finish {
		_ = c.bar.Finish()
	}
	_ = c.bar.Clear()
	_ = c.bar.Exit()
	c.bar = nil
}

// console returns the command's console on stderr.
func (env *cmdEnv) console() *console {
	if env.con == nil {
		env.con = &console{w: env.stderr}
	}
	return env.con
}

// logger is the command's logger: plain lines on stderr (lineHandler), at
// level and above, that lift the progress bar out of their way.
func (env *cmdEnv) logger(level slog.Level) *slog.Logger {
	return slog.New(newLineHandler(env.console(), level))
}

// drawBars says whether a command with the --progress flag progress draws
// bars: only on a terminal.
func (env *cmdEnv) drawBars(progress bool) bool { return progress && env.stderrIsTerminal }

// fileProgress draws a bar of bytes per file read, for pipeline.Options;
// nil when bars are off.
func (c *console) fileProgress(on bool) progress.Func {
	if !on {
		return nil
	}
	var (
		mu   sync.Mutex
		name string
		bar  *progressbar.ProgressBar
	)
	return func(r progress.Report) {
		mu.Lock()
		defer mu.Unlock()
		if bar == nil || r.Task != name {
			name = r.Task
			bar = progressbar.NewOptions64(r.Total,
				progressbar.OptionSetWriter(c.w),
				progressbar.OptionSetDescription(r.Task),
				progressbar.OptionShowBytes(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
			c.show(bar)
		}
		_ = bar.Set64(r.Done)
	}
}

// crawlProgress draws the servers finished with the reachable and
// unreachable counts, for crawl.Options; nil when bars are off.
func (c *console) crawlProgress(on bool) progress.Func {
	if !on {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(r progress.Report) {
		if bar == nil {
			bar = progressbar.NewOptions64(r.Total,
				progressbar.OptionSetWriter(c.w),
				progressbar.OptionSetDescription("crawl"),
				progressbar.OptionShowCount(),
				// No throttle: servers finish tens a second at most, and
				// every count should show.
				progressbar.OptionClearOnFinish(),
			)
			c.show(bar)
		}
		bar.Describe(fmt.Sprintf("crawl: %d reachable, %d unreachable", r.Done-r.Failed, r.Failed))
		_ = bar.Set64(r.Done)
	}
}

// toolsProgress draws the tools written of total, for synth.Options; nil
// when bars are off.
func (c *console) toolsProgress(on bool, total int) progress.Func {
	if !on {
		return nil
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(c.w),
		progressbar.OptionSetDescription("synth"),
		progressbar.OptionSetItsString("tools"),
		progressbar.OptionShowIts(),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetRenderBlankState(true),
	)
	c.show(bar)
	return func(r progress.Report) { _ = bar.Set64(r.Done) }
}

// fetchReporter draws one progress bar per file on a terminal, from the
// reports fetch tells (internal/progress); fetch logs the summary line of
// each file verified itself.
type fetchReporter struct {
	con  *console
	bars bool

	bar  *progressbar.ProgressBar
	task string
	// base is the length the file had when the bar was made: the bar counts
	// only this run's bytes, so that resumed bytes do not inflate the rate.
	base int64
}

func newFetchReporter(env *cmdEnv, progress bool) *fetchReporter {
	return &fetchReporter{con: env.console(), bars: env.drawBars(progress)}
}

// tell is the progress.Func fetch reports to.
func (r *fetchReporter) tell(p progress.Report) {
	final := p.Failed > 0 || p.Done == p.Total
	switch {
	case final && r.bar != nil && r.task == p.Task:
		if p.Failed == 0 {
			_ = r.bar.Set64(p.Done - r.base)
		}
		r.con.end(p.Failed == 0)
		r.bar = nil
	case final || !r.bars:
	case r.bar == nil || r.task != p.Task || p.Done < r.base:
		// A new file, or the server ignored a range request and the
		// file restarted.
		r.newBar(p)
	default:
		_ = r.bar.Set64(p.Done - r.base)
	}
}

func (r *fetchReporter) newBar(p progress.Report) {
	r.close()
	r.task, r.base = p.Task, p.Done
	desc := strconv.Quote(p.Task)
	if p.Done > 0 {
		desc = fmt.Sprintf("%q (resumed at %s)", p.Task, progress.Bytes(p.Done))
	}
	r.bar = progressbar.NewOptions64(p.Total-p.Done,
		progressbar.OptionSetWriter(r.con.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
		// A spinner ticker would be a goroutine; sizes are always known.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetRenderBlankState(true),
	)
	r.con.show(r.bar)
}

// close takes the bar off the screen.
func (r *fetchReporter) close() {
	if r.bar != nil {
		r.con.end(false)
		r.bar = nil
	}
}
