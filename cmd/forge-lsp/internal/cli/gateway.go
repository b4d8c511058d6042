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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/httpguard"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
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
	g, err := gatewayd.New(cfg, gatewayd.Options{ProfilesDir: profilesDir, Profile: *profile, Env: env})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: %v\n", err)
		return exitUsage
	}
	logs := make(chan string, 256)
	go func() {
		for l := range logs {
			fmt.Fprintln(stderr, "forge-lsp gateway:", l)
		}
	}()
	defer close(logs)
	g.Log = func(s string) {
		select {
		case logs <- s:
		default: // a slow stderr never holds a request
		}
	}
	ln, err := net.Listen("tcp", cfg.Server.Bind)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp gateway serve: cannot listen on %s: %v\n", cfg.Server.Bind, err)
		return 1
	}
	var active atomic.Int64
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		active.Add(1)
		defer active.Add(-1)
		g.ServeHTTP(w, r)
	})
	// Body deadlines, no draining of an unauthenticated body, a cap on
	// connections (docs/security.md#network-servers).
	srv, gln := httpguard.Server(counted, ln, httpguard.Limits{})
	ln = gln
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
		for deadline := time.Now().Add(shutdownGrace); active.Load() > 0 && time.Now().Before(deadline); {
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
