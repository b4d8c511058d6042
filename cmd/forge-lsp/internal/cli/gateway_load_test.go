package cli

import (
	"flag"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/httpguard/guardtest"
)

var longLoad = flag.Bool("long", false, "run the load tests at full size (3,000 slow connections)")

// TestGatewayServeSlowClients: slow unauthenticated connections (3,000
// under -long) against `gateway serve` all end at once, none held for its
// body, and memory comes back to within 20 MB of idle.
func TestGatewayServeSlowClients(t *testing.T) {
	n := 200
	if *longLoad {
		n = 3000
	}
	srv, brave := plainExamplesBackend(t)
	file := writeGatewayFile(t, t.TempDir(), srv, brave)
	addr, stop := serveForTest(t, file)
	defer stop()
	idle := guardtest.RSS()
	res := guardtest.SlowClients(t, addr, "/v1/chat/completions", n, 20*time.Second)
	after := guardtest.RSS()
	t.Logf("%d slow connections: the last ended after %v; answers %v; RSS idle %d MB, after %d MB", n, res.Slowest, res.Statuses, idle>>20, after>>20)
	for status := range res.Statuses {
		if status != "401" && status != "503" {
			t.Errorf("answered %s", status)
		}
	}
	if *longLoad && after-idle > 20<<20 {
		t.Errorf("RSS grew by %d MB", (after-idle)>>20)
	}
}
