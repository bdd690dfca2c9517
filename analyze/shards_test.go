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
