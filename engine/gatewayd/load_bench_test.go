package gatewayd

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	loadDuration = flag.Duration("load-duration", 3*time.Second, "how long each wrk run of BenchmarkGatewayLoad lasts")
	loadNetHTTP  = flag.Bool("load-nethttp", false, "BenchmarkGatewayLoad also measures the gateway served by net/http alone (nethttp-* metrics)")
	loadRelay    = flag.Bool("load-relay", false, "BenchmarkGatewayLoad also measures a bare TCP relay to the endpoint in the gateway's process, the floor of any proxy (relay-* metrics)")
	loadInProc   = flag.Bool("load-inprocess", false, "BenchmarkGatewayLoad also measures the gateway served in the benchmark's own process, beside the endpoint (inproc-* metrics; no CPU figures of its own)")
	loadRounds   = flag.Int("load-rounds", 3, "how many rounds (the endpoint alone, then through the gateway) BenchmarkGatewayLoad runs per connection count")
	// loadGatewayProcs is GOMAXPROCS of BenchmarkGatewayLoad's gateway
	// process (0: the runtime's default).
	loadGatewayProcs = flag.Int("load-gw-procs", 0, "GOMAXPROCS of BenchmarkGatewayLoad's gateway process (0: Go's default)")
)

// chatBody is the chat request of the load benchmarks: a short
// two-message conversation, as an editor or an agent sends.
const loadRequest = `{"model":"%s","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say something short about the weather today."}],"temperature":0.2,"max_tokens":64}`

const loadReply = `{"id":"c","object":"chat.completion","created":1,"model":"gpt-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"a short reply of a few words"}}],"usage":{"prompt_tokens":30,"completion_tokens":8,"total_tokens":38}}`

