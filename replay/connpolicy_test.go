package replay

import (
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
)

// closedLoopMock is a closed-loop plan of n streaming chat requests for mockllm, three tokens
// each, at concurrency c, in sessions of turns turns (sent back to back).
func closedLoopMock(n, c, turns int) *planSpec {
	ps := &planSpec{}
	ps.meta.Streaming = true
	ps.meta.Concurrency = c
	body := []byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true,"stream":true}`)
	for i := 0; i < n; i++ {
		turn, delay := i%turns, int64(-1)
		if turn > 0 {
			delay = 0
		}
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: delay, Session: uint32(i / turns), Turn: uint32(turn), Phase: mmapds.PhaseProfile}, body)
	}
	return ps
}

// startQuirkyMock serves mockllm with no delays and the given quirks, for this test.
func startQuirkyMock(t *testing.T, q mockllm.Quirks) string {
	t.Helper()
	o := mockllm.DefaultOptions()
	o.TTFT, o.ITL = 0, 0
	o.Quirks = q
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// A server that closes every connection right after its response while announcing
// keep-alive (llama.cpp; mockllm --close-after-response) costs each worker at most one
// reconnect per slot, not one per request: the worker learns that the URL closes after each
// response and opens a new connection per request from then on, so no request is written
// on a dead connection (it used to be every request after the first per slot, each paying a
// write on the dead connection and a reconnect inside its dispatch lag). Every reconnect and
// every connection the server's policy forced is recorded on the request. With the policy
// known before the first request (the preflight's finding) there is no reconnect at all, and
// against a server that keeps connections open nothing changes.
func TestServerClosingAfterEachResponseIsLearned(t *testing.T) {
	const n, conc = 24, 2
	for _, client := range []string{ClientLoop, ClientNet} {
		for _, c := range []struct {
			name    string
			quirk   bool
			known   []int
			reuse   string
			turns   int
			maxReco int
		}{
			{"learned", true, nil, ReusePooled, 1, conc},
			{"known", true, []int{0}, ReusePooled, 1, 0},
			{"sticky sessions", true, nil, ReuseSticky, 3, conc},
			{"keep-alive server", false, nil, ReusePooled, 1, 0},
		} {
			t.Run(client+"/"+c.name, func(t *testing.T) {
				url := startQuirkyMock(t, mockllm.Quirks{CloseAfterResponse: c.quirk})
				plan := closedLoopMock(n, conc, c.turns).write(t, t.TempDir())
				res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{url}, Client: client, ConnReuse: c.reuse, ServerCloses: c.known}, nil)
				if res.Counts.Completed != n {
					t.Fatalf("counts %+v", res.Counts)
				}
				reconnects, forced, reused := 0, 0, 0
				for _, q := range reqs {
					reconnects += q.Reconnects
					if q.ServerClosed {
						forced++
					}
					if q.ConnReused {
						reused++
					}
					if q.Reconnects > 0 && !(q.FirstWriteStartNs >= q.ReadyNs && q.ConnectStartNs >= q.FirstWriteStartNs && q.ServerClosed) {
						t.Errorf("reconnect not recorded whole: %s first write %d", brief(q), q.FirstWriteStartNs)
					}
					if q.Reconnects == 0 && q.FirstWriteStartNs != -1 {
						t.Errorf("no reconnect but first_write_start_ns %d: %s", q.FirstWriteStartNs, brief(q))
					}
				}
				if reconnects > c.maxReco {
					t.Errorf("%d reconnects over %d requests, want at most %d", reconnects, n, c.maxReco)
				}
				if !c.quirk {
					if forced != 0 || reused < n/2 {
						t.Errorf("keep-alive server: %d requests marked server_closed, %d reused", forced, reused)
					}
					return
				}
				if reused != 0 {
					t.Errorf("%d requests completed on a reused connection of a server that closes them all", reused)
				}
				// All but the requests sent before the worker learned it.
				if min := n - 2*conc; forced < min {
					t.Errorf("%d of %d requests marked server_closed, want at least %d", forced, n, min)
				}
			})
		}
	}
}
