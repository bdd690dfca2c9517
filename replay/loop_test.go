//go:build linux

package replay

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/calibrate"
)

// The two clients agree, request by request, on what they log: outcome, status, error text
// and body, over streaming, error statuses, resets, timeouts, cancel-after, close-delimited
// bodies, a request body far larger than a socket buffer (the loop's writes resume on
// EPOLLOUT), a refused connect, and multi-turn sessions under each reuse strategy.
func TestClientsAgree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop needs Linux")
	}
	srv := newTestServer(t)
	ps := &planSpec{}
	add := func(j job, cancel int64) {
		i := len(ps.records)
		ps.add(mmapds.Record{SendOffsetNs: int64(i) * 1e6, DelayNs: -1, CancelAfterNs: cancel, Session: uint32(i), Phase: mmapds.PhaseProfile}, jobBody(j))
	}
	add(job{N: 3, Stream: true}, 0)
	add(job{Status: 500}, 0)
	add(job{Mode: "reset"}, 0)
	add(job{Mode: "stall"}, 0)
	add(job{N: 50, ITLms: 20, Stream: true}, 100e6)
	add(job{N: 5, Mode: "close"}, 0)
	add(job{N: 4, Stream: true, TTFTms: 10}, 500e6)
	add(job{N: 200, Stream: true}, 0)
	// A session of three turns, each after the previous one's end.
	for turn := 0; turn < 3; turn++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: int64(turn) * 2e6, Turn: uint32(turn), Session: 99,
			Phase: mmapds.PhaseProfile}, jobBody(job{N: 2 + turn, Stream: true}))
	}
	ps.meta.Concurrency = 4
	plan := ps.write(t, t.TempDir())
	for _, reuse := range []string{ReusePooled, ReuseNever, ReuseSticky} {
		run := func(client string) map[uint32]rawlog.Request {
			cfg := workerConfig{Plan: plan, URLs: []string{srv.URL}, RequestTimeoutNs: int64(400 * time.Millisecond),
				ConnReuse: reuse, Client: client}
			res, reqs, _ := runInProcess(t, cfg, nil)
			if res.Counts.Planned != len(ps.records) || len(reqs) != len(ps.records) {
				t.Fatalf("%s/%s: counts %+v, %d records", client, reuse, res.Counts, len(reqs))
			}
			return reqs
		}
		loop, netc := run(ClientLoop), run(ClientNet)
		for i := range ps.records {
			a, b := loop[uint32(i)], netc[uint32(i)]
			// How much of a cancelled stream arrived before the cut is timing, not semantics.
			sameBody := string(a.Body) == string(b.Body) || a.Outcome == rawlog.OutcomeCancelled
			if a.Outcome != b.Outcome || a.Status != b.Status || a.Err != b.Err || !sameBody {
				t.Errorf("%s: request %d: loop %s body %.200q, net %s body %.200q", reuse, i, brief(a), a.Body, brief(b), b.Body)
			}
			if a.Outcome == rawlog.OutcomeCompleted && (len(a.ReadNs) == 0 || a.HeaderNs < a.WriteEndNs || a.WriteEndNs < a.WriteStartNs) {
				t.Errorf("%s: request %d: loop times write %d..%d head %d, %d reads", reuse, i, a.WriteStartNs, a.WriteEndNs, a.HeaderNs, len(a.ReadNs))
			}
		}
		for turn := 1; turn < 3; turn++ {
			prev, q := loop[uint32(len(ps.records)-3+turn-1)], loop[uint32(len(ps.records)-3+turn)]
			if q.ReadyNs < prev.EndNs+int64(turn)*2e6 || q.WriteStartNs < q.ReadyNs {
				t.Errorf("%s: turn %d ready %d, previous ended %d", reuse, turn, q.ReadyNs, prev.EndNs)
			}
			if reuse == ReuseSticky && !q.ConnReused {
				t.Errorf("sticky: turn %d on a new connection", turn)
			}
		}
	}

	// A 4 MiB request, far over a socket buffer, echoed back: the loop's writev resumes on
	// EPOLLOUT. Its own plan, with a timeout a loaded machine cannot reach.
	big := singleTurn(2, job{N: 2, Seen: strings.Repeat("x", 4<<20)}, func(i int) int64 { return int64(i) * 1e6 })
	bigPlan := big.write(t, t.TempDir())
	var bodies []string
	for _, client := range []string{ClientLoop, ClientNet} {
		res, reqs, _ := runInProcess(t, workerConfig{Plan: bigPlan, URLs: []string{srv.URL}, Client: client, RequestTimeoutNs: int64(30 * time.Second)}, nil)
		if res.Counts.Completed != 2 || reqs[0].Status != 200 {
			t.Fatalf("%s: 4 MiB request: counts %+v, %s", client, res.Counts, brief(reqs[0]))
		}
		bodies = append(bodies, string(reqs[0].Body))
	}
	if bodies[0] != bodies[1] || len(bodies[0]) < 4<<20 {
		t.Errorf("4 MiB request: loop echoed %d bytes, net %d", len(bodies[0]), len(bodies[1]))
	}

	// Nothing listening: the same connect error from both.
	refused := func(client string) rawlog.Request {
		_, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{"http://127.0.0.1:1"}, Client: client}, nil)
		return reqs[0]
	}
	if a, b := refused(ClientLoop), refused(ClientNet); a.Err != b.Err || a.Outcome != b.Outcome || a.ConnectStartNs < 0 || a.ConnectEndNs < a.ConnectStartNs {
		t.Errorf("refused: loop %s (connect %d..%d), net %s", brief(a), a.ConnectStartNs, a.ConnectEndNs, brief(b))
	}
}