// BenchmarkGatewayLoad measures what `gateway serve` adds under load:
// wrk (a separate process) drives a trivial scripted endpoint directly,
// then through the gateway, at 1, 16 and 64 connections, in the same run.
// It reports the endpoint's and the gateway's p50 and p99, what the
// gateway adds to the p50, and the gateway's throughput as a fraction of the
// endpoint's (docs/gateway.md#performance), each the median of
// -load-rounds rounds (default 3) of one run each way, the order
// alternating. Needs wrk on PATH (Debian: apt-get install wrk). Run with
// -benchtime 1x; -load-duration sets each wrk run's length. The gateway
// runs in its own process (this test binary, started again), served as
// `gateway serve` serves it: the lean path, net/http behind it, the log
// written to a file; -load-gw-procs sets its GOMAXPROCS. The endpoint is
// served by this process, which does nothing else meanwhile, so each of
// the three processes' CPU time per request is measured on its own.
func BenchmarkGatewayLoad(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Fatal("BenchmarkGatewayLoad drives the servers with wrk in its own process: install it (Debian: apt-get install wrk)")
	}
	reply := []byte(loadReply)
	endpoint := serveLoopback(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := getBuffer()
		buf.ReadFrom(r.Body)
		putBuffer(buf)
		w.Header()["Content-Type"] = jsonContentType
		w.Write(reply)
	}))
	dir := b.TempDir()
	gwp := startLoadGateway(b, write(b, dir, "gw.toml", fileFor(endpoint, "")), filepath.Join(dir, "gateway.log"))
	// gw is the gateway as `gateway serve` serves it. With -load-nethttp,
	// the same gateway served by net/http alone (the path every request
	// took before the lean path) is measured in the same rounds; with
	// -load-relay, a relay that passes each request and answer through
	// without reading them (relayLockStep), in the same process: the
	// floor of what any proxy in front of the endpoint costs.
	gw := gwp.lean
	// inProcess: served by this process, whose CPU is then the
	// endpoint's and the gateway's together.
	type extra struct {
		prefix, base string
		inProcess    bool
	}
	var extras []extra
	if *loadNetHTTP {
		extras = append(extras, extra{"nethttp-", gwp.plain, false})
	}
	if *loadRelay {
		extras = append(extras, extra{"relay-", gwp.relay, false})
	}
	if *loadInProc {
		// The same gateway in this process: a hop between two
		// goroutines of one process can be picked up by the thread that
		// made it, while one between processes wakes the other process.
		extras = append(extras, extra{"inproc-", serveLoadInProcess(b, filepath.Join(dir, "gw.toml"), filepath.Join(dir, "inproc.log")), true})
	}
	script := func(name, model, key string) string {
		body := strconv.Quote(fmt.Sprintf(loadRequest, model))
		return write(b, dir, name, fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %s\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer %s\"\n", body, key))
	}
	direct := script("direct.lua", "gpt-mini", backendKey)
	via := script("via.lua", "fast", serverKey)
	for _, conns := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			run := func(base, lua string) wrkResult {
				cpu0, g0 := processCPU(), gwp.use()
				threads := min(conns, 2)
				cmd := exec.Command(wrk, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
					"-d", fmt.Sprintf("%ds", max(1, int(loadDuration.Seconds()))), "--latency", "-s", lua, base+"/v1/chat/completions")
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("wrk: %v\n%s", err, out)
				}
				g1 := gwp.use()
				r, err := parseWrk(out)
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				n := r.rps * float64(max(1, int(loadDuration.Seconds())))
				r.cpu = float64((processCPU() - cpu0).Microseconds()) / n
				r.gwCPU = float64((g1.cpu - g0.cpu).Microseconds()) / n
				r.gwSwitches = float64(g1.switches-g0.switches) / n
				r.wrkCPU = float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Microseconds()) / n
				return r
			}
			// Warm both paths (connection pools, the scheduler), then
			// measure the endpoint alone and through the gateway in
			// rounds, the order alternating, so that other work on the
			// machine falls on both alike; each figure is the median
			// over the rounds.
			saved := *loadDuration
			*loadDuration = time.Second
			run(endpoint, direct)
			run(gw, via)
			for _, x := range extras {
				run(x.base, via)
			}
			*loadDuration = saved
			var ds, vs []wrkResult
			xs := make([][]wrkResult, len(extras))
			for i := range *loadRounds {
				if i%2 == 0 {
					ds = append(ds, run(endpoint, direct))
					vs = append(vs, run(gw, via))
				} else {
					vs = append(vs, run(gw, via))
					ds = append(ds, run(endpoint, direct))
				}
				for j, x := range extras {
					xs[j] = append(xs[j], run(x.base, via))
				}
			}
			pairOf := func(vs []wrkResult, unit string, f func(d, v wrkResult) float64) float64 {
				x := make([]float64, len(ds))
				for i := range ds {
					x[i] = f(ds[i], vs[i])
				}
				b.Logf("%s per round: %.3g", unit, x)
				return median(x)
			}
			// pair reports f of each round's pair for the gateway and each
			// extra path; cpu: a CPU figure, which a path in this process
			// does not have on its own.
			pair := func(unit string, cpu bool, f func(d, v wrkResult) float64) {
				b.ReportMetric(pairOf(vs, unit, f), unit)
				for j, x := range extras {
					if !cpu || !x.inProcess {
						b.ReportMetric(pairOf(xs[j], x.prefix+unit, f), x.prefix+unit)
					}
				}
			}
			one := func(unit string, cpu bool, f func(v wrkResult) float64) {
				pair(unit, cpu, func(_, v wrkResult) float64 { return f(v) })
			}
			b.ReportMetric(medianOf(ds, func(r wrkResult) float64 { return r.p50 }), "direct-p50-µs")
			b.ReportMetric(medianOf(vs, func(r wrkResult) float64 { return r.p50 }), "served-p50-µs")
			pair("added-p50-µs", false, func(d, v wrkResult) float64 { return v.p50 - d.p50 })
			// The p99s side by side, not their difference: the p99 of
			// one run minus that of another is no request's added
			// latency, and at 16 and 64 connections, where a request's
			// latency is mostly its wait behind the others, the slower
			// server's tail can be the shorter.
			b.ReportMetric(medianOf(ds, func(r wrkResult) float64 { return r.p99 }), "direct-p99-µs")
			one("served-p99-µs", false, func(v wrkResult) float64 { return v.p99 })
			b.ReportMetric(medianOf(ds, func(r wrkResult) float64 { return r.rps }), "direct-req/s")
			b.ReportMetric(medianOf(vs, func(r wrkResult) float64 { return r.rps }), "served-req/s")
			pair("throughput-ratio", false, func(d, v wrkResult) float64 { return v.rps / d.rps })
			// CPU time per request of each process: the gateway's own
			// (its process), the endpoint's alone and behind the gateway
			// (a server that is less busy pays more per request: it
			// sleeps and wakes more often), and wrk's.
			b.ReportMetric(medianOf(ds, func(r wrkResult) float64 { return r.cpu }), "endpoint-cpu-µs/req")
			b.ReportMetric(medianOf(ds, func(r wrkResult) float64 { return r.wrkCPU }), "wrk-cpu-µs/req")
			if gwp.measured {
				one("gateway-cpu-µs/req", true, func(v wrkResult) float64 { return v.gwCPU })
				one("gateway-switches/req", true, func(v wrkResult) float64 { return v.gwSwitches })
			}
			one("endpoint-behind-cpu-µs/req", true, func(v wrkResult) float64 { return v.cpu })
			one("wrk-behind-cpu-µs/req", false, func(v wrkResult) float64 { return v.wrkCPU })
			// The throughput ratio the CPU costs allow when the three
			// processes share the cores and keep them busy: the CPU a
			// request costs directly over what it costs through the
			// gateway.
			if gwp.measured {
				pair("cpu-bound-ratio", true, func(d, v wrkResult) float64 { return (d.wrkCPU + d.cpu) / (v.wrkCPU + v.cpu + v.gwCPU) })
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// medianOf is the median of f over rs.
func medianOf(rs []wrkResult, f func(wrkResult) float64) float64 {
	x := make([]float64, len(rs))
	for i, r := range rs {
		x[i] = f(r)
	}
	return median(x)
}

// loadGatewayEnv names the gateway file a started test binary serves
// as BenchmarkGatewayLoad's gateway process (see TestMain).
const loadGatewayEnv = "GATEWAYD_LOAD_SERVE"

func TestMain(m *testing.M) {
	if file := os.Getenv(loadGatewayEnv); file != "" {
		os.Exit(serveLoadGateway(file, os.Getenv(loadGatewayEnv+"_LOG")))
	}
	os.Exit(m.Run())
}

// serveLoadGateway serves the gateway file as `gateway serve` does (the
// lean path, net/http behind it, the log written in batches to logPath)
// and, on other loopback ports, the same gateway by net/http alone, the
// bare relay; it prints the three base URLs on one line and exits when
// its standard input closes.
func serveLoadGateway(file, logPath string) int {
	c, err := Load(file, noEnv)
	if err == nil && logPath == "" {
		err = errors.New("no log file")
	}
	var g *Gateway
	if err == nil {
		g, err = New(c, Options{})
	}
	var logFile *os.File
	if err == nil {
		logFile, err = os.Create(logPath)
	}
	var lean, plain, relay net.Listener
	if err == nil {
		lean, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err == nil {
		plain, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err == nil {
		relay, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lines := NewLineLog(logFile, "forge-lsp gateway: ")
	g.Log = lines.Log
	go NewServer(g, &http.Server{ReadHeaderTimeout: 10 * time.Second}, ServerLimits{}).Serve(lean)
	go (&http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}).Serve(plain)
	go relayLockStep(relay, c.Endpoints[0].BaseURL)
	fmt.Printf("http://%s http://%s http://%s\n", lean.Addr(), plain.Addr(), relay.Addr())
	io.Copy(io.Discard, os.Stdin)
	lines.Close()
	logFile.Close()
	return 0
}

// serveLoadInProcess serves the gateway file in this process as
// serveLoadGateway does, until the benchmark ends, and returns its base
// URL.
func serveLoadInProcess(b *testing.B, file, logPath string) string {
	c, err := Load(file, noEnv)
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(c, Options{})
	if err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	lines := NewLineLog(logFile, "forge-lsp gateway: ")
	g.Log = lines.Log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := NewServer(g, &http.Server{ReadHeaderTimeout: 10 * time.Second}, ServerLimits{})
	go srv.Serve(ln)
	b.Cleanup(func() {
		srv.Close()
		lines.Close()
		logFile.Close()
	})
	return "http://" + ln.Addr().String()
}

// relayLockStep serves ln as the floor of a proxy in front of the
// endpoint at base: each connection gets its own connection to the
// endpoint, and each read from one side is written to the other, in lock
// step (a request, then its answer), without reading the bytes: the
// system calls and scheduling any proxy pays, and nothing else. It reads
// and writes as the lean path does (rawIO), and relays only callers that
// send a request and wait for its answer, as wrk does.
func relayLockStep(ln net.Listener, base string) {
	u, err := url.Parse(base)
	if err != nil {
		return
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", u.Host)
			if err != nil {
				return
			}
			defer up.Close()
			// Read and written as the lean path reads and writes (rawIO).
			var cio, uio rawIO
			cio.bind()
			cio.reset(c)
			uio.bind()
			uio.reset(up)
			buf := make([]byte, 16<<10)
			for {
				n, err := cio.Read(buf)
				if err == nil {
					_, err = uio.Write(buf[:n])
				}
				if err == nil {
					n, err = uio.Read(buf)
				}
				if err == nil {
					_, err = cio.Write(buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// loadGateway is BenchmarkGatewayLoad's gateway process.
type loadGateway struct {
	lean, plain, relay string
	pid                int
	// measured is whether the process's CPU time can be read (Linux).
	measured bool
}

// gatewayUse is the gateway process's CPU time and context switches so far.
type gatewayUse struct {
	cpu      time.Duration
	switches int64
}

// startLoadGateway starts this test binary again as the gateway process
// serving file, with GOMAXPROCS from -load-gw-procs, until the benchmark
// ends.
func startLoadGateway(b *testing.B, file, logPath string) *loadGateway {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), loadGatewayEnv+"="+file, loadGatewayEnv+"_LOG="+logPath)
	if *loadGatewayProcs > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", *loadGatewayProcs))
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addrs := strings.Fields(line)
	if err != nil || len(addrs) != 3 {
		b.Fatalf("the gateway process did not start: %q %v", line, err)
	}
	p := &loadGateway{lean: addrs[0], plain: addrs[1], relay: addrs[2], pid: cmd.Process.Pid}
	_, err = readUse(p.pid)
	p.measured = err == nil
	return p
}

// use reads the gateway process's use so far (zero where it cannot).
func (p *loadGateway) use() gatewayUse {
	u, _ := readUse(p.pid)
	return u
}

// readUse reads a process's user and system time (/proc/PID/stat, in
// clock ticks of 10 ms, the fixed USER_HZ of Linux's /proc) and the
// context switches of its threads (/proc/PID/task/*/status).
func readUse(pid int) (gatewayUse, error) {
	var u gatewayUse
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	var f []string
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
		f = strings.Fields(string(stat[i+1:]))
	}
	if len(f) < 13 {
		return u, errors.New("cannot read /proc/PID/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, errors.New("cannot read /proc/PID/stat")
	}
	u.cpu = time.Duration(utime+stime) * 10 * time.Millisecond
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		st, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(st), "\n") {
			if name, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(name, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				u.switches += n
			}
		}
	}
	return u, nil
}

// serveLoopback serves h on a loopback port until the benchmark ends and
// returns its base URL.
func serveLoopback(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// median is the middle value (the mean of the two middle ones).
func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// wrkResult is one wrk run: latencies in µs, requests per second, the
// CPU per request in µs of this process (cpu: the endpoint), of wrk
// (wrkCPU) and of the gateway process (gwCPU), and the gateway's context
// switches per request.
type wrkResult struct{ p50, p99, rps, cpu, wrkCPU, gwCPU, gwSwitches float64 }

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// parseWrk reads wrk --latency's report: the 50% and 99% lines of the
// latency distribution (in µs) and Requests/sec. Non-2xx answers fail it.
func parseWrk(out []byte) (wrkResult, error) {
	var r wrkResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "50%":
			r.p50 = wrkMicros(f[1])
		case len(f) == 2 && f[0] == "99%":
			r.p99 = wrkMicros(f[1])
		case len(f) == 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) > 0 && (f[0] == "Non-2xx" || f[0] == "Socket"):
			return r, fmt.Errorf("wrk saw failures: %s", sc.Text())
		}
	}
	if r.p50 <= 0 || r.p99 <= 0 || r.rps <= 0 {
		return r, fmt.Errorf("cannot read wrk's report")
	}
	return r, nil
}

// wrkMicros converts wrk's "123.45us", "1.20ms" or "2.00s" to µs.
func wrkMicros(s string) float64 {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return f * u.scale
		}
	}
	return -1
}

