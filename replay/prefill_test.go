package replay

import (
	"runtime"
	"sort"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// prefillOverlap is the most requests that were ever between writing their request and the
// read that brought their first response body byte, by the client's own timestamps.
func prefillOverlap(reqs map[uint32]rawlog.Request) int {
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, q := range reqs {
		if q.WriteStartNs >= 0 && len(q.ReadNs) > 0 {
			evs = append(evs, ev{q.WriteStartNs, 1}, ev{q.ReadNs[0], -1})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t || evs[i].t == evs[j].t && evs[i].d < evs[j].d })
	cur, best := 0, 0
	for _, e := range evs {
		cur += e.d
		best = max(best, cur)
	}
	return best
}

// TestPrefillConcurrency: under concurrency 8 and a prefill cap of 2, each client keeps at
// most 2 requests between their send and their first response byte (the server sends its
// headers at once and the first event after 30 ms), while more than 2 run at once (decoding
// does not hold a prefill slot); every request completes. For both clients.
func TestPrefillConcurrency(t *testing.T) {
	srv := newTestServer(t)
	clients := []string{ClientNet}
	if runtime.GOOS == "linux" {
		clients = append(clients, ClientLoop)
	}
	ps := singleTurn(16, job{N: 5, TTFTms: 30, ITLms: 20, Stream: true}, nil)
	ps.meta.Concurrency, ps.meta.PrefillConcurrency = 8, 2
	plan := ps.write(t, t.TempDir())
	for _, client := range clients {
		res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, Client: client}, nil)
		if res.Counts.Completed != 16 {
			t.Fatalf("%s: counts %+v", client, res.Counts)
		}
		if got := prefillOverlap(reqs); got != 2 {
			t.Errorf("%s: at most %d requests in prefill at once, want 2", client, got)
		}
		if got := maxOverlap(reqs); got <= 2 {
			t.Errorf("%s: at most %d requests at once: decoding requests held prefill slots", client, got)
		}
		for i, q := range reqs {
			if q.ReadyNs > q.WriteStartNs {
				t.Errorf("%s: request %d ready at %d, after it was written at %d", client, i, q.ReadyNs, q.WriteStartNs)
			}
		}
	}
}

// TestPrefillNoFirstByte: a request that ends without a body byte (an HTTP 500 without one
// would still carry one; a reset carries none) frees its prefill slot with its end, so a cap
// of 1 does not stall the run.
func TestPrefillNoFirstByte(t *testing.T) {
	srv := newTestServer(t)
	clients := []string{ClientNet}
	if runtime.GOOS == "linux" {
		clients = append(clients, ClientLoop)
	}
	ps := &planSpec{}
	for i := 0; i < 6; i++ {
		j := job{N: 2, TTFTms: 5, Stream: true}
		if i%2 == 0 {
			j.Mode = "reset"
		}
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, jobBody(j))
	}
	ps.meta.Concurrency, ps.meta.PrefillConcurrency, ps.meta.Streaming = 3, 1, true
	plan := ps.write(t, t.TempDir())
	for _, client := range clients {
		res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, Client: client}, nil)
		if n := res.Counts.Completed + res.Counts.Failed; n != 6 {
			t.Fatalf("%s: counts %+v: the run stalled", client, res.Counts)
		}
		if got := prefillOverlap(reqs); got > 1 {
			t.Errorf("%s: %d requests in prefill at once, cap 1", client, got)
		}
	}
}
