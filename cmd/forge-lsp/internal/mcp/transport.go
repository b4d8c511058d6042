package mcp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/httpguard"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gatewayd"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
)

const usage = `usage: forge-lsp mcp [--stdio | --http ADDR] [prompts.toml | DIR]

Serves a catalog of prompts to MCP clients (agent harnesses such as Claude
Code, Cursor and VS Code): list_prompts, run_prompt, check_run, need_prompt,
and the authoring tools check_prompt, lookup_docs and run_tests.

The argument is a prompts.toml (docs/mcp.md#configuration) or a folder,
served with the defaults (every *.md prompt under it; the gateway from
PROMPTFORGE_GATEWAY_URL and PROMPTFORGE_GATEWAY_API_KEY). Without one,
./prompts.toml is read.

--stdio speaks MCP on stdin/stdout (logs on stderr). Otherwise streamable
HTTP is served at http://ADDR/mcp (ADDR defaults to [server] bind,
127.0.0.1:9310), every request carrying "Authorization: Bearer TOKEN" with
the token in PROMPTFORGE_MCP_SERVER_API_KEY; GET /healthz needs no token.
prompts.toml may belong to a repository, so it cannot choose the gateway,
the token, a non-loopback bind or a foreign allowed host: those come from
the environment and these flags (docs/security.md#repository-files).

flags:
`

// Main implements `forge-lsp mcp`; SIGINT and SIGTERM stop the server.
func Main(args []string, version string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, version, stdin, stdout, stderr)
}

// serve is Main until ctx ends.
func serve(ctx context.Context, args []string, version string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stdio := fs.Bool("stdio", false, "speak MCP over stdin and stdout")
	httpAddr := fs.String("http", "", "serve streamable HTTP on `ADDR` (default: [server] bind)")
	gatewayFile := fs.String("gateway-config", "", "run prompts against the gateway file `FILE`, in-process (docs/gateway.md; default $"+gateway.EnvConfig+")")
	otelOn := fs.Bool("otel", false, "export each run's spans over OTLP (OTEL_EXPORTER_OTLP_* variables; default endpoint localhost:4318); see docs/observability.md")
	otelContent := fs.Bool("otel-content", false, "with OpenTelemetry export, put prompt and completion text on the spans")
	var allow hostList
	fs.Var(&allow, "allow-host", "also accept requests whose Host header is `HOST` (repeatable; needed for a non-loopback --http)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			// Asked-for help goes to stdout.
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 || (*stdio && *httpAddr != "") {
		fs.Usage()
		return 2
	}
	arg := "prompts.toml"
	if fs.NArg() == 1 {
		arg = fs.Arg(0)
	}
	env := LookupFunc(os.LookupEnv)
	if *gatewayFile != "" {
		// Only from the command line: prompts.toml may belong to a
		// repository, and a gateway file decides where keys are sent.
		env = func(k string) (string, bool) {
			if k == gateway.EnvConfig {
				return *gatewayFile, true
			}
			return os.LookupEnv(k)
		}
	}
	cfg, err := loadArg(arg, env)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp mcp: %v\n", err)
		return 2
	}
	cfg.Server.AllowedHosts = append(cfg.Server.AllowedHosts, allow...)
	// stdio binds no port and checks no token; a configured token is
	// still kept out of every result.
	opts := Options{Version: version, Log: stderr, Env: gateway.LookupFunc(env)}
	if *gatewayFile != "" {
		// Checked now, so that a broken file stops the server, not its
		// first run.
		if _, err := gatewayd.Load(*gatewayFile, os.LookupEnv); err != nil {
			fmt.Fprintf(stderr, "forge-lsp mcp: --gateway-config: %v\n", err)
			return 2
		}
	}
	tel, err := telemetry.Setup(ctx, telemetry.Options{Enabled: *otelOn, Content: *otelContent})
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp mcp: --otel: %v\n", err)
		return 2
	}
	defer tel.Shutdown()
	opts.Telemetry = tel
	srv, err := NewServer(cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp mcp: %v\n", srv.redactOr(err))
		return 1
	}
	if cfg.Server.Watch {
		go srv.Watch(ctx)
	}
	if *stdio {
		// Bad frames are answered before the SDK sees them: it ends the
		// session on the first one it cannot decode.
		out := &syncWriter{w: stdout}
		err = srv.MCP().Run(ctx, &sdk.IOTransport{Reader: filterFrames(stdin, out, MaxFrame), Writer: out, MaxLineLength: MaxFrame + 2})
	} else {
		addr := cfg.Server.Bind
		if *httpAddr != "" {
			addr = *httpAddr
		}
		err = srv.ServeHTTP(ctx, addr, func(a net.Addr) {
			srv.log.Info("serving MCP over streamable HTTP", "url", "http://"+a.String()+"/mcp")
		})
	}
	drain, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(drain)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "forge-lsp mcp: %v\n", srv.redact(err.Error()))
		return 1
	}
	return 0
}

