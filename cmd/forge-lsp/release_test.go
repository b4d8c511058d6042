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

// The release is described in four places that must agree: .goreleaser.yaml
// (archives and checksums), the VS Code packaging script (vsce targets and
// their Go platforms), the release workflow (which targets it packages) and
// the Neovim plugin (which archive :ForgeInstall downloads). This test reads
// all four.

var releasePlatforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type goreleaserConfig struct {
	Version     int    `yaml:"version"`
	ProjectName string `yaml:"project_name"`
	Builds      []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Formats         []string `yaml:"formats"`
		NameTemplate    string   `yaml:"name_template"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
}

func TestReleaseConfigurationsAgree(t *testing.T) {
	var cfg goreleaserConfig
	if err := yaml.Unmarshal([]byte(repoFile(t, ".goreleaser.yaml")), &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if cfg.Version != 2 || cfg.ProjectName != "forge-lsp" || len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml: want version 2, project forge-lsp, one build and one archive; got %+v", cfg)
	}
	b := cfg.Builds[0]
	if b.Main != "./cmd/forge-lsp" || b.Binary != "forge-lsp" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build: main %q binary %q env %v", b.Main, b.Binary, b.Env)
	}
	var got []string
	for _, goos := range b.Goos {
		for _, arch := range b.Goarch {
			got = append(got, goos+"/"+arch)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, releasePlatforms) {
		t.Errorf("goreleaser builds %v, want %v", got, releasePlatforms)
	}
	flags := strings.Join(b.Ldflags, " ")
	for _, v := range []string{"main.version=", "main.commit=", "main.date="} {
		if !strings.Contains(flags, "-X "+v) {
			t.Errorf("ldflags %q do not set %s (read by forge-lsp version)", flags, v)
		}
	}
	a := cfg.Archives[0]
	if a.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" || !slices.Equal(a.Formats, []string{"tar.gz"}) {
		t.Errorf("archive name %q formats %v: the Neovim plugin downloads forge-lsp_<version>_<os>_<arch>.tar.gz", a.NameTemplate, a.Formats)
	}
	if len(a.FormatOverrides) != 1 || a.FormatOverrides[0].Goos != "windows" || !slices.Equal(a.FormatOverrides[0].Formats, []string{"zip"}) {
		t.Errorf("windows archives must be zip: %+v", a.FormatOverrides)
	}
	if cfg.Checksum.NameTemplate != "checksums.txt" || cfg.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v: the Neovim plugin verifies SHA-256 from checksums.txt", cfg.Checksum)
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
	want := []string{"darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "universal", "win32-arm64", "win32-x64"}
	if !slices.Equal(matrix, want) {
		t.Errorf("release.yml packages %v, want %v", matrix, want)
	}
}
