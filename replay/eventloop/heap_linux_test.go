//go:build linux

package eventloop

import "testing"

// The timer heap keeps the earliest deadline on top through inserts, moves and removals.
func TestLoopTimerHeap(t *testing.T) {
	l := &Loop{}
	rs := make([]*loopRequest, 50)
	for i := range rs {
		rs[i] = &loopRequest{hidx: -1}
		l.setTimer(rs[i], int64((i*37)%50))
	}
	for i := 0; i < 50; i += 3 {
		l.setTimer(rs[i], int64(100+i)) // move later
	}
	for i := 1; i < 50; i += 5 {
		l.stopTimer(rs[i])
	}
	last := int64(-1)
	n := 0
	for len(l.heap) > 0 {
		r := l.heap[0]
		if r.timerAt < last {
			t.Fatalf("heap order: %d after %d", r.timerAt, last)
		}
		last = r.timerAt
		l.stopTimer(r)
		if r.hidx != -1 {
			t.Fatal("stopped timer keeps its index")
		}
		n++
	}
	if n != 40 {
		t.Fatalf("%d timers fired, want 40", n)
	}
}