// redactOr is redact for a server that may not exist yet.
func (s *Server) redactOr(err error) string {
	if s == nil {
		return err.Error()
	}
	return s.redact(err.Error())
}

// loadArg reads prompts.toml, or builds the defaults for a folder.
func loadArg(arg string, env LookupFunc) (*Config, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && arg == "prompts.toml" {
			return nil, errors.New("no prompts.toml here; name a prompts.toml or a folder of prompts (forge-lsp mcp -h)")
		}
		return nil, err
	}
	if fi.IsDir() {
		return FolderConfig(arg, env)
	}
	return LoadConfig(arg, env)
}

// hostList is a repeatable flag; a value may also list hosts separated by
// commas.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*h = append(*h, p)
		}
	}
	return nil
}

// ServeHTTP serves streamable HTTP on addr until ctx ends: MCP at /mcp
// behind the bearer token, a liveness probe at /healthz, and DNS-rebinding
// protection by the Host header. ready, when set, is called with the
// bound address.
func (s *Server) ServeHTTP(ctx context.Context, addr string, ready func(net.Addr)) error {
	h, err := s.HTTPHandler(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs, gln := httpguard.Server(h, ln, httpguard.Limits{})
	ln = gln
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	return nil
}

// HTTPHandler is the HTTP face of the server for a listener on bind. It
// refuses to serve without a bearer token, and on a non-loopback bind
// without [server] allowed_hosts.
func (s *Server) HTTPHandler(bind string) (http.Handler, error) {
	token := s.config().Server.APIKey
	if token == "" {
		return nil, fmt.Errorf("serving over HTTP needs a bearer token: set %s in the environment, or use --stdio", EnvAPIKey)
	}
	hosts, err := allowedHosts(bind, s.config().Server.AllowedHosts)
	if err != nil {
		return nil, err
	}
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, &sdk.StreamableHTTPOptions{
		// allowed_hosts below is the DNS-rebinding defence.
		DisableLocalhostProtection: true,
		// A client that goes away without ending its session frees it
		// after an hour with no request (longer than any call waits).
		SessionTimeout: max(time.Hour, 2*s.config().Server.ReplyDeadline),
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	want := []byte("Bearer " + token)
	calls := newCalls(mcpHandler)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			// The body is never read, and the connection not kept for
			// another try.
			w.Header().Set("Connection", "close")
			w.Header().Set("WWW-Authenticate", `Bearer realm="forge-lsp mcp"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		switch r.Method {
		case http.MethodPost:
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFrame))
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					w.Header().Set("Connection", "close")
					writeRPCError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the message is over the %d-byte limit; nothing of it was run. Send large inputs as input_file.", MaxFrame))
					return
				}
				http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			calls.serve(w, r, body)
		case http.MethodDelete:
			calls.deleteSession(w, r)
		default:
			mcpHandler.ServeHTTP(w, r)
		}
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, hosts) {
			http.Error(w, "host not allowed (start the server with --allow-host HOST)", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	}), nil
}

// writeRPCError answers an HTTP request with a JSON-RPC error of id null.
func writeRPCError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": jsonrpc.CodeInvalidRequest, "message": msg}})
	_, _ = w.Write(b)
}

// allowedHosts is the Host-header allow list: the configured one, or on
// a loopback bind localhost, 127.0.0.1 and ::1. A non-loopback bind must
// list its hosts.
func allowedHosts(bind string, configured []string) ([]string, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	host, _, err := net.SplitHostPort(bind)
	if err != nil {
		return nil, fmt.Errorf("bind %q is not HOST:PORT", bind)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return []string{"localhost", "127.0.0.1", "::1"}, nil
	}
	return nil, fmt.Errorf("bind %s is not a loopback address, so --allow-host must name the hosts clients use (DNS-rebinding protection)", bind)
}

// hostAllowed matches a Host header against the allow list; an entry
// without a port allows any port.
func hostAllowed(host string, allowed []string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	for _, a := range allowed {
		if strings.EqualFold(a, host) || strings.EqualFold(strings.Trim(a, "[]"), name) {
			return true
		}
	}
	return false
}