// TestParseWrk pins the reading of wrk's report.
func TestParseWrk(t *testing.T) {
	report := `Running 1s test @ http://127.0.0.1:1/v1/chat/completions
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    52.10us   20.00us   1.00ms   90.00%
  Latency Distribution
     50%   48.00us
     75%   55.00us
     90%   60.00us
     99%    1.20ms
  19000 requests in 1.00s, 5.00MB read
Requests/sec:  19000.50
Transfer/sec:      5.00MB
`
	r, err := parseWrk([]byte(report))
	if err != nil || r.p50 != 48 || r.p99 != 1200 || r.rps != 19000.5 {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := parseWrk([]byte(report + "  Non-2xx or 3xx responses: 5\n")); err == nil {
		t.Fatal("non-2xx answers must fail the run")
	}
}

// BenchmarkLaneQueue: a waiter joining and leaving the middle of a queue
// of 100 and of 10,000 waiters over 40 clients costs the same (O(1) per
// request; the ratio metric of the deep queue is reported against the
// shallow one in the same run).
func BenchmarkLaneQueue(b *testing.B) {
	per := map[int]float64{}
	for _, depth := range []int{100, 10000} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			l := newLane(1, QueueConfig{MaxDepth: ptr(depth + 1)})
			l.inflight = 1
			push := func(client string) *waiter {
				w := &waiter{ready: make(chan struct{}, 1)}
				l.waiting++
				t := l.byClient[client]
				if t == nil {
					t = &clientTurn{name: client}
					l.byClient[client] = t
					l.ring.push(t)
				}
				w.turn = t
				t.q.push(w)
				return w
			}
			var mid *waiter
			for i := range depth {
				w := push(fmt.Sprintf("c%d", i%40))
				if i == depth/2 {
					mid = w
				}
			}
			b.ResetTimer()
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				l.dequeue(mid)
				mid = push("c7")
				// the slot goes round: the next in turn leaves, one joins
				l.release()
				l.inflight = 1
				push("c3")
			}
			per[depth] = float64(time.Since(t0).Nanoseconds()) / float64(b.N)
			if per[100] > 0 && depth != 100 {
				b.ReportMetric(per[depth]/per[100], "vs-depth-100")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
