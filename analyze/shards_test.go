package analyze

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

func shardRun(dir string, index, count int, id string, skew int64, clock *rawlog.ClockState) run {
	m := &rawlog.Manifest{Host: "h" + dir, StartUnixNs: 1000, Clock: clock}
	if count > 0 {
		m.Shard = &rawlog.ShardInfo{Index: index, Count: count, RunID: id, StartAtUnixNs: 1000, StartSkewNs: skew}
	}
	return run{dir: dir, m: m}
}

// The shards given together must be one distributed run, each index once; missing ones are
// named, the largest skew and untrusted clocks reported.
func TestCheckShards(t *testing.T) {
	synced := &rawlog.ClockState{Source: "adjtimex", Synchronised: true, EstErrorNs: 100e3}
	for _, tc := range []struct {
		name    string
		runs    []run
		err     string
		missing []int
		skew    int64
		skewAt  int
		unsync  int
	}{
		{name: "not shards", runs: []run{shardRun("a", 0, 0, "", 0, nil), shardRun("b", 0, 0, "", 0, nil)}},
		{name: "whole", runs: []run{shardRun("a", 0, 2, "r", 300, synced), shardRun("b", 1, 2, "r", -900, synced)}, skew: 900, skewAt: 1},
		{name: "missing", runs: []run{shardRun("a", 0, 3, "r", 5, synced), shardRun("c", 2, 3, "r", 7, synced)}, missing: []int{1}, skew: 7, skewAt: 2},
		{name: "unsynchronised", runs: []run{shardRun("a", 0, 2, "r", 0, &rawlog.ClockState{Synchronised: false}), shardRun("b", 1, 2, "r", 0, nil)}, unsync: 2},
		{name: "clock error over budget", runs: []run{shardRun("a", 0, 1, "r", 0, &rawlog.ClockState{Synchronised: true, EstErrorNs: 5e6})}, unsync: 1},
		{name: "twice", runs: []run{shardRun("a", 1, 2, "r", 0, nil), shardRun("b", 1, 2, "r", 0, nil)}, err: "shard 1 is also a"},
		{name: "other count", runs: []run{shardRun("a", 0, 2, "r", 0, nil), shardRun("b", 1, 3, "r", 0, nil)}, err: "not one distributed run"},
		{name: "other run id", runs: []run{shardRun("a", 0, 2, "r", 0, nil), shardRun("b", 1, 2, "s", 0, nil)}, err: `run id "s"`},
		{name: "mixed", runs: []run{shardRun("a", 0, 0, "", 0, nil), shardRun("b", 1, 2, "r", 0, nil)}, err: "b is a shard of a distributed run and a is not"},
		{name: "bad identity", runs: []run{shardRun("a", 2, 2, "r", 0, nil)}, err: "is not a shard identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := checkShards(tc.runs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInput) {
					t.Fatalf("error %v, want bad input with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.runs[0].m.Shard == nil {
				if rep != nil {
					t.Fatalf("report %+v for runs that are not shards", rep)
				}
				return
			}
			o := &Options{}
			o.defaults()
			rep.judgeClocks(o)
			if len(rep.Missing) != len(tc.missing) || (len(tc.missing) > 0 && rep.Missing[0] != tc.missing[0]) {
				t.Errorf("missing %v, want %v", rep.Missing, tc.missing)
			}
			if rep.MaxStartSkewNs != tc.skew || (tc.skew > 0 && rep.MaxStartSkewShard != tc.skewAt) {
				t.Errorf("largest skew %d at shard %d, want %d at %d", rep.MaxStartSkewNs, rep.MaxStartSkewShard, tc.skew, tc.skewAt)
			}
			if len(rep.Unsynchronised) != tc.unsync {
				t.Errorf("untrusted clocks %q, want %d", rep.Unsynchronised, tc.unsync)
			}
			for _, i := range tc.missing {
				found := false
				for _, n := range rep.notes() {
					found = found || strings.HasPrefix(n, "MISSING SHARD "+string(rune('0'+i)))
				}
				if !found {
					t.Errorf("no note names missing shard %d: %q", i, rep.notes())
				}
			}
		})
	}
}

