package replay

import "sync"

// logSink hands encoded log frames from the request goroutines to one writer goroutine. A
// request goroutine only copies its frame into the active buffer and signals; the writer
// goroutine swaps buffers and makes the write(2) call, so no request waits on the file. Every
// frame reaches the kernel within one scheduling round of being logged, which is what lets a
// worker killed with SIGKILL keep every request that had finished. flush is the exception for
// the one record that must be in the kernel before the caller goes on (Sent, before the
// request's bytes reach the socket).
type logSink struct {
	f      logFile
	mu     sync.Mutex
	cond   *sync.Cond
	active []byte
	spare  []byte
	// writing says a goroutine is writing the buffer it took from active; spare is then in
	// use as active, so nobody else may swap until it is done.
	writing bool
	// queued and written count the bytes ever queued and ever handed to write(2).
	queued  int64
	written int64
	closed  bool
	err     error
	// writeThrough (tests) makes Write write out before it returns, so that a failure
	// shows at the next Write: the order the writer goroutine may win under load.
	writeThrough bool
	// ownerFlush (the event loop) says the goroutine that logs wakes the writer itself, with
	// kick, once per batch of frames (before it sleeps) rather than on every Write: a wake-up
	// per frame costs the loop a thread switch each. The writes stay on the writer goroutine,
	// so a slow disk never stalls the loop.
	ownerFlush bool
	// rawWrite, when set (the event loop's log, on Linux), is flush's write: one the Go
	// runtime is not told of (eventloop.RawFileWriter). flush runs on the loop's goroutine, which
	// waits for the write anyway, and a write the runtime is told of wakes sysmon from its
	// deep sleep: a thread switch on the worker's CPU per request.
	rawWrite func([]byte) (int, error)
	wake     chan struct{}
	done     chan struct{}
}

// maxPending bounds the bytes waiting for the writer; Write blocks beyond it rather than grow
// without limit (a disk slower than the network, or one huge record: a response of
// --max-response-bytes goes through in pieces, so it costs the log two buffers of this
// size, not a copy of itself).
const maxPending = 8 << 20

func newLogSink(f logFile) *logSink {
	s := &logSink{f: f, active: make([]byte, 0, 1<<20), spare: make([]byte, 0, 1<<20),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// Write queues one frame; it never returns a partial write. It implements io.Writer for
// rawlog.Writer, which calls it once per frame (a record over 1 MiB is several frames).
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	for len(s.active)+len(p) > maxPending && len(s.active) > 0 && s.err == nil && !s.closed {
		if s.ownerFlush {
			select { // nobody woke the writer for these frames yet
			case s.wake <- struct{}{}:
			default:
			}
		}
		s.cond.Wait()
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, err
	}
	s.active = append(s.active, p...)
	s.queued += int64(len(p))
	if s.writeThrough {
		s.writeOut(false)
	}
	owner := s.ownerFlush
	s.mu.Unlock()
	if owner {
		return len(p), nil
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// kick wakes the writer goroutine when frames are waiting (see ownerFlush).
func (s *logSink) kick() {
	s.mu.Lock()
	waiting := len(s.active) > 0 // while it writes, the token makes it come back for these
	s.mu.Unlock()
	if waiting {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// failed reports whether a write to the file has failed; nothing reaches it after that.
func (s *logSink) failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

// flush returns once every frame queued before the call is in the kernel. It writes them
// from the calling goroutine unless another is already writing (then it waits for that one),
// so on a worker's single P it costs one write(2), not a switch to the writer goroutine.
func (s *logSink) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.queued
	for s.written < target && s.err == nil {
		s.writeOut(true)
	}
	return s.err
}

// writeOut writes what is queued, waiting first while another goroutine writes, unless a
// write has failed; raw uses rawWrite when there is one (flush). It is called with s.mu held
// and returns with it held; the write itself runs unlocked.
func (s *logSink) writeOut(raw bool) {
	for s.writing {
		s.cond.Wait()
	}
	// After a failed write nothing more reaches the file, not even frames queued while that
	// write was in flight: the first failure is the one reported.
	if s.err != nil || len(s.active) == 0 {
		return
	}
	buf := s.active
	s.active = s.spare[:0]
	s.writing = true
	s.mu.Unlock()
	var err error
	if raw && s.rawWrite != nil {
		_, err = s.rawWrite(buf)
	} else {
		_, err = s.f.Write(buf)
	}
	s.mu.Lock()
	s.writing = false
	if err != nil && s.err == nil {
		s.err = err
	}
	s.written += int64(len(buf))
	s.spare = buf[:0]
	s.cond.Broadcast()
}

func (s *logSink) loop() {
	defer close(s.done)
	for {
		<-s.wake
		s.mu.Lock()
		closed := s.closed
		s.writeOut(false)
		s.mu.Unlock()
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
	for s.written < s.queued && s.err == nil {
		s.writeOut(false)
	}
	err := s.err
	s.mu.Unlock()
	if serr := s.f.Sync(); err == nil {
		err = serr
	}
	return err
}
