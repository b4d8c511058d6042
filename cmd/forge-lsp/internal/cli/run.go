package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/trace"
)

// Exit codes of `forge-lsp run`.
const (
	exitOK        = 0
	exitRunError  = 1
	exitUsage     = 2
	exitInterrupt = 130
)

// interruptGrace bounds how long Run waits for a cancelled run to finish
// before exiting anyway (the engine stops within milliseconds; this only
// guards against a stuck host call).
const interruptGrace = 2 * time.Second

const runUsage = `usage: forge-lsp run [flags] FILE [INPUT]

Runs a prompt and prints its result on stdout. INPUT is the run input
(Lua ` + "`args`" + `); "-" reads it from stdin, without one trailing
line ending. Errors go to stderr as
"path:line: message". Exit status: 0 success, 1 run error, 2 usage error
(including a FILE that is not a prompt), 130 interrupted.

flags:
`

// stdinInput is the run input read from stdin: without one trailing line
// ending ("\n" or "\r\n"), as `jq --raw-input` reads a line and shells
// drop it in $(...), so `echo hi | forge-lsp run p.md -` runs with "hi".
// Further line endings are the input's own.
func stdinInput(b []byte) string {
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	return s
}

// Run implements `forge-lsp run`.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runCmd(ctx, args, stdin, stdout, stderr)
}

type runFlags struct {
	section, storeDump, record, replay string
	gatewayConfig                      string
	trace, storeDir                    string
	verbose, liveTools, force          bool
	otel, otelContent                  bool
	timeout                            time.Duration
}

func parseRunArgs(args []string, stdout, stderr io.Writer) (f runFlags, pos []string, help, ok bool) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.section, "section", "", `run the H1, then only this section (e.g. "## Name"); see docs/language.md#running-one-section`)
	fs.StringVar(&f.storeDir, "store", "", "seed the store with the files under DIR (store paths relative to DIR)")
	fs.StringVar(&f.storeDump, "store-dump", "", "write the store to DIR after the run (also after a failed run); DIR must be new or empty unless --force")
	fs.BoolVar(&f.force, "force", false, "let --store-dump write into a folder that is not empty")
	fs.StringVar(&f.record, "record", "", "record every model exchange of the run to FILE (a cassette)")
	fs.StringVar(&f.replay, "replay", "", "run offline against a cassette recorded with --record")
	fs.StringVar(&f.gatewayConfig, "gateway-config", "", "serve the gateway file FILE in-process: models, routing and keys (docs/gateway.md; default $"+gateway.EnvConfig+")")
	fs.StringVar(&f.trace, "trace", "", "write a JSON-lines trace of the run to FILE (format: docs/debugging.md)")
	fs.BoolVar(&f.verbose, "verbose", false, "print a readable transcript of the run on stderr (sections, blocks, model rounds, tool calls, store writes)")
	fs.BoolVar(&f.liveTools, "live-tools", false, "with --replay, run workspace commands (forge-tools.json) and web_fetch on this machine when the cassette holds no recorded result (docs/security.md)")
	fs.BoolVar(&f.otel, "otel", false, "export the run's spans over OTLP (OTEL_EXPORTER_OTLP_* variables; default endpoint localhost:4318); see docs/observability.md")
	fs.BoolVar(&f.otelContent, "otel-content", false, "with OpenTelemetry export, put prompt and completion text on the spans")
	fs.DurationVar(&f.timeout, "timeout", session.DefaultTimeout, "fail the run with a Quota error after this wall-clock time (e.g. 30s, 5m; 0: no limit)")
	usage := func(w io.Writer) { printUsage(fs, runUsage, w) }
	// Flags may come anywhere; -h and --help print the usage on stdout.
	pos, help, ok = parseAnywhere(fs, args, runUsage, stdout, stderr)
	if !ok {
		return f, nil, help, false
	}
	if len(pos) < 1 || len(pos) > 2 {
		usage(stderr)
		return f, nil, false, false
	}
	if f.timeout < 0 {
		fmt.Fprintln(stderr, "forge-lsp run: --timeout must not be negative")
		return f, nil, false, false
	}
	if f.record != "" && f.replay != "" {
		fmt.Fprintln(stderr, "forge-lsp run: --record and --replay are exclusive")
		return f, nil, false, false
	}
	return f, pos, false, true
}

