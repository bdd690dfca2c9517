package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// A parent folder holding shard-<I>/ run directories stands for them, in index order.
func TestExpandRunDirs(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"shard-10", "shard-2", "shard-0", "notes"} {
		os.MkdirAll(filepath.Join(root, s), 0o755)
		if s != "notes" {
			os.WriteFile(filepath.Join(root, s, rawlog.ManifestName), []byte("{}"), 0o644)
		}
	}
	got, err := Expand([]string{root})
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
	if got, _ := Expand([]string{one}); len(got) != 1 || got[0] != one {
		t.Fatalf("a run directory itself expanded to %v", got)
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
		_, err := Expand([]string{c.dir})
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s: %v; want bad input with %q", c.dir, err, c.want)
		}
	}
	logs := filepath.Join(root, "logs")
	os.MkdirAll(logs, 0o755)
	os.WriteFile(filepath.Join(logs, "worker-000.rawlog"), nil, 0o644)
	if got, err := Expand([]string{logs}); err != nil || len(got) != 1 {
		t.Errorf("a directory of logs: %v %v", got, err)
	}
}

func shardRun(dir string, index, count int, id string) Run {
	m := &rawlog.Manifest{Host: "h" + dir}
	if count > 0 {
		m.Shard = &rawlog.ShardInfo{Index: index, Count: count, RunID: id}
	}
	return Run{Dir: dir, Manifest: m}
}

// The runs given together are one run, runs of one plan, or the shards of one distributed
// run, each index once; a missing shard is no error here.
func TestCheckShards(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []Run
		err  string
	}{
		{"not shards", []Run{shardRun("a", 0, 0, ""), shardRun("b", 0, 0, "")}, ""},
		{"missing", []Run{shardRun("a", 0, 3, "r"), shardRun("c", 2, 3, "r")}, ""},
		{"twice", []Run{shardRun("a", 1, 2, "r"), shardRun("b", 1, 2, "r")}, "shard 1 is also a"},
		{"other count", []Run{shardRun("a", 0, 2, "r"), shardRun("b", 1, 3, "r")}, "not one distributed run"},
		{"other run id", []Run{shardRun("a", 0, 2, "r"), shardRun("b", 1, 2, "s")}, `run id "s"`},
		{"mixed", []Run{shardRun("a", 0, 0, ""), shardRun("b", 1, 2, "r")}, "b is a shard of a distributed run and a is not"},
		{"bad identity", []Run{shardRun("a", 2, 2, "r")}, "is not a shard identity"},
	} {
		err := CheckShards(tc.runs)
		if tc.err == "" && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInput)) {
			t.Errorf("%s: error %v, want bad input with %q", tc.name, err, tc.err)
		}
	}
}
