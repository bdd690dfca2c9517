package analyze

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// A crashed run: the coordinator died (run.json still "running") and worker 1 with it, so
// nobody wrote its recovery log. Its log's Sent records still tell the requests in flight
// (lost) from those never sent (not_sent, not "lost in flight"), and the run is reported
// crashed.
func TestCrashedRunCategories(t *testing.T) {
	const n, done, inFlight = 16, 2, 2
	for _, c := range []struct {
		name      string
		onlyShard bool
	}{{"whole plan", false}, {"one shard", true}} {
		t.Run(c.name, func(t *testing.T) {
			sc := scenario{n: n, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 4, streaming: true}
			dir := sc.build(t, t.TempDir())
			planned := killWorker(t, dir, 1, done, inFlight)
			m, _ := rawlog.ReadManifest(dir)
			os.Remove(filepath.Join(dir, m.Workers[1].RecoveryLog))
			m.Workers[1].RecoveryLog, m.Workers[1].Recovered, m.Status = "", 0, rawlog.StatusRunning
			valid := int64(n - planned + done)
			if c.onlyShard {
				m.Workers = m.Workers[1:]
				valid = done
			}
			if err := rawlog.WriteManifest(dir, m); err != nil {
				t.Fatal(err)
			}
			s, records := analyseDir(t, Options{}, dir)
			notSent := int64(planned - done - inFlight)
			if s.Counts.Lost != inFlight || s.Counts.NotSent != notSent || s.Counts.Valid != valid || s.Counts.Errors != notSent+inFlight {
				t.Fatalf("counts %+v; want %d lost, %d not sent, %d valid", s.Counts, inFlight, notSent, valid)
			}
			if !c.onlyShard {
				if got := bytes.Count(records, []byte(`"outcome":"lost"`)); got != inFlight {
					t.Fatalf("%d lost records, want %d", got, inFlight)
				}
				if got := bytes.Count(records, []byte("no Sent record in its worker's log")); got != int(notSent) {
					t.Fatalf("%d never-sent records, want %d", got, notSent)
				}
			}
			if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "the run crashed") {
				t.Fatalf("notes %q", notes)
			}
		})
	}
}

// When every request failed, the verdict never says the numbers describe the server.
func TestVerdictAllFailed(t *testing.T) {
	for _, c := range []struct {
		errEvery int
		server   bool
	}{{0, true}, {1, false}} {
		sc := scenario{n: 8, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true, cpuPct: 10, errEvery: c.errEvery}
		s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
		line := VerdictLine(s)
		if strings.Contains(line, "describe the server") != c.server || (!c.server && !strings.Contains(line, "every request failed")) {
			t.Errorf("%d of %d valid: %q", s.Counts.Valid, s.Counts.Profile, line)
		}
	}
}
