// Command atlas-reproduce reproduces, audits and extends the published census
// of MCP servers: it downloads and verifies the archived snapshot, classifies
// every tool input schema with the five gg: parameter risk classes, and
// reports its counts beside the published table.
//
// This package only parses flags and calls the packages that do the work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// command is one subcommand. Each lives in its own file; commandList below
// names them all in one place.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv carries the process's streams so that subcommands can be run from
// tests without touching os.Std*.
type cmdEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stderrIsTerminal decides whether progress bars are drawn.
	stderrIsTerminal bool
	// con is stderr as the bars and the logger share it (see console).
	con *console
}

// parsed makes a command's run function from its two halves: parse turns
// the command line into an options struct, run does the work from it, so
// that tests call run without flags.
func parsed[O any](parse func(*cmdEnv, []string) (O, error), run func(context.Context, *cmdEnv, O) error) func(context.Context, *cmdEnv, []string) error {
	return func(ctx context.Context, env *cmdEnv, args []string) error {
		o, err := parse(env, args)
		if err != nil {
			return err
		}
		return run(ctx, env, o)
	}
}

// commandList declares every subcommand in one place, rather than in
// init functions spread over the files.
var commandList = []command{
	{name: "bench", summary: "time decompression, the pipeline, the Python reference and the classifier on one census", run: runBench},
	{name: "candidates", summary: "read the MCP Registry's server list into a candidates file for crawl", run: runCandidates},
	{name: "classify", summary: "label MCP tool schemas (JSON Lines on stdin, or --schema FILE) with the gg: classes", run: runClassify},
	{name: "crawl", summary: "crawl live MCP servers, from a candidates file or the MCP Registry, into a census release", run: runCrawl},
	{name: "diff", summary: "compare two runs (two census releases, or ours and a reference): class totals, and tool by tool", run: runDiff},
	{name: "evaluate", summary: "estimate the classes' precision, recall and true counts, with 95% intervals, from a labelled sample", run: runEvaluate},
	{name: "fetch", summary: "download Zenodo records, resumable and MD5-verified", run: runFetch},
	{name: "history", summary: "add runs to a dataset of census releases (a hive partition each) and chart the classes over them", run: runHistory},
	{name: "inspect", summary: "show the record shapes and key paths of the first records of each census file", run: runInspect},
	{name: "label", summary: "serve a blind labelling page for a sample on loopback; answers go to labels-NAME.jsonl", run: runLabel},
	{name: "merge", summary: "combine the shards of a crawl (crawl --shard K/N) into one release, as one crawl of the whole list writes it", run: runMerge},
	{name: "proxy", summary: "relay an MCP server, adding the gg: labels to each listed tool's _meta (HTTP, or --stdio)", run: runProxy},
	{name: "publish", summary: "write a census release's deposit (zip, SHA256SUMS, published table, Zenodo metadata) and upload it to Zenodo", run: runPublish},
	{name: "reproduce", summary: "fetch the Zenodo snapshot, verify it, run the census and print report.md", run: runReproduce},
	{name: "run", summary: "verify, decode and classify a census; write report.json, report.md and Parquet", run: runRun},
	{name: "sample", summary: "draw a stratified, seeded sample of properties (or tools) from a census to label and evaluate", run: runSample},
	{name: "sandbox", summary: "check the sandbox of packaged servers on this machine: what is missing, what it allows", run: runSandbox},
	{name: "scan", summary: "label the tools of one live MCP server with the gg: classes, as classify does", run: runScan},
	{name: "serve", summary: "serve classify over HTTP (POST /v1/classify, /metrics) and MCP (/mcp, or --stdio) for gateways", run: runServe},
	{name: "synth", summary: "generate a synthetic census with its ground truth", run: runSynth},
	{name: "version", summary: "print the module version and VCS revision of this build", run: runVersion},
}

// commands is commandList by name.
var commands = func() map[string]command {
	m := make(map[string]command, len(commandList))
	for _, c := range commandList {
		if _, dup := m[c.name]; dup {
			panic("duplicate subcommand " + c.name)
		}
		m[c.name] = c
	}
	return m
}()

