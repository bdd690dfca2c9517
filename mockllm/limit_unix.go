//go:build unix

package mockllm

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises the process's soft limit on open files
// (RLIMIT_NOFILE) to its hard limit: each stream holds a descriptor. It
// returns the limit now in force.
func RaiseFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("mockllm: reading the open-file limit: %w", err)
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return uint64(rl.Cur), fmt.Errorf("mockllm: raising the open-file limit from %d to %d: %w", rl.Cur, rl.Max, err)
		}
		rl = want
	}
	return uint64(rl.Cur), nil
}

// fileLimitNote is ", open-file limit N" for messages, or "".
func fileLimitNote() string {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return ""
	}
	return fmt.Sprintf(", open-file limit %d", rl.Cur)
}
