// Package lockbuf is a buffer that several goroutines may write at once: the stderr of a
// command under test, a server's log read while it runs.
package lockbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose Write and String hold a lock; the zero value is empty.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
