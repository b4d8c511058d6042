package gatewayd

// The admin routes: profiles, status and switching the active profile.

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

func (g *Gateway) adminProfiles(w http.ResponseWriter, _ *http.Request, _ *state) *apiError {
	if g.profilesDir == "" {
		return &apiError{status: 400, typ: "invalid_request_error", code: "profiles_unavailable", msg: "profiles directory not configured"}
	}
	names, err := ListProfiles(g.profilesDir)
	if err != nil {
		return &apiError{status: 400, typ: "invalid_request_error", code: "switch_failed", msg: "switch profile failed at list-profiles"}
	}
	if names == nil {
		names = []string{}
	}
	writeJSON(w, 200, map[string]any{"profiles": names})
	return nil
}

func (g *Gateway) adminStatus(w http.ResponseWriter, _ *http.Request, s *state) *apiError {
	names := make([]string, 0, len(s.models))
	for _, m := range s.models {
		names = append(names, m.cfg.Name)
	}
	var profile any
	if s.profile != "" {
		profile = s.profile
	}
	writeJSON(w, 200, map[string]any{"profile": profile, "models": names, "local_children": 0,
		"queue": "per-endpoint waiting queue; switch-profile is immediate (no drain)"})
	return nil
}

// adminSwitch loads and validates a profile, then swaps the live state;
// on any failure the old state stays.
func (g *Gateway) adminSwitch(w http.ResponseWriter, r *http.Request, _ *state) *apiError {
	if g.profilesDir == "" {
		return &apiError{status: 400, typ: "invalid_request_error", code: "profiles_unavailable", msg: "profiles directory not configured"}
	}
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req struct {
		Name *string `json:"name"`
	}
	if json.Unmarshal(body, &req) != nil || req.Name == nil {
		return errMalformed(`body must be {"name": "PROFILE"}`)
	}
	failed := func(stage string, err error) *apiError {
		return &apiError{status: 400, typ: "invalid_request_error", code: "switch_failed", msg: "switch profile failed at " + stage + ": " + err.Error()}
	}
	if err := CheckProfileName(*req.Name); err != nil {
		return failed("parse-name", err)
	}
	name := strings.TrimSpace(*req.Name)
	g.switchMu.Lock()
	defer g.switchMu.Unlock()
	names, _ := ListProfiles(g.profilesDir)
	found := false
	for _, n := range names {
		found = found || n == name
	}
	if !found {
		return &apiError{status: 404, typ: "invalid_request_error", code: "profile_not_found", msg: "profile not found: " + name}
	}
	c, err := LoadProfile(g.profilesDir, name, g.env)
	if err != nil {
		return failed("load-profile", err)
	}
	if c.Server == nil {
		return failed("load-profile", errors.New("the profile has no [server] table"))
	}
	s, err := newState(c, name)
	if err != nil {
		return failed("build-routing", err)
	}
	g.state.Store(s)
	if g.Log != nil {
		g.Log("switched profile to " + name)
	}
	writeJSON(w, 200, map[string]any{"ok": true, "profile": name})
	return nil
}