// A parent folder holding shard-<I>/ run directories stands for them, in index order.
func TestExpandRunDirs(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"shard-10", "shard-2", "shard-0", "notes"} {
		os.MkdirAll(filepath.Join(root, s), 0o755)
		if s != "notes" {
			os.WriteFile(filepath.Join(root, s, rawlog.ManifestName), []byte("{}"), 0o644)
		}
	}
	got, err := expandRunDirs([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range got {
		names = append(names, filepath.Base(g))
	}
	if strings.Join(names, " ") != "shard-0 shard-2 shard-10" {
		t.Fatalf("expanded to %v", names)
	}
	one := filepath.Join(root, "shard-2")
	if got, _ := expandRunDirs([]string{one}); len(got) != 1 || got[0] != one {
		t.Fatalf("a run directory itself expanded to %v", got)
	}
}

// TestShardLinesSayHowShardsEnded: a shard that crashed, was interrupted or failed never
// reads "schedule kept": its line says how it ended, the Shards line counts it, and the
// combined verdict says the run did not complete. A complete shard keeps its verdict.
func TestShardLinesSayHowShardsEnded(t *testing.T) {
	kept := Verdict{Known: true, Kept: true, LagKnown: true, DispatchLagP99Ms: 0.2, MaxLagMs: 1}
	synced := &rawlog.ClockState{Source: "adjtimex", Synchronised: true}
	var runs []run
	for i, st := range []string{rawlog.StatusComplete, rawlog.StatusRunning, rawlog.StatusInterrupted, rawlog.StatusFailed} {
		r := shardRun("runs/r1/shard-"+string(rune('0'+i)), i, 4, "r1", 0, synced)
		r.m.Status = st
		if st == rawlog.StatusFailed {
			r.m.Error = "worker 0 (pid 7, CPU 1) killed by signal killed: 3 of its 10 planned requests lost in flight"
		}
		runs = append(runs, r)
	}
	rep, err := checkShards(runs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Shards {
		rep.Shards[i].Verdict = kept
	}
	s := &Summary{Verdict: kept, Counts: Counts{Valid: 10}, RunStatus: rawlog.StatusComplete, Shards: rep}
	for _, r := range runs {
		s.RunDirs = append(s.RunDirs, r.dir)
		s.runStatus = append(s.runStatus, r.m.Status)
	}
	lines := ShardLines(s)
	if len(lines) != 5 {
		t.Fatalf("lines %q", lines)
	}
	for i, want := range []string{"; schedule kept (dispatch lag p99 0.20 ms)",
		"; CRASHED: its run.json still says running", "; INTERRUPTED: stopped",
		"; FAILED: worker 0 (pid 7, CPU 1) killed by signal killed: 3 of its 10 planned requests lost in flight; dispatch lag p99 0.20 ms over what it sent"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("shard %d line %q lacks %q", i, lines[i], want)
		}
		if i > 0 && strings.Contains(lines[i], "schedule kept") {
			t.Errorf("shard %d did not complete and its line says the schedule was kept: %q", i, lines[i])
		}
	}
	if want := "Shards: 4 of 4 present, 3 of them did not complete (shard 1 CRASHED, shard 2 INTERRUPTED, shard 3 FAILED)"; !strings.HasPrefix(lines[4], want) {
		t.Errorf("Shards line %q; want it to start %q", lines[4], want)
	}
	if v := VerdictLine(s); !strings.Contains(v, "But shard 1 CRASHED, shard 2 INTERRUPTED, shard 3 FAILED before the end") {
		t.Errorf("combined verdict %q does not say the run did not complete", v)
	}
	// One run, crashed: the verdict says so too.
	one := &Summary{Verdict: kept, Counts: Counts{Valid: 10}, RunStatus: rawlog.StatusRunning}
	if v := VerdictLine(one); !strings.Contains(v, "But the run CRASHED before the end") {
		t.Errorf("crashed run's verdict %q", v)
	}
	done := &Summary{Verdict: kept, Counts: Counts{Valid: 10}, RunStatus: rawlog.StatusComplete}
	if v := VerdictLine(done); strings.Contains(v, "But") {
		t.Errorf("complete run's verdict %q", v)
	}
}

// TestNoShardRan: a directory where nothing ran (every shard refused a past --start-at, so
// none wrote anything) is bad input saying so, not "open .../run.json: no such file"; one
// holding logs without run.json is left to the manifest's reader.
func TestNoShardRan(t *testing.T) {
	root := t.TempDir()
	shards := filepath.Join(root, "r1")
	for _, s := range []string{"shard-1", "shard-0"} {
		os.MkdirAll(filepath.Join(shards, s), 0o755)
	}
	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	for _, c := range []struct{ dir, want string }{
		{shards, "no shard ran: neither it nor its subdirectories (shard-0, shard-1) hold a run.json"},
		{empty, "no run and no shard ran into it"},
		{filepath.Join(root, "absent"), "does not exist: no run and no shard ran into it"},
	} {
		_, err := expandRunDirs([]string{c.dir})
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s: %v; want bad input with %q", c.dir, err, c.want)
		}
	}
	logs := filepath.Join(root, "logs")
	os.MkdirAll(logs, 0o755)
	os.WriteFile(filepath.Join(logs, "worker-000.rawlog"), nil, 0o644)
	if got, err := expandRunDirs([]string{logs}); err != nil || len(got) != 1 {
		t.Errorf("a directory of logs: %v %v", got, err)
	}
}