// stderrObserver prints Lua log lines on stderr; stdout carries only the
// result.
type stderrObserver struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *stderrObserver) SectionEnter(run.SectionEvent)  {}
func (o *stderrObserver) SectionExit(run.SectionEvent)   {}
func (o *stderrObserver) ModelRound(run.ModelRoundEvent) {}
func (o *stderrObserver) ToolCall(run.ToolCallEvent)     {}
func (o *stderrObserver) Log(ev run.LogEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.w, "Lua: %s\n", ev.Message)
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl, pos, help, ok := parseRunArgs(args, stdout, stderr)
	if help {
		return exitOK
	}
	if !ok {
		return exitUsage
	}
	path := pos[0]
	content, err := readRegular(path)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp run: %v\n", err)
		return exitUsage
	}
	input := ""
	if len(pos) == 2 {
		input = pos[1]
		if input == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				fmt.Fprintf(stderr, "forge-lsp run: reading stdin: %v\n", err)
				return exitUsage
			}
			input = stdinInput(b)
		}
	}
	tel, err := telemetry.Setup(ctx, telemetry.Options{Enabled: fl.otel, Content: fl.otelContent})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp run: --otel: %v\n", err)
		return exitUsage
	}
	defer tel.Shutdown()
	spans := tel.StartRun(context.Background(), path, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), attribute.String(telemetry.AttrHost, "run"))
	// --verbose's transcript prints the log lines itself.
	var obs []run.Observer
	if spans != nil {
		obs = append(obs, spans)
	}
	if fl.verbose {
		obs = append(obs, trace.NewTranscript(stderr, path))
	} else {
		obs = append(obs, &stderrObserver{w: stderr})
	}
	sess, err := session.Open(session.Options{
		StoreDir:  fl.storeDir,
		Path:      path,
		Source:    content,
		Section:   fl.section,
		Input:     input,
		Observer:  trace.Multi(obs...),
		Gateway:   session.Gateway{Replay: fl.replay, Record: fl.record, File: fl.gatewayConfig},
		Limits:    run.Limits{Timeout: session.UserTimeout(fl.timeout)},
		LiveTools: fl.liveTools, LiveToolsHint: "pass --live-tools to run them on this machine",
		TraceFile: fl.trace,
	})
	if err != nil {
		return reportOpenError(stderr, path, err)
	}

	type outcome struct {
		res string
		err error
	}
	runCtx, cancel := context.WithCancel(spans.Context(context.Background()))
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		o.res, o.err = sess.Run(runCtx)
		done <- o
	}()
	var o outcome
	interrupted := false
	select {
	case o = <-done:
	case <-ctx.Done():
		// Ctrl-C: cancel the run and wait for it (it stops within
		// milliseconds), bounded in case a host call is stuck.
		interrupted = true
		cancel()
		select {
		case o = <-done:
		case <-time.After(interruptGrace):
			fmt.Fprintf(stderr, "%s: interrupted by Ctrl-C (the run did not stop within %v)\n", path, interruptGrace)
			return exitInterrupt
		}
	}
	spans.End(o.err)
	code := exitOK
	if err := sess.TraceErr(); err != nil {
		fmt.Fprintf(stderr, "forge-lsp run: --trace: %v\n", err)
		code = exitRunError
	}
	if cerr := sess.Close(); cerr != nil {
		if fl.record != "" {
			fmt.Fprintf(stderr, "forge-lsp run: --record: %v\n", cerr)
			code = exitRunError
		} else {
			fmt.Fprintf(stderr, "forge-lsp run: warning: %v\n", cerr)
		}
	}
	if fl.storeDump != "" {
		if err := DumpStore(sess.Store(), fl.storeDump, fl.force); err != nil {
			fmt.Fprintf(stderr, "forge-lsp run: --store-dump: %v\n", err)
			code = exitRunError
		}
	}
	if interrupted {
		fmt.Fprintf(stderr, "%s: interrupted by Ctrl-C\n", path)
		return exitInterrupt
	}
	if o.err != nil {
		re := run.AsRunError(o.err)
		printRunError(stderr, path, re)
		if re.IsCancelled() {
			return exitInterrupt
		}
		return exitRunError
	}
	out := o.res
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		return exitRunError
	}
	return code
}

