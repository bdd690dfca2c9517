//go:build race

package mockllm

// raceEnabled widens timing tolerances: the race detector slows every
// goroutine switch, which a client-side measurement sees.
const raceEnabled = true
