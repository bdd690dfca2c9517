//go:build unix

package replay

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// raiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit and returns both as they
// are now in force.
func raiseFileLimit() (soft, hard uint64, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	if rl.Cur < rl.Max {
		raised := unix.Rlimit{Cur: rl.Max, Max: rl.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err != nil {
			return rl.Cur, rl.Max, fmt.Errorf("setrlimit(RLIMIT_NOFILE, %d): %w", rl.Max, err)
		}
		rl = raised
	}
	return rl.Cur, rl.Max, nil
}
