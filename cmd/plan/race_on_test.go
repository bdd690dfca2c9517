//go:build race

package main

// raceOn: the race detector's shadow memory multiplies a subprocess's peak RSS (about 3x).
const raceOn = true
