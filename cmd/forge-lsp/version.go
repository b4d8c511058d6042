package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// baseVersion is the version of a build that carries no release flags and
// no module version (a build from a checkout). The editor extensions compare
// the major.minor.patch part with the version they were written against.
const baseVersion = "0.1.0"

// Set by release builds (.ci/dist.env, the VS Code packaging script):
// go build -ldflags "-X main.version=1.2.3 -X main.commit=<sha>
// -X main.date=<RFC 3339>".
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildInfo says which forge-lsp this is.
type buildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// currentBuild combines the release flags with the module's build info:
// a flag wins; otherwise `go install ...@v1.2.3` gives the module version
// and a build from a checkout the VCS revision and commit time.
func currentBuild() buildInfo {
	info, _ := debug.ReadBuildInfo()
	return resolveBuild(version, commit, date, info)
}

func resolveBuild(v, c, d string, info *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: v, Commit: c, Date: d, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var modified bool
	if info != nil {
		if b.Version == "" && releaseVersion(info.Main.Version) {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if c == "" && b.Commit != "" && modified {
			b.Commit += "-dirty"
		}
	}
	b.Version = strings.TrimPrefix(b.Version, "v")
	if b.Version == "" {
		b.Version = baseVersion
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

// releaseVersion reports whether a module version names a release rather
// than a local build ("(devel)") or an untagged commit (v0.0.0-<time>-<sha>).
func releaseVersion(v string) bool {
	return v != "" && v != "(devel)" && !strings.HasPrefix(v, "v0.0.0-")
}

// versionCmd prints the build: "forge-lsp 1.2.3" on the first line (the
// editors read it), then commit and date; --json prints one object.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print version, commit, date, go, os and arch as a JSON object")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "forge-lsp version: unexpected argument %q; the only flag is --json\n", fs.Arg(0))
		return 2
	}
	b := currentBuild()
	if *asJSON {
		out, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	fmt.Fprintf(stdout, "forge-lsp %s\ncommit %s\nbuilt %s\n%s %s/%s\n", b.Version, b.Commit, b.Date, b.Go, b.OS, b.Arch)
	return 0
}
