package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/httpguard"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
)

const gatewayUsage = `usage: forge-lsp gateway serve [FILE | --profile NAME [--profiles-dir DIR]]

Serves the gateway file FILE (or the profile DIR/NAME.toml) as an
OpenAI-compatible model gateway: GET /health, GET /v1/models,
POST /v1/chat/completions, POST /v1/tools/web_search and the /admin
profile routes, on [server].bind with the bearer [server].api_key.
The file is checked before the socket is bound. Format: docs/gateway.md.

flags:
`

// shutdownGrace is how long requests in flight may finish after SIGINT or
// SIGTERM.
const shutdownGrace = 5 * time.Second

// Gateway implements `forge-lsp gateway serve`.
func Gateway(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return GatewayContext(ctx, args, os.LookupEnv, stdout, stderr, nil)
}

// GatewayContext is Gateway with a context, an environment and a function
// told the listening address once the gateway serves.
func GatewayContext(ctx context.Context, args []string, env gateway.LookupFunc, stdout, stderr io.Writer, ready func(addr string)) int {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, gatewayUsage)
			return 0
		}
		fmt.Fprint(stderr, "forge-lsp gateway: missing 'serve' subcommand\n\n"+gatewayUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("gateway serve", flag.ContinueOnError)
	profile := fs.String("profile", "", "serve the profile `NAME` (DIR/NAME.toml, with its includes)")
	dir := fs.String("profiles-dir", "", "the profiles directory `DIR` (default ~/.promptforge/profiles)")
	otelOn := fs.Bool("otel", false, "export a span per chat request over OTLP (OTEL_EXPORTER_OTLP_* variables); see docs/observability.md")
	pos, help, ok := parseAnywhere(fs, args[1:], gatewayUsage, stdout, stderr)
	if help {
		return 0
	}
	if !ok {
		return exitUsage
	}
	switch {
	case len(pos) > 1:
		fmt.Fprintf(stderr, "forge-lsp gateway serve: unexpected argument %q\n", pos[1])
		return exitUsage
	case *profile != "" && len(pos) == 1:
		fmt.Fprintln(stderr, "forge-lsp gateway serve: pass either --profile or a gateway file, not both")
		return exitUsage
	case *profile == "" && len(pos) == 0:
		fmt.Fprint(stderr, "forge-lsp gateway serve: provide --profile NAME or a gateway file\n\n"+gatewayUsage)
		return exitUsage
	}
	profilesDir := *dir
	if profilesDir == "" {
		profilesDir = gatewayd.DefaultProfilesDir()
	}
	var cfg *gatewayd.Config
	var err error
	if *profile != "" {
		cfg, err = gatewayd.LoadProfile(profilesDir, *profile, env)
	} else {
		cfg, err = gatewayd.Load(pos[0], env)
	}
	if err == nil && cfg.Server == nil {
		err = errors.New("the file has no [server] table: add bind and api_key to serve it (docs/gateway.md#the-file)")
	}
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: %v\n", err)
		return exitUsage
	}
	tel, err := telemetry.Setup(ctx, telemetry.Options{Enabled: *otelOn, Service: "forge-lsp-gateway"})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: --otel: %v\n", err)
		return exitUsage
	}
	defer tel.Shutdown()
	var tracer trace.Tracer
	if tel != nil {
		tracer = tel.Tracer()
	}
	g, err := gatewayd.New(cfg, gatewayd.Options{ProfilesDir: profilesDir, Profile: *profile, Env: env, Tracer: tracer})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: %v\n", err)
		return exitUsage
	}
	// One write per batch of lines, never one per request; a slow
	// stderr never holds a request.
	lines := gatewayd.NewLineLog(stderr, "forge-lsp gateway: ")
	defer lines.Close()
	g.Log = lines.Log
	ln, err := net.Listen("tcp", cfg.Server.Bind)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: cannot listen on %s: %v\n", cfg.Server.Bind, err)
		return 1
	}
	// Body deadlines, no draining of an unauthenticated body, a cap on
	// connections (docs/security.md#network-servers); the common chat
	// request is served by the gateway's lean path under the same bounds,
	// everything else by this server (docs/gateway.md#performance).
	hs, gln := httpguard.Server(g, ln, httpguard.Limits{})
	ln = gln
	srv := gatewayd.NewServer(g, hs, gatewayd.ServerLimits{
		HeaderTimeout: httpguard.DefaultHeaderTimeout,
		BodyTimeout:   httpguard.DefaultBodyTimeout,
		IdleTimeout:   httpguard.DefaultIdleTimeout,
	})
	models := fmt.Sprintf("%d models", len(cfg.Models))
	if len(cfg.Models) == 1 {
		models = "1 model"
	}
	g.Log(fmt.Sprintf("serving %s on http://%s/v1", models, ln.Addr()))
	if ready != nil {
		ready(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Stop accepting, let requests in flight finish (at most
		// shutdownGrace), then close every connection: a connection
		// opened but never used would hold Shutdown for seconds.
		go srv.Shutdown(context.Background())
		for deadline := time.Now().Add(shutdownGrace); srv.Active() > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		srv.Close() // a second close of the listener may fail; nothing to report
		err = nil
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: %v\n", err)
		return 1
	}
	return 0
}
