package benchclaim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/stats"
)

// The client's share of a measured time is what the client itself adds to it: the time it
// took to write the request, and how long after the server wrote each content event the
// client read it. The rest of a measured TTFT (the bytes in the kernel, the server reading the
// request, the server's own lateness) belongs to the server. The generator validation
// compares the client's log with the mock server's schedule log for the same requests, so
// that a mock server that falls behind on a busy machine is not taken for a slow client.

// ServerEvents is what a server logged for one request: the correlation header it carried,
// when the server read its head and when it began writing each content event, Unix ns.
type ServerEvents struct {
	Correlation   string
	ArrivalUnixNs int64
	SentUnixNs    []int64
}

// ShareCollector gathers the client's timings for ClientShareOf. Its Add is meant as
// analyze.Options.OnRequest and may be called from several goroutines at once.
type ShareCollector struct {
	mu   sync.Mutex
	reqs []analyze.ContentTiming
}

// Add keeps a copy of t.
func (c *ShareCollector) Add(t analyze.ContentTiming) {
	t.ContentNs = slices.Clone(t.ContentNs)
	c.mu.Lock()
	c.reqs = append(c.reqs, t)
	c.mu.Unlock()
}

// ClientShare is the client's own part of the validation's measured times (ms), per request
// matched with the server's log.
type ClientShare struct {
	// Matched requests had a server record with as many content events as the client read;
	// Unmatched did not (no record, or the event counts differ).
	Matched, Unmatched int
	// TTFT is, per matched request, the client's share of its TTFT: the write's duration plus
	// the first content event's receive delay.
	TTFT []float64
	// Receive are the receive delays of the later content events: read instant − the
	// instant the server began writing the event.
	Receive []float64
	// ServerTTFT is, per matched request, the server's own TTFT: its first content write
	// after it read the request's head. ReadDelay is the time from the client's write
	// returning to the server reading the head: the kernel's and the server's. A measured TTFT
	// is the sum of the three: client share + read delay + server TTFT.
	ServerTTFT []float64
	ReadDelay  []float64
	// MinDelay is the smallest receive delay seen (ms): below zero only when the two
	// processes' clocks disagree by that much.
	MinDelay float64
}

// ClientShareOf matches the collected client timings with the server's records: a request's
// correlation header is its session number (replay's session header) and a session's turns
// meet the server's records of that session in arrival order. startUnixNs is the run's zero
// (run.json start_unix_ns) and offsetNs corrects the server's Unix instants onto the
// mapping of monotonic to wall clock the workers took at the start.
func (c *ShareCollector) ClientShareOf(server []ServerEvents, startUnixNs, offsetNs int64) *ClientShare {
	bySession := map[uint32][]*ServerEvents{}
	for i := range server {
		s, err := strconv.ParseUint(server[i].Correlation, 10, 32)
		if err != nil {
			continue
		}
		bySession[uint32(s)] = append(bySession[uint32(s)], &server[i])
	}
	for _, recs := range bySession {
		slices.SortFunc(recs, func(a, b *ServerEvents) int { return cmp.Compare(a.ArrivalUnixNs, b.ArrivalUnixNs) })
	}
	c.mu.Lock()
	reqs := slices.Clone(c.reqs)
	c.mu.Unlock()
	slices.SortFunc(reqs, func(a, b analyze.ContentTiming) int {
		if a.Session != b.Session {
			return cmp.Compare(int64(a.Session), int64(b.Session))
		}
		return cmp.Compare(a.WriteStartNs, b.WriteStartNs)
	})
	share := &ClientShare{MinDelay: math.Inf(1)}
	turn := map[uint32]int{}
	toRun := func(unix int64) int64 { return unix + offsetNs - startUnixNs }
	for _, q := range reqs {
		k := turn[q.Session]
		turn[q.Session] = k + 1
		if len(q.ContentNs) == 0 {
			continue // not valid: the validation counts it a failure
		}
		recs := bySession[q.Session]
		if k >= len(recs) || len(recs[k].SentUnixNs) != len(q.ContentNs) || toRun(recs[k].ArrivalUnixNs) < q.WriteStartNs-arrivalSlackNs {
			share.Unmatched++
			continue
		}
		r := recs[k]
		share.Matched++
		for j, read := range q.ContentNs {
			d := float64(read-toRun(r.SentUnixNs[j])) / 1e6
			share.MinDelay = math.Min(share.MinDelay, d)
			if j == 0 {
				share.TTFT = append(share.TTFT, float64(q.WriteEndNs-q.WriteStartNs)/1e6+d)
				share.ServerTTFT = append(share.ServerTTFT, float64(r.SentUnixNs[0]-r.ArrivalUnixNs)/1e6)
				share.ReadDelay = append(share.ReadDelay, float64(toRun(r.ArrivalUnixNs)-q.WriteEndNs)/1e6)
			} else {
				share.Receive = append(share.Receive, d)
			}
		}
	}
	if share.Matched == 0 {
		share.MinDelay = 0
	}
	return share
}

// arrivalSlackNs is how far before the client's write a server arrival may be stamped and
// still be that request's: the two processes' clocks agree to well within it.
const arrivalSlackNs = 500_000

// usable says whether the share stands for the run: most requests matched and the clocks
// agree; otherwise why not.
func (s *ClientShare) usable(valid int64) (bool, string) {
	switch {
	case s == nil:
		return false, "the mock server's log was not available"
	case s.Matched == 0:
		return false, "no request matched the mock server's log"
	case float64(s.Matched) < 0.9*float64(valid):
		return false, fmt.Sprintf("only %d of %d requests matched the mock server's log", s.Matched, valid)
	case s.MinDelay < -0.5:
		return false, fmt.Sprintf("the client read an event %s ms before the mock server wrote it: the processes' clocks disagree", analyze.FormatNumber(-s.MinDelay))
	}
	return true, ""
}

// sortedPercentiles returns the p50 and p99 of v (numpy's linear method), sorting v.
func sortedPercentiles(v []float64) (p50, p99 float64) {
	slices.Sort(v)
	return stats.PercentileSorted(v, 50), stats.PercentileSorted(v, 99)
}
