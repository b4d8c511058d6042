//go:build race

package run

// raceEnabled: the race detector multiplies memory use several times, so
// peak-RSS limits measured under -race say nothing about the engine.
const raceEnabled = true