// Which client a worker runs: the loop when asked (or by default) for http, the net client for
// https, and the net client when asked.
func TestClientChoice(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop needs Linux")
	}
	ps := singleTurn(1, job{}, nil)
	ps.meta.Concurrency = 1
	plan := ps.write(t, t.TempDir())
	for _, c := range []struct {
		client, url string
		loop        bool
	}{
		{ClientLoop, "http://127.0.0.1:9", true},
		{ClientNet, "http://127.0.0.1:9", false},
		{ClientLoop, "https://127.0.0.1:9", false},
		{"", "http://127.0.0.1:9", DefaultClient == ClientLoop},
	} {
		w, err := newWorker(workerConfig{Plan: plan, URLs: []string{c.url}, Workers: 1, CPU: -1, Client: c.client,
			Log: filepath.Join(t.TempDir(), "w.rawlog")})
		if err != nil {
			t.Fatal(err)
		}
		if got := w.loop; got != c.loop {
			t.Errorf("client %q url %s: loop %v, want %v", c.client, c.url, got, c.loop)
		}
		w.close()
	}
	if _, err := checkClient("epoll"); err == nil || !strings.Contains(err.Error(), `client "epoll"`) {
		t.Errorf("checkClient: %v", err)
	}
}

// run.json records each worker's self-calibration and the client.
func TestRunJSONRecordsCalibration(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("calibration needs Linux")
	}
	srv := newTestServer(t)
	ps := singleTurn(3, job{N: 1}, nil)
	ps.meta.Concurrency = 1
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 1
	m := runReplay(t, o)
	back, err := rawlog.ReadManifest(o.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, mm := range []*rawlog.Manifest{m, back} {
		c := mm.Workers[0].Calibration
		if c == nil || c.TimerSamples != calibrate.TimerSamples || c.TimerLagP50Ns <= 0 || c.TimerLagP99Ns < c.TimerLagP50Ns ||
			c.TimerLagMaxNs < c.TimerLagP99Ns || c.LoopbackRTTP50Ns <= 0 || c.SyscallNs <= 0 {
			t.Fatalf("calibration %+v", c)
		}
		t.Logf("calibration: %+v", *c)
		if mm.Options["client"] != DefaultClient {
			t.Errorf("options.client %v, want %s", mm.Options["client"], DefaultClient)
		}
	}
}
