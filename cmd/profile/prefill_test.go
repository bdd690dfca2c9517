package main

import (
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/lockbuf"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/tokenizer"
)

// TestPrefillConcurrencyAsTheServerSawIt: profile --prefill-concurrency 2 at concurrency 6
// against mockllm: by the server's own schedule log, never more than 2 requests were between
// their arrival and the server's first event (prefill), and more than 2 were served at once.
func TestPrefillConcurrencyAsTheServerSawIt(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var sched lockbuf.Buffer
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL, o.ScheduleLog = tok, 30*time.Millisecond, 10*time.Millisecond, &sched
	mock, err := mockllm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	// --no-preflight: the schedule log counts every request the mock served, and the
	// preflight's one request (before the run, never part of its results) would be one more.
	r := runProfile(t, srv.URL, "--no-preflight", "--concurrency", "6", "--prefill-concurrency", "2", "--request-count", "18", "--output-tokens-mean", "6")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	recs, err := mockllm.ReadSchedule(strings.NewReader(sched.String()))
	if err != nil || len(recs) != 18 {
		t.Fatalf("%d schedule records, %v", len(recs), err)
	}
	overlap := func(end func(mockllm.ScheduleRecord) int64) int {
		type ev struct{ t, d int64 }
		var evs []ev
		for _, rec := range recs {
			evs = append(evs, ev{rec.ArrivalUnixNs, 1}, ev{rec.ArrivalUnixNs + end(rec), -1})
		}
		sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t || evs[i].t == evs[j].t && evs[i].d < evs[j].d })
		cur, best := int64(0), int64(0)
		for _, e := range evs {
			cur += e.d
			best = max(best, cur)
		}
		return int(best)
	}
	if got := overlap(func(r mockllm.ScheduleRecord) int64 { return r.SentNs[0] }); got != 2 {
		t.Errorf("the server had %d requests in prefill at once, want 2", got)
	}
	if got := overlap(func(r mockllm.ScheduleRecord) int64 { return r.SentNs[len(r.SentNs)-1] }); got <= 2 {
		t.Errorf("the server served at most %d at once: decoding requests held prefill slots", got)
	}
}
