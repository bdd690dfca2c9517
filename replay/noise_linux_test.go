package replay

import "golang.org/x/sys/unix"

// pinThread pins the calling OS thread to cpu; -1 leaves it where it is.
func pinThread(cpu int) error {
	if cpu < 0 {
		return nil
	}
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
