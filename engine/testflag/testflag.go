// Package testflag holds the test flags shared by the module's packages.
// Only tests import it.
//
// Long reports whether the slow tests run at full size: `go test -long`
// for the packages that use it, or FORGE_LSP_LONG=1 in the environment,
// which reaches every package at once (CI's .ci/run sets it:
// `FORGE_LSP_LONG=1 go test ./...`). Without either, a slow test runs a
// smaller sample that still exercises every path, so that `go test ./...`
// stays fast on a developer's machine (CONTRIBUTING.md#tests).
package testflag

import (
	"flag"
	"os"
)

// EnvLong is the environment variable that turns on Long for every test
// binary, including those whose command line has no -long.
const EnvLong = "FORGE_LSP_LONG"

var long = flag.Bool("long", false, "run the slow tests at full size (also "+EnvLong+"=1)")

// Long reports whether slow tests run at full size. Call it from a test,
// after flags are parsed.
func Long() bool {
	return *long || os.Getenv(EnvLong) == "1"
}
