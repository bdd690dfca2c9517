package replay

import (
	"os"
	"sync"
)

// logSink hands encoded log frames from the request goroutines to one writer goroutine. A
// request goroutine only copies its frame into the active buffer and signals; the writer
// goroutine swaps buffers and makes the write(2) call, so no request waits on the file. Every
// frame reaches the kernel within one scheduling round of being logged, which is what lets a
// worker killed with SIGKILL keep every request that had finished.
type logSink struct {
	f      *os.File
	mu     sync.Mutex
	cond   *sync.Cond
	active []byte
	spare  []byte
	closed bool
	err    error
	wake   chan struct{}
	done   chan struct{}
}

// maxPending bounds the bytes waiting for the writer; Write blocks beyond it rather than grow
// without limit (a disk slower than the network).
const maxPending = 64 << 20

func newLogSink(f *os.File) *logSink {
	s := &logSink{f: f, active: make([]byte, 0, 1<<20), spare: make([]byte, 0, 1<<20),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// Write queues one frame; it never returns a partial write. It implements io.Writer for
// rawlog.Writer, which calls it once per record.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	for len(s.active)+len(p) > maxPending && len(s.active) > 0 && s.err == nil && !s.closed {
		s.cond.Wait()
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, err
	}
	s.active = append(s.active, p...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *logSink) loop() {
	defer close(s.done)
	for {
		<-s.wake
		s.mu.Lock()
		buf := s.active
		s.active = s.spare[:0]
		closed := s.closed
		s.mu.Unlock()
		if len(buf) > 0 {
			_, err := s.f.Write(buf)
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			s.spare = buf[:0]
			s.cond.Broadcast()
			s.mu.Unlock()
		} else {
			s.mu.Lock()
			s.spare = buf[:0]
			s.mu.Unlock()
		}
		if closed {
			return
		}
	}
}

// close flushes what is queued, stops the writer goroutine and syncs the file (it does not
// close it).
func (s *logSink) close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	s.mu.Lock()
	rest := s.active
	s.active = nil
	err := s.err
	s.mu.Unlock()
	if err == nil && len(rest) > 0 {
		_, err = s.f.Write(rest)
	}
	if serr := s.f.Sync(); err == nil {
		err = serr
	}
	return err
}
