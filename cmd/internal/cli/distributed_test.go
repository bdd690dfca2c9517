package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/replay"
)

// The shard identity comes from the flags, else Kubernetes' or Slurm's variables; bad
// values are one-line errors naming the flag or variable.
func TestDistributedShardIdentity(t *testing.T) {
	for _, tc := range []struct {
		name         string
		args         []string
		env          map[string]string
		index, count int
		from, err    string
	}{
		{name: "none", index: 0, count: 0},
		{name: "flags", args: []string{"--shard-index", "2", "--shard-count", "3"}, index: 2, count: 3},
		{name: "kubernetes", env: map[string]string{"JOB_COMPLETION_INDEX": "1", "LLMBENCH_SHARD_COUNT": "4"}, index: 1, count: 4, from: "JOB_COMPLETION_INDEX, LLMBENCH_SHARD_COUNT"},
		{name: "kubernetes with count flag", args: []string{"--shard-count", "4"}, env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, index: 3, count: 4},
		{name: "slurm", env: map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, index: 1, count: 2, from: "SLURM_PROCID, SLURM_NTASKS"},
		{name: "flags win", args: []string{"--shard-index", "0", "--shard-count", "2"}, env: map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "5"}, index: 0, count: 2},
		{name: "ntasks alone is not a shard", env: map[string]string{"SLURM_NTASKS": "5"}, index: 0, count: 0},
		{name: "index without count", env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, err: "$JOB_COMPLETION_INDEX 2 without a shard count"},
		{name: "index past count", args: []string{"--shard-count", "2"}, env: map[string]string{"SLURM_PROCID": "2"}, err: "$SLURM_PROCID 2: must be below the shard count 2 (--shard-count)"},
		{name: "not a number", env: map[string]string{"SLURM_PROCID": "x"}, err: `$SLURM_PROCID "x": want a number`},
		{name: "negative flag", args: []string{"--shard-index", "-1", "--shard-count", "2"}, err: "--shard-index -1: must not be negative"},
		// now is 1970 here: an instant more than a day ahead is refused before anything starts.
		{name: "start absurdly far ahead", args: []string{"--start-at", "2099-01-01T00:00:00Z"}, err: "--start-at 2099-01-01T00:00:00Z is 47117 days from now, more than the 24h0m0s"},
		{name: "start two days ahead", args: []string{"--start-at", "+48h"}, err: "is 2 days from now"},
		{name: "start a day ahead", args: []string{"--start-at", "+24h"}},
		// Issue 24: one shard flag without the other is bad input, even --shard-index 0
		// (alone it would replay the whole plan on every shard).
		{name: "index flag 0 alone", args: []string{"--shard-index", "0"}, err: "--shard-index 0 without a shard count: pass --shard-count"},
		{name: "index flag alone", args: []string{"--shard-index", "1"}, err: "--shard-index 1 without a shard count"},
		{name: "count flag alone", args: []string{"--shard-count", "3"}, err: "--shard-count 3 without a shard index: pass --shard-index"},
		{name: "count variable alone", env: map[string]string{"LLMBENCH_SHARD_COUNT": "3"}, err: "$LLMBENCH_SHARD_COUNT 3 without a shard index"},
		{name: "count 0 alone is the whole plan", args: []string{"--shard-count", "0"}, index: 0, count: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := NewFlagSet("test")
			d := AddDistributed(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var notice bytes.Buffer
			o := &replay.Options{}
			err := d.Apply(o, func(k string) string { return tc.env[k] }, time.Unix(0, 0), &notice)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || o.ShardIndex != tc.index || o.ShardCount != tc.count {
				t.Fatalf("shard %d of %d, %v; want %d of %d", o.ShardIndex, o.ShardCount, err, tc.index, tc.count)
			}
			if tc.from != "" && !strings.Contains(notice.String(), "(from "+tc.from+")") {
				t.Fatalf("notice %q does not say where from (%s)", notice.String(), tc.from)
			}
		})
	}
}

func TestLocalAddrFlag(t *testing.T) {
	fs := NewFlagSet("test")
	d := AddDistributed(fs)
	if err := fs.Parse([]string{"--local-addr", "127.0.0.2-127.0.0.4"}); err != nil {
		t.Fatal(err)
	}
	o := &replay.Options{}
	if err := d.Apply(o, func(string) string { return "" }, time.Now(), &bytes.Buffer{}); err != nil || len(o.LocalAddrs) != 3 {
		t.Fatalf("%v %v", o.LocalAddrs, err)
	}
	fs = NewFlagSet("test")
	d = AddDistributed(fs)
	fs.Parse([]string{"--local-addr", "127.0.0.9-127.0.0.2"})
	if err := d.Apply(o, func(string) string { return "" }, time.Now(), &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), "--local-addr") {
		t.Fatalf("backwards range: %v", err)
	}
}

