//go:build !race

package mockllm

const raceEnabled = false
