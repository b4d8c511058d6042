//go:build !unix

package tools

import "os/exec"

// ownGroup does nothing where there are no process groups: cancelling
// kills the command itself.
func ownGroup(*exec.Cmd) {}

func reapGroup(*exec.Cmd) {}
