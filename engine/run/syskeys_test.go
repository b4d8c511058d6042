package run

import (
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// sysHook records every key sys holds at every point a run is held.
type sysHook struct {
	*eventRec
	mu   sync.Mutex
	keys map[string]bool
}

func (h *sysHook) Pause(p *PausePoint) error {
	keys, _ := p.VM.Sys()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		h.keys[k] = true
	}
	return nil
}
func (h *sysHook) StoreWrite(StoreEvent) {}

// TestSysKeysMatchRuntime keeps template.SysKeys (engine/api's sys
// members), which the checker and the engine's substitution use to refuse
// a key the engine never sets, equal to the keys the runtime sets: a
// prompt that reaches every place a key is set (H1, a section after a
// model round, a fanout arm) holds all of them, and no other.
func TestSysKeysMatchRuntime(t *testing.T) {
	h := newHarness(t)
	hook := &sysHook{eventRec: h.obs, keys: map[string]bool{}}
	h.cfg.Observer = hook
	h.srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	body := "## Main\n\nFirst.\n\n" + luaFence(`fanout("### Worker", {"a", "b"})`) + "Then.\n\n" +
		"### Worker\n\nDo {{ item }}.\n\n" + luaFence(`return reply`)
	if _, err := h.run(prompt("", defModel, body)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range hook.keys {
		got = append(got, k)
	}
	sort.Strings(got)
	want := append([]string(nil), template.SysKeys()...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("runtime sets sys keys %v; engine/api's sys table (template.SysKeys) says %v", got, want)
	}
}
