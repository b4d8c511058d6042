package testrun

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/tools"
	"github.com/forge-lsp/forge-lsp/engine/trace"
)

// runSpec is one attempt of one case.
type runSpec struct {
	// TestFile is the test file the case is in.
	TestFile string
	Path     string
	Source   []byte
	Section  string
	Input    string
	Store    *store.Store
	Observer run.Observer
	// Dir is the test file's folder: the cassette stays inside its
	// repository (RepoRoot).
	Dir string
	// Trace receives the attempt's trace (session.Options.Trace).
	Trace io.Writer
}

// hostResult is how one run went.
type hostResult struct {
	output string
	// setup is a failure before the run started (nothing ran).
	setup error
	// runErr is the run's failure; closeErr the client's on Close (a
	// replay that left recorded exchanges unused, a cassette not written).
	runErr, closeErr error
	// noCassette is set when a replay had no cassette to use.
	noCassette bool
	// verdict is the judge's (expect.judge), judgeErr why there is none.
	verdict  *Verdict
	judgeErr error
}

// execute runs one case through the shared run set-up (engine/session),
// as `forge-lsp run` and the editor do: the prompt text, the section as an
// execute chain, the cassette or gateway, the workspace tools beside the
// prompt.
func execute(ctx context.Context, c *Case, s runSpec, opts Options) hostResult {
	var hr hostResult
	g, env, finish, err := gatewayFor(c, s.Dir, opts)
	if err != nil {
		hr.setup = err
		return hr
	}
	hr.noCassette = opts.Mode == Replay && g.Replay == ""
	obs := s.Observer
	spans := opts.Telemetry.StartRun(ctx, s.Path, strings.TrimSuffix(filepath.Base(s.Path), filepath.Ext(s.Path)),
		attribute.String(telemetry.AttrHost, "test"), attribute.String(telemetry.AttrTestCase, c.Name), attribute.String(telemetry.AttrTestFile, s.TestFile))
	if spans != nil {
		obs = trace.Multi(obs, spans)
		ctx = spans.Context(ctx)
		defer func() { spans.End(cmp.Or(hr.setup, hr.runErr)) }()
	}
	sess, err := session.Open(session.Options{
		Path: s.Path, Source: s.Source, Section: s.Section, Input: s.Input,
		Observer: obs, Store: s.Store, Gateway: g, Env: env, Trace: s.Trace,
		ExecutionPrefix: "test-", Limits: run.Limits{Timeout: caseTimeout(opts.Timeout)},
		LiveTools: opts.LiveTools, LiveToolsHint: opts.LiveToolsHint,
	})
	if err != nil {
		hr.setup = err
		finish(false)
		return hr
	}
	hr.output, hr.runErr = sess.Run(ctx)
	if j := c.Expect.Judge; j != nil && hr.runErr == nil {
		hr.verdict, hr.judgeErr = judge(ctx, sess, j, s.Input, hr.output, opts)
	}
	hr.closeErr = sess.Close()
	if err := finish(hr.closeErr == nil); err != nil && hr.closeErr == nil {
		hr.closeErr = err
	}
	return hr
}

// judge grades the output with the case's judge through the run's client.
func judge(ctx context.Context, sess *session.Session, j *Judge, input, output string, opts Options) (*Verdict, error) {
	read := opts.Read
	if read == nil {
		read = readPrompt
	}
	tmpl, err := judgeTemplate(j, read)
	if err != nil {
		return nil, err
	}
	client := sess.Client()
	if client == nil {
		return nil, errNoJudgeClient
	}
	return judgeRun(ctx, client, j, tmpl, input, output)
}

var errNoJudgeClient = errors.New("the judge needs a model and the case has no cassette")

// gatewayFor says where a case's model requests go, the environment the
// session may read (never the process's: a replay stays offline, a live
// run uses the runner's gateway), and a function that finishes the
// attempt (moving a recording into place when ok).
func gatewayFor(c *Case, dir string, opts Options) (session.Gateway, gateway.LookupFunc, func(ok bool) error, error) {
	noop := func(bool) error { return nil }
	if opts.Mode != Live {
		// Checked again here, not only by Validate: the cassette folder
		// may have become a link since (docs/security.md#writes).
		if err := fsread.Inside(fsread.RepoRoot(dir), c.Cassette, "cassette"); err != nil {
			return session.Gateway{}, nil, nil, &session.SetupError{Option: session.OptRecord, Err: err}
		}
	}
	env := func(k string) (string, bool) {
		if k == tools.WebFetchAllowPrivateEnv && opts.AllowPrivate {
			return "1", true
		}
		return "", false
	}
	live := session.Gateway{URL: opts.Gateway.BaseURL, Key: opts.Gateway.APIKey, File: opts.GatewayConfig}
	switch opts.Mode {
	case Record:
		if err := os.MkdirAll(filepath.Dir(c.Cassette), 0o755); err != nil {
			return session.Gateway{}, nil, nil, fmt.Errorf("cannot create the cassette folder: %v", err)
		}
		// A name of its own per attempt: cases sharing a cassette may
		// record at once (the runner lets one of them write at a time).
		tmp := fmt.Sprintf("%s.%s.recording", c.Cassette, randomHex())
		live.Record = tmp
		return live, env, func(ok bool) error {
			if !ok {
				os.Remove(tmp)
				return nil
			}
			return os.Rename(tmp, c.Cassette)
		}, nil
	case Live:
		return live, env, noop, nil
	}
	if _, err := os.Stat(c.Cassette); errors.Is(err, os.ErrNotExist) {
		// A case that never reaches a model needs no cassette; one that
		// does fails for want of a gateway, and the runner names --record.
		return session.Gateway{}, env, noop, nil
	}
	return session.Gateway{Replay: c.Cassette}, env, noop, nil
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// caseTimeout is Options.Timeout as the session's run limit.
func caseTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return session.DefaultCaseTimeout
	}
	return d // negative: session.NoTimeout
}
