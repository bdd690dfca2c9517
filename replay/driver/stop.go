package driver

import (
	"sync"
	"sync/atomic"
)

// Stop is how a run ends early, as both transports read it: a stop (interruption, the
// duration's end, a failure) sends nothing new and lets what is in flight finish; an abort
// then cuts what is still in flight. Each happens once, with the reason the records it
// touches carry. The worker sets it; a transport only reads it, when its Wake or Abort is
// called and at every pass over its scheduler.
type Stop struct {
	stopping, aborting   atomic.Bool
	notSentWhy, abortWhy atomic.Pointer[string]
	stopOnce, abortOnce  sync.Once
}

// Stop stops sending; why becomes the Err of the records never sent. It reports whether
// this call stopped the run (the first).
func (s *Stop) Stop(why string) bool {
	first := false
	s.stopOnce.Do(func() {
		s.notSentWhy.Store(&why)
		s.stopping.Store(true)
		first = true
	})
	return first
}

// Abort cuts what is in flight; why becomes the Err of the requests it cuts. It reports
// whether this call aborted the run (the first).
func (s *Stop) Abort(why string) bool {
	first := false
	s.abortOnce.Do(func() {
		s.abortWhy.Store(&why)
		s.aborting.Store(true)
		first = true
	})
	return first
}

// Stopping says nothing new may be sent.
func (s *Stop) Stopping() bool { return s.stopping.Load() }

// Aborting says what is in flight is being cut.
func (s *Stop) Aborting() bool { return s.aborting.Load() }

// AbortWhy is the reason of the abort; "" before one.
func (s *Stop) AbortWhy() string {
	if p := s.abortWhy.Load(); p != nil {
		return *p
	}
	return ""
}

// NotSentWhy is the reason of the stop, and whether there was one.
func (s *Stop) NotSentWhy() (string, bool) {
	if p := s.notSentWhy.Load(); p != nil {
		return *p, true
	}
	return "", false
}
