//go:build !race

package gatewayd

const raceEnabled = false