// usageError marks a bad invocation: exit status 2 (exitUsage).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// flagError is a flag that did not parse: a usage error, followed on
// stderr by the command's usage.
type flagError struct {
	usageError
	usage string
}

func (e flagError) Unwrap() error { return e.usageError }

// verdictError is a judgement that did not hold: a deposit not reproduced,
// a --fail-on or --fail-under policy met. It exits with exitVerdict, apart
// from failures, so that CI can tell "the check said no" from "the check
// could not run".
type verdictError struct{ msg string }

func (e verdictError) Error() string { return e.msg }

// Exit statuses, the one table for every command (docs/exit-codes.md): a
// verdict or policy not met, a bad invocation and a failure to do the work
// each have their own, so that a script can tell "the check said no" from
// "the check could not run". 130 and 143 follow the shell convention of
// 128+signal.
const (
	exitOK      = 0
	exitVerdict = 1
	exitFailure = 3
	exitUsage   = 2
	exitSIGINT  = 130
	exitSIGTERM = 143
)

func main() {
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, stderrIsTerminal: isTerminal(os.Stderr)}
	os.Exit(runMain(context.Background(), env, os.Args[1:], true))
}

// runMain dispatches to a subcommand and maps its outcome to an exit status.
// With handleSignals, SIGINT and SIGTERM cancel the context so that every
// stage stops and temporary outputs are removed before the process exits.
func runMain(parent context.Context, env *cmdEnv, args []string, handleSignals bool) int {
	if len(args) == 0 {
		printUsage(env.stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		// `help CMD` is `CMD --help`; help alone is the command list.
		if args[0] == "help" && len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				args = []string{args[1], "--help"}
			} else {
				fmt.Fprintf(env.stderr, "atlas-reproduce: unknown command %q\n\n", args[1])
				printUsage(env.stderr)
				return exitUsage
			}
		} else {
			printUsage(env.stdout)
			return exitOK
		}
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "atlas-reproduce: unknown command %q\n\n", args[0])
		printUsage(env.stderr)
		return exitUsage
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	if handleSignals {
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		go func() {
			select {
			case s := <-sigs:
				cancel(signalError{s.(syscall.Signal)})
			case <-ctx.Done():
			}
		}()
	}
	err := c.run(ctx, env, args[1:])
	writePeakRSS()
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var sig signalError
	if errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintf(env.stderr, "atlas-reproduce %s: interrupted by %v; no outputs were published\n", c.name, sig.sig)
		if sig.sig == syscall.SIGTERM {
			return exitSIGTERM
		}
		return exitSIGINT
	}
	fmt.Fprintf(env.stderr, "atlas-reproduce %s: %v\n", c.name, err)
	if fe, ok := err.(flagError); ok && fe.usage != "" {
		fmt.Fprintf(env.stderr, "\n%s", fe.usage)
	}
	return exitStatus(err)
}

// exitStatus is the exit status of a command that returned err, signals
// aside (runMain maps those): the one table of docs/exit-codes.md.
func exitStatus(err error) int {
	var ue usageError
	var ve verdictError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ve):
		return exitVerdict
	}
	return exitFailure
}

// signalError is the cancellation cause recorded when a signal arrives.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "interrupted by " + e.sig.String() }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: atlas-reproduce <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'atlas-reproduce help <command>' (or '<command> --help') for a command's flags.")
}

// newFlagSet returns a FlagSet whose --help prints the command's usage to
// standard output (so that `atlas-reproduce run --help | less` shows it)
// and whose errors are returned, not fatal. synopsis is the usage line
// after "atlas-reproduce", optionally followed by a blank line and notes;
// every flag it does not mention is added to the usage line from the flag
// set itself (see usageLine), so the line cannot fall behind the flags.
func newFlagSet(env *cmdEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package writes its own copy of a parse error and calls
	// Usage for -h and for errors alike; parseFlags decides instead where
	// the usage goes, so the package's own output is dropped.
	fs.SetOutput(&flagOutput{stdout: env.stdout, stderr: env.stderr})
	fs.Usage = func() {}
	usages.Store(fs, func(w io.Writer) { writeUsage(w, fs, synopsis) })
	return fs
}

