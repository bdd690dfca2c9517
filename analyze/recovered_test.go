package analyze

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// killWorker rewrites worker w of the run in dir as replay leaves a worker killed with
// SIGKILL: its log keeps the first done requests, has Sent records (and no Request record)
// for the next inFlight, and no footer; the rest of its part is in the recovery log replay
// writes, as not_sent records. It returns the worker's planned count.
func killWorker(t *testing.T, dir string, w, done, inFlight int) int {
	t.Helper()
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	wi := &m.Workers[w]
	path := filepath.Join(dir, wi.Log)
	r, err := rawlog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	var reqs []rawlog.Request
	for {
		k, err := r.Next()
		if err != nil {
			break
		}
		if k == rawlog.KindRequest {
			q := *r.Request()
			q.Body, q.ReadNs, q.ReadEnd = bytes.Clone(q.Body), append([]int64(nil), q.ReadNs...), append([]uint32(nil), q.ReadEnd...)
			reqs = append(reqs, q)
		}
	}
	r.Close()
	if len(reqs) < done+inFlight+1 {
		t.Fatalf("worker %d has %d requests, want more than %d", w, len(reqs), done+inFlight)
	}
	write := func(path string, h rawlog.Header, fn func(*rawlog.Writer)) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lw, err := rawlog.NewWriter(f, h)
		if err != nil {
			t.Fatal(err)
		}
		fn(lw)
	}
	write(path, h, func(lw *rawlog.Writer) {
		for i := range reqs[:done+inFlight] {
			if err := lw.WriteSent(rawlog.Sent{Index: reqs[i].Index, TimeNs: reqs[i].WriteStartNs}); err != nil {
				t.Fatal(err)
			}
			if i < done {
				if err := lw.WriteRequest(&reqs[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	rest := reqs[done+inFlight:]
	wi.RecoveryLog, wi.Recovered, wi.Lost, wi.Status = "worker-001.recovered.rawlog", len(rest), inFlight, rawlog.StatusKilled
	write(filepath.Join(dir, wi.RecoveryLog), rawlog.Header{Worker: w, PID: 1, CPU: -1, PlanHash: h.PlanHash, StartUnixNs: h.StartUnixNs}, func(lw *rawlog.Writer) {
		for _, q := range rest {
			n := rawlog.Request{Index: q.Index, Outcome: rawlog.OutcomeNotSent, IntendedNs: q.IntendedNs, ReadyNs: -1, WriteStartNs: -1,
				WriteEndNs: -1, HeaderNs: -1, EndNs: -1, ConnectStartNs: -1, ConnectEndNs: -1, Err: "worker 1 died (killed by signal killed) before sending it"}
			if err := lw.WriteRequest(&n); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(rawlog.Footer{TimeNs: 1, Status: rawlog.StatusRecovered}); err != nil {
			t.Fatal(err)
		}
	})
	m.Status = rawlog.StatusFailed
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return wi.Planned
}

// A worker killed mid-run: analyze reads replay's recovery log with the worker's own, so the
// requests it never sent are not_sent and only those in flight (Sent, no Request record) are
// lost, whether the run directories cover the whole plan or only some workers' shards.
func TestRecoveryLog(t *testing.T) {
	const n, done, inFlight = 16, 2, 2
	for _, c := range []struct {
		name      string
		onlyShard bool // drop worker 0 from run.json: lost is counted per log, not by index
	}{{"whole plan", false}, {"one shard", true}} {
		t.Run(c.name, func(t *testing.T) {
			sc := scenario{n: n, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 4, streaming: true}
			dir := sc.build(t, t.TempDir())
			planned := killWorker(t, dir, 1, done, inFlight)
			valid := int64(n - planned + done)
			if c.onlyShard {
				m, _ := rawlog.ReadManifest(dir)
				m.Workers = m.Workers[1:]
				if err := rawlog.WriteManifest(dir, m); err != nil {
					t.Fatal(err)
				}
				valid = done
			}
			s, records := analyseDir(t, Options{}, dir)
			notSent := int64(planned - done - inFlight)
			if s.Counts.Lost != inFlight || s.Counts.NotSent != notSent || s.Counts.Valid != valid || s.Counts.Errors != notSent+inFlight {
				t.Fatalf("counts %+v; want %d lost, %d not sent, %d valid", s.Counts, inFlight, notSent, valid)
			}
			if got := bytes.Count(records, []byte(`"outcome":"lost"`)); !c.onlyShard && got != inFlight {
				t.Fatalf("%d lost records, want %d", got, inFlight)
			}
			if got := bytes.Count(records, []byte("died (killed by signal killed) before sending it")); got != int(notSent) {
				t.Fatalf("%d not_sent records with the recovery reason, want %d", got, notSent)
			}
		})
	}
}

// A recovery log that cannot fit its worker's shard is an input error.
func TestRecoveryLogBadCount(t *testing.T) {
	sc := scenario{n: 8, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 4, streaming: true}
	dir := sc.build(t, t.TempDir())
	m, _ := rawlog.ReadManifest(dir)
	for _, c := range []struct {
		log       string
		recovered int
	}{{"worker-001.recovered.rawlog", m.Workers[1].Planned + 1}, {"", 2}, {"worker-001.recovered.rawlog", 0}} {
		m.Workers[1].RecoveryLog, m.Workers[1].Recovered = c.log, c.recovered
		if err := rawlog.WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
		_, err := Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}, TempDir: t.TempDir()}, nil)
		if !errors.Is(err, ErrInput) {
			t.Fatalf("recovery log %q with %d records: %v", c.log, c.recovered, err)
		}
	}
}
