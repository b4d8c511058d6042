package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The release is described in four places that must agree: .ci/dist.env
// (archives and checksums), the VS Code packaging script (vsce targets and
// their Go platforms), the release workflow (which targets it packages) and
// the Neovim plugin (which archive :ForgeInstall downloads). This test reads
// all four.

var releasePlatforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

func repoFile(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readEnvFile reads KEY=VALUE lines (values optionally double-quoted), as
// .ci/dist.sh sources them.
func readEnvFile(t testing.TB, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			t.Fatalf(".ci/dist.env:%d: not KEY=VALUE: %q", i+1, line)
		}
		if strings.HasPrefix(v, `"`) {
			if len(v) < 2 || !strings.HasSuffix(v, `"`) {
				t.Fatalf(".ci/dist.env:%d: unterminated quote: %q", i+1, line)
			}
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out
}

func TestReleaseConfigurationsAgree(t *testing.T) {
	env := readEnvFile(t, repoFile(t, ".ci/dist.env"))
	want := map[string]string{
		"PROJECT":                "forge-lsp",
		"MAIN":                   "./cmd/forge-lsp",
		"CGO_ENABLED":            "0",
		"ARCHIVE_NAME":           "{project}_{version}_{os}_{arch}",
		"ARCHIVE_FORMAT":         "tar.gz",
		"ARCHIVE_FORMAT_WINDOWS": "zip",
		"CHECKSUMS":              "checksums.txt",
		"CHECKSUM_ALGORITHM":     "sha256",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf(".ci/dist.env %s=%q, want %q (the editors depend on it)", k, env[k], v)
		}
	}
	got := strings.Fields(env["PLATFORMS"])
	slices.Sort(got)
	if !slices.Equal(got, releasePlatforms) {
		t.Errorf("release platforms %v, want %v", got, releasePlatforms)
	}
	for _, v := range []string{"main.version={version}", "main.commit={commit}", "main.date={date}"} {
		if !strings.Contains(env["LDFLAGS"], "-X "+v) {
			t.Errorf("LDFLAGS %q do not set %s (read by forge-lsp version)", env["LDFLAGS"], v)
		}
	}

	// The Neovim plugin builds the same archive and checksum names.
	install := repoFile(t, "editors/neovim/lua/forge/install.lua")
	for _, want := range []string{`"forge-lsp_%s_%s_%s.%s"`, `os_name == "windows" and "zip" or "tar.gz"`, `"checksums.txt"`, `Linux = "linux", Darwin = "darwin", Windows_NT = "windows"`} {
		if !strings.Contains(install, want) {
			t.Errorf("install.lua lacks %s", want)
		}
	}

	// The VS Code packaging script maps each vsce target to a release platform.
	script := repoFile(t, "editors/vscode/scripts/package-platform.mjs")
	re := regexp.MustCompile(`"([a-z0-9]+-[a-z0-9]+)": \{ goos: "([a-z]+)", goarch: "([a-z0-9]+)" \}`)
	targets := map[string]string{}
	var platforms []string
	for _, m := range re.FindAllStringSubmatch(script, -1) {
		targets[m[1]] = m[2] + "/" + m[3]
		platforms = append(platforms, m[2]+"/"+m[3])
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, releasePlatforms) {
		t.Errorf("package-platform.mjs targets %v cover %v, want %v", targets, platforms, releasePlatforms)
	}
	for target, want := range map[string]string{"linux-x64": "linux/amd64", "linux-arm64": "linux/arm64", "darwin-x64": "darwin/amd64", "darwin-arm64": "darwin/arm64", "win32-x64": "windows/amd64", "win32-arm64": "windows/arm64"} {
		if targets[target] != want {
			t.Errorf("vsce target %s builds %q, want %s", target, targets[target], want)
		}
	}

	// The release workflow packages every target (and the universal package).
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Target []string `yaml:"target"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, ".github/workflows/release.yml")), &wf); err != nil {
		t.Fatal(err)
	}
	matrix := slices.Clone(wf.Jobs["vsix"].Strategy.Matrix.Target)
	slices.Sort(matrix)
	wantMatrix := []string{"darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "universal", "win32-arm64", "win32-x64"}
	if !slices.Equal(matrix, wantMatrix) {
		t.Errorf("release.yml packages %v, want %v", matrix, wantMatrix)
	}
}