// Several srun tasks on one node that Slurm did not bind: each takes its part of the node's
// CPUs (SLURM_LOCALID of SLURM_STEP_TASKS_PER_NODE); bound tasks and one task per node keep
// their affinity; bad values name the variable.
func TestSlurmLocalPart(t *testing.T) {
	base := map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "4"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		part replay.CPUPart
		err  string
	}{
		{name: "no srun", env: map[string]string{}},
		{name: "two tasks on one node", env: map[string]string{"SLURM_LOCALID": "1", "SLURM_STEP_TASKS_PER_NODE": "2"}, part: replay.CPUPart{Index: 1, Count: 2}},
		{name: "repeated counts", env: map[string]string{"SLURM_LOCALID": "2", "SLURM_NODEID": "3", "SLURM_STEP_TASKS_PER_NODE": "1(x3),3"}, part: replay.CPUPart{Index: 2, Count: 3}},
		{name: "one task on this node", env: map[string]string{"SLURM_LOCALID": "0", "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "2,1"}},
		{name: "bound by Slurm", env: map[string]string{"SLURM_LOCALID": "1", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_CPU_BIND_TYPE": "mask_cpu:"}},
		{name: "binding none", env: map[string]string{"SLURM_LOCALID": "1", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_CPU_BIND_TYPE": "none"}, part: replay.CPUPart{Index: 1, Count: 2}},
		{name: "bad count", env: map[string]string{"SLURM_LOCALID": "0", "SLURM_STEP_TASKS_PER_NODE": "2(x"}, err: `$SLURM_STEP_TASKS_PER_NODE "2(x": item "2(x"`},
		{name: "local id past the node's tasks", env: map[string]string{"SLURM_LOCALID": "2", "SLURM_STEP_TASKS_PER_NODE": "2"}, err: "$SLURM_LOCALID 2: must be below this node's 2 tasks"},
		{name: "node past the list", env: map[string]string{"SLURM_LOCALID": "0", "SLURM_NODEID": "2", "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}, err: "$SLURM_NODEID 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := NewFlagSet("test")
			d := AddDistributed(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			var notice bytes.Buffer
			o := &replay.Options{}
			err := d.Apply(o, func(k string) string { return env[k] }, time.Unix(0, 0), &notice)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || o.LocalPart != tc.part {
				t.Fatalf("part %+v (%v), want %+v", o.LocalPart, err, tc.part)
			}
			if tc.part.Count > 1 && !strings.Contains(notice.String(), "from SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE") {
				t.Errorf("notice %q", notice.String())
			}
		})
	}
	// --cpus given: the user's CPUs, no part.
	fs := NewFlagSet("test")
	d := AddDistributed(fs)
	o := &replay.Options{CPUs: []int{0}}
	env := map[string]string{"SLURM_LOCALID": "1", "SLURM_STEP_TASKS_PER_NODE": "2"}
	if err := d.Apply(o, func(k string) string { return env[k] }, time.Unix(0, 0), &bytes.Buffer{}); err != nil || o.LocalPart.Count != 0 {
		t.Errorf("with --cpus: part %+v, %v", o.LocalPart, err)
	}
}

func TestRendezvousFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		addr    string
		timeout time.Duration
		err     string
	}{
		{args: nil},
		{args: []string{"--rendezvous", "r1-replay-0.r1-shards:7411"}, addr: "r1-replay-0.r1-shards:7411"},
		{args: []string{"--rendezvous", "h:1", "--rendezvous-timeout", "90s"}, addr: "h:1", timeout: 90 * time.Second},
		{args: []string{"--rendezvous", "h:1", "--rendezvous-timeout", "0s"}, err: "--rendezvous-timeout 0s: must be positive"},
	} {
		fs := NewFlagSet("test")
		d := AddDistributed(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o := &replay.Options{}
		err := d.Apply(o, func(string) string { return "" }, time.Unix(0, 0), &bytes.Buffer{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || o.Rendezvous != tc.addr || o.RendezvousTimeout != tc.timeout {
			t.Errorf("%q: %q %v %v", tc.args, o.Rendezvous, o.RendezvousTimeout, err)
		}
	}
}