// printRunError prints a run error as "path:line: message (Kind error in
// <chunk>)", the location given once.
func printRunError(stderr io.Writer, path string, re *run.RunError) {
	fmt.Fprintln(stderr, re.Located(path))
}

// reportOpenError prints why a run could not start and returns the exit
// status: 1 for a prompt that does not parse, 2 for a bad flag or
// setting or a file that is not a prompt.
func reportOpenError(stderr io.Writer, path string, err error) int {
	var pe *session.ParseError
	var se *session.SetupError
	switch {
	case errors.As(err, &pe):
		for _, p := range pe.Problems {
			fmt.Fprintf(stderr, "%s:%d: %s\n", path, p.Line, p.Message)
		}
		return exitRunError
	case errors.As(err, &se):
		switch se.Option {
		case session.OptToolsFile, session.OptGateway:
			// The message names the file (and --gateway-config) itself.
			fmt.Fprintf(stderr, "forge-lsp run: %v\n", se.Err)
		default:
			fmt.Fprintf(stderr, "forge-lsp run: --%s: %v\n", se.Option, se.Err)
		}
		return exitUsage
	}
	printRunError(stderr, path, run.AsRunError(err))
	var np *session.NotAPromptError
	if errors.As(err, &np) {
		// As `check` does: a file that is not a prompt is a usage error.
		return exitUsage
	}
	return exitRunError
}

// DumpStore writes every store file under dir: directories 0700, files
// 0600, each file written to a temporary name and renamed into place, and
// no symbolic link is ever followed (an existing link on the way is an
// error). The store's paths were chosen by the prompt, or by the model
// through a tool (docs/security.md#writes), so: every write goes through
// an os.Root on dir and cannot leave it; a path with a .git segment is
// refused (a hook or a config there would run at the next git command);
// a dir that exists and is not empty is refused unless force; files are
// written in sorted path order, a failure does not stop the others, and
// the error lists every failure, one per line.
func DumpStore(st *store.Store, dir string, force bool) error {
	if fi, err := os.Lstat(dir); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; refusing to follow it", dir)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		if !force {
			if ents, err := os.ReadDir(dir); err != nil {
				return err
			} else if len(ents) > 0 {
				return fmt.Errorf("%s is not empty (it holds %s); dump into a new or empty folder, or pass --force to write into it", dir, ents[0].Name())
			}
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	} else {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	files := st.Snapshot()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var errs []error
	for _, p := range paths {
		err := store.ValidatePath(p)
		if err == nil && hasGitSegment(p) {
			err = errors.New("refusing to write into a .git folder")
		}
		if err == nil {
			err = dumpFile(root, p, files[p])
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(p)), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d file(s) not written:\n%w", len(errs), len(paths), errors.Join(errs...))
	}
	return nil
}

// hasGitSegment reports a path segment naming a git folder (in any case:
// some file systems ignore it).
func hasGitSegment(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if strings.EqualFold(s, ".git") {
			return true
		}
	}
	return false
}

func dumpFile(root *os.Root, p, data string) error {
	segs := strings.Split(p, "/")
	cur := ""
	for _, s := range segs[:len(segs)-1] {
		cur = pathJoin(cur, s)
		fi, err := root.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(cur, 0o700); err != nil {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; refusing to follow it", cur)
		case !fi.IsDir():
			return fmt.Errorf("%s exists and is not a directory", cur)
		}
	}
	if fi, err := root.Lstat(p); err == nil && fi.IsDir() {
		return fmt.Errorf("a directory is in the way")
	}
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	tmp := pathJoin(cur, "."+segs[len(segs)-1]+".tmp-"+hex.EncodeToString(rb[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := io.WriteString(f, data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// rename replaces a link at p itself; it never writes through it.
		werr = root.Rename(tmp, p)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}

func pathJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}
