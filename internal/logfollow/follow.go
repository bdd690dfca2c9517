// Package logfollow reads files that their writers are still growing: a run's worker raw logs
// while the run lasts, read from the coordinator's process by its observers (the live
// OpenTelemetry export, in-run adaptive scale's controller). At a file's end the Reader waits
// for more bytes until told that the writers are done, then reads what is left and reports the
// end. It imports only the standard library.
package logfollow

import (
	"io"
	"os"
	"time"
)

// PollEvery is how often a Reader at a file's end looks for new bytes, and how often
// observers look for new logs.
const PollEvery = 100 * time.Millisecond

// Reader reads a file a worker is still writing: at its end it waits for more bytes, until
// stop is closed (the worker has exited), and then reports the end.
type Reader struct {
	F    *os.File
	Stop <-chan struct{}
}

// Read reads what the file holds, waiting at its end for more until Stop.
func (r *Reader) Read(p []byte) (int, error) {
	for {
		n, err := r.F.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		select {
		case <-r.Stop:
			if n, _ := r.F.Read(p); n > 0 {
				return n, nil
			}
			return 0, io.EOF
		case <-time.After(PollEvery):
		}
	}
}
