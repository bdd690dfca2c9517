package noise

import "golang.org/x/sys/unix"

// pinThread pins the calling OS thread to cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
