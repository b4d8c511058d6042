package gatewayd

import (
	"strings"
	"testing"
)

// TestAdminProfiles: list, status and switch; a failed switch keeps the
// old state; names are confined to the profiles directory.
func TestAdminProfiles(t *testing.T) {
	b := newBackend(t)
	dir := t.TempDir()
	write(t, dir, "base.toml", fileFor(b.URL, ""))
	write(t, dir, "small.toml", `include = ["base.toml"]
[server]
bind = "127.0.0.1:0"
api_key = "new-key"

[[model]]
name = "tiny"
description = "tiny model"
context = 512
upstream = "gpt-tiny"
endpoints = ["main"]
`)
	write(t, dir, "broken.toml", "include = [\"base.toml\"]\n[[model]]\nname = \"x\"\n")
	c, err := LoadProfile(dir, "base", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(c, Options{ProfilesDir: dir, Profile: "base", Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := call(t, g, "GET", "/admin/profiles", serverKey, "")
	if code != 200 || strings.Join(toStrings(out["profiles"]), ",") != "base,broken,small" {
		t.Fatalf("list %d %v", code, out)
	}
	code, out, _ = call(t, g, "GET", "/admin/status", serverKey, "")
	if code != 200 || out["profile"] != "base" || strings.Join(toStrings(out["models"]), ",") != "fast,deep" {
		t.Fatalf("status %d %v", code, out)
	}
	for body, want := range map[string]string{
		`{"name":"../base"}`: "switch_failed",
		`{"name":""}`:        "switch_failed",
		`{"name":"prod"}`:    "profile_not_found",
		`{"name":"broken"}`:  "switch_failed",
		`{}`:                 "malformed_request",
	} {
		code, out, _ := call(t, g, "POST", "/admin/switch-profile", serverKey, body)
		if _, c, _ := errorOf(out); c != want || code/100 != 4 {
			t.Errorf("%s: %d %v, want %s", body, code, out, want)
		}
	}
	// Still the old profile after the failures.
	if code, _, _ := call(t, g, "GET", "/admin/status", serverKey, ""); code != 200 {
		t.Fatalf("old key stopped working after failed switches: %d", code)
	}
	code, out, _ = call(t, g, "POST", "/admin/switch-profile", serverKey, `{"name":" small "}`)
	if code != 200 || out["profile"] != "small" || out["ok"] != true {
		t.Fatalf("switch %d %v", code, out)
	}
	if code, _, _ := call(t, g, "GET", "/v1/models", serverKey, ""); code != 401 {
		t.Fatalf("old key after the switch: %d", code)
	}
	code, out, _ = call(t, g, "POST", "/v1/chat/completions", "new-key", `{"model":"tiny","messages":[{"role":"user","content":"x"}]}`)
	if code != 200 || out["model"] != "tiny" || b.received()[0].Body["model"] != "gpt-tiny" {
		t.Fatalf("after switch %d %v", code, out)
	}
	// Without a profiles directory the routes say so.
	g2 := open(t, fileFor(b.URL, ""))
	if code, out, _ := call(t, g2, "GET", "/admin/profiles", serverKey, ""); code != 400 || out["error"].(map[string]any)["code"] != "profiles_unavailable" {
		t.Fatalf("no dir: %d %v", code, out)
	}
}

func toStrings(v any) []string {
	var s []string
	for _, x := range v.([]any) {
		s = append(s, x.(string))
	}
	return s
}