// flagOutput is a FlagSet's output: it discards what the flag package
// writes and carries the streams parseFlags prints usage to.
type flagOutput struct{ stdout, stderr io.Writer }

func (flagOutput) Write(p []byte) (int, error) { return len(p), nil }

// usages maps each FlagSet made by newFlagSet to its usage printer.
var usages sync.Map // *flag.FlagSet -> func(io.Writer)

// printFlagUsage writes fs's usage to w (nothing for a FlagSet not made by
// newFlagSet).
func printFlagUsage(fs *flag.FlagSet, w io.Writer) {
	if u, ok := usages.Load(fs); ok {
		u.(func(io.Writer))(w)
	}
}

// writeUsage writes the usage line, the notes and the flags' defaults.
func writeUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	line, notes, _ := strings.Cut(synopsis, "\n\n")
	fmt.Fprintf(w, "usage: atlas-reproduce %s\n\n", usageLine(fs, line))
	if notes != "" {
		fmt.Fprintf(w, "%s\n\n", notes)
	}
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// usageLine is the synopsis line with every flag it does not mention added
// in brackets, where it says "[flags]" or else after the command name,
// wrapped to 80 columns.
func usageLine(fs *flag.FlagSet, line string) string {
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		if mentionsFlag(line, f.Name) {
			return
		}
		v, _ := flag.UnquoteUsage(f)
		switch v {
		case "":
			missing = append(missing, "[--"+f.Name+"]")
		case "int", "uint", "int64", "uint64":
			missing = append(missing, "[--"+f.Name+" N]")
		default:
			missing = append(missing, "[--"+f.Name+" "+strings.ToUpper(v)+"]")
		}
	})
	words := strings.Fields(line)
	at := 1
	for i, w := range words {
		if w == "[flags]" {
			words = append(words[:i], words[i+1:]...)
			at = i
			break
		}
	}
	at = min(at, len(words))
	words = append(words[:at], append(missing, words[at:]...)...)
	var b strings.Builder
	col := len("usage: atlas-reproduce ")
	for i, w := range words {
		if i > 0 {
			if col+1+len(w) > 80 {
				b.WriteString("\n       ")
				col = 7
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// mentionsFlag reports whether line names --name as a whole flag.
func mentionsFlag(line, name string) bool {
	tok := "--" + name
	for i := 0; ; {
		j := strings.Index(line[i:], tok)
		if j < 0 {
			return false
		}
		end := i + j + len(tok)
		if end == len(line) || strings.IndexByte(" ]|)=", line[end]) >= 0 {
			return true
		}
		i = end
	}
}

// parseFlags is the one rule every subcommand parses its arguments by: flags
// may stand before, between or after the positional arguments (`diff OLD NEW
// --json` as well as `diff --json OLD NEW`, `scan URL --format sarif`), as
// users of such tools expect; "--" ends the flags, so that an argument
// starting with "-" can still be given. The positional arguments are then
// fs.Args(), in order. A parse failure is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			o, _ := fs.Output().(*flagOutput)
			if errors.Is(err, flag.ErrHelp) {
				if o != nil {
					printFlagUsage(fs, o.stdout)
				}
				return err
			}
			var usage strings.Builder
			printFlagUsage(fs, &usage)
			return flagError{usageError{err.Error()}, usage.String()}
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(rest) == 0 || (len(consumed) > 0 && consumed[len(consumed)-1] == "--") {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Parsing "--" alone leaves exactly the positionals as fs.Args(); the
	// flags already set keep their values.
	return fs.Parse(append([]string{"--"}, positional...))
}

// parseFlagsOnly is parseFlags for a command that takes no positional
// arguments: the first one is a usage error that names it.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}
