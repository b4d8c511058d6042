package mcp

import (
	"context"
	"flag"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/httpguard/guardtest"
)

var long = flag.Bool("long", false, "run the load tests at full size (3,000 slow connections, 100 dropped clients)")

// TestSlowClientsLoad: slow unauthenticated connections (3,000 under
// -long) against `mcp --http` all end at once, none held for its body,
// and memory comes back to within 20 MB of idle.
func TestSlowClientsLoad(t *testing.T) {
	n := 200
	if *long {
		n = 3000
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "echo.md"), echoPrompt)
	t.Setenv(EnvAPIKey, "load-test-bearer")
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--http", "127.0.0.1:0", dir}, "test", strings.NewReader(""), &syncBuffer{}, &errb)
	}()
	defer func() {
		cancel()
		<-done
	}()
	urlRE := regexp.MustCompile(`url=http://(\S+)/mcp`)
	waitFor(t, "the HTTP server", func() bool { return urlRE.MatchString(errb.String()) })
	addr := urlRE.FindStringSubmatch(errb.String())[1]
	idle := guardtest.RSS()
	res := guardtest.SlowClients(t, addr, "/mcp", n, 20*time.Second)
	after := guardtest.RSS()
	t.Logf("%d slow connections: the last ended after %v; answers %v; RSS idle %d MB, after %d MB", n, res.Slowest, res.Statuses, idle>>20, after>>20)
	for status := range res.Statuses {
		if status != "401" && status != "503" {
			t.Errorf("answered %s", status)
		}
	}
	if *long && after-idle > 20<<20 {
		t.Errorf("RSS grew by %d MB", (after-idle)>>20)
	}
}

// TestDroppedClientsLoad: clients that drop mid-run (100 under -long)
// leave every run slot free, within a second under -long.
func TestDroppedClientsLoad(t *testing.T) {
	n := 10
	if *long {
		n = 100
	}
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "max_concurrent_runs = 128")
	f.block("late")
	h, err := f.srv.HTTPHandler("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	defer f.unblock()
	var drops []func()
	for i := 0; i < n; i++ {
		drops = append(drops, openRaw(t, hs.URL+"/mcp").startCall(2, "ask"))
	}
	for i := 0; i < n; i++ {
		select {
		case <-f.started:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d calls reached the gateway", i, n)
		}
	}
	began := time.Now()
	for _, drop := range drops {
		drop()
	}
	waitFor(t, "every slot to come free", func() bool { return f.busySlots() == 0 })
	d := time.Since(began)
	t.Logf("%d dropped clients freed every slot in %v", n, d)
	if *long && d > time.Second {
		t.Errorf("%d dropped clients took %v to free their slots; want under a second", n, d)
	}
}
