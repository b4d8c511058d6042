package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// refusingGateway fails the test on any request: a replay must not reach
// it. Its address is in the environment, so a replay that fell back to
// the network would find it.
func refusingGateway(t *testing.T) *gatewaytest.Server {
	srv := gatewaytest.New(t, "test-key")
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		t.Errorf("the gateway was called during a replay: %s", gatewaytest.LastUserContent(req))
		return gatewaytest.Text("no")
	}
	return srv
}

// TestRepeatRecordedRates records five runs of a flaky case
// (--record --repeat 5: two of the five greet wrongly), then replays all
// five offline: with no pass_rate the case fails; with pass_rate 0.4 (or
// --pass-rate 40%) it passes; the report shows the rate and its Wilson
// interval.
func TestRepeatRecordedRates(t *testing.T) {
	dir := writeSuite(t)
	srv := greetServer(t, true)
	code, out, errs := testCLI(t, envOf(srv), "--record", "--repeat", "5", "--run", "^greets Bob$", "-j", "1", dir)
	if code != 1 || !strings.Contains(out, "passed 3 of 5 runs") {
		t.Fatalf("record: %d\n%s\n%s", code, out, errs)
	}
	for k := 1; k <= 5; k++ {
		if _, err := os.Stat(filepath.Join(dir, "cassettes", "greet", "greets-bob."+string(rune('0'+k))+".jsonl")); err != nil {
			t.Errorf("cassette %d: %v", k, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "greet", "greets-bob.jsonl")); err == nil {
		t.Errorf("--record --repeat wrote the single-run cassette")
	}
	refuse := refusingGateway(t)
	code, out, _ = testCLI(t, envOf(refuse), "--repeat", "5", "--run", "^greets Bob$", dir)
	for _, want := range []string{
		`FAIL "greets Bob": passed 3 of 5 runs`,
		`"greets Bob" 3/5 = 60% (23.1%–88.2%), needs 100%: FAIL`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("replay without a pass rate: code %d", code)
	}
	// --pass-rate for all cases.
	code, out, _ = testCLI(t, envOf(refuse), "--repeat", "5", "--pass-rate", "60%", "--run", "^greets Bob$", dir)
	if code != 0 || !strings.Contains(out, `3/5 = 60% (23.1%–88.2%), needs 60%: ok`) || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Errorf("--pass-rate 60%%: %d\n%s", code, out)
	}
	// A case's own pass_rate wins over --pass-rate.
	tests, _ := os.ReadFile(filepath.Join(dir, "greet.test.yaml"))
	withRate := strings.Replace(string(tests), "  - name: greets Bob\n", "  - name: greets Bob\n    pass_rate: 0.8\n", 1)
	os.WriteFile(filepath.Join(dir, "greet.test.yaml"), []byte(withRate), 0o644)
	code, out, _ = testCLI(t, envOf(refuse), "--repeat", "5", "--pass-rate", "0.5", "--run", "^greets Bob$", dir)
	if code != 1 || !strings.Contains(out, "passed 3 of 5 runs (60%, 95% interval 23.1%–88.2%), below pass_rate 80%") {
		t.Errorf("pass_rate 0.8: %d\n%s", code, out)
	}
	if len(refuse.Received()) != 0 {
		t.Errorf("the replays reached the gateway %d times", len(refuse.Received()))
	}
}

// TestPassRateFlag: --pass-rate outside (0, 1] is a usage error.
func TestPassRateFlag(t *testing.T) {
	dir := writeSuite(t)
	for _, bad := range []string{"0", "1.5", "-1", "x", "120%"} {
		if code, _, errs := testCLI(t, envOf(nil), "--pass-rate", bad, dir); code != 2 || !strings.Contains(errs, "a pass rate is a share of the runs greater than 0 and at most 1") {
			t.Errorf("--pass-rate %s: %d %s", bad, code, errs)
		}
	}
}
