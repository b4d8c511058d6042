//go:build !unix

package testrun

import "time"

// cpuTime is not measured here; the CPU ratio is then not a number.
func cpuTime() time.Duration { return 0 }
