package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/rawlog"
)

// shardState is one shard's folder as wait-shards sees it.
type shardState int

const (
	shardMissing shardState = iota // no run.json (the shard never started, or not yet)
	shardRunning                   // run.json says running
	shardDone                      // run.json holds the run's outcome
)

// readShardStates reads dir/shard-<I>/run.json of every shard: its state, and the status
// words of the finished ones.
func readShardStates(dir string, shards int) ([]shardState, []string) {
	st := make([]shardState, shards)
	status := make([]string, shards)
	for i := range st {
		m, err := rawlog.ReadManifest(filepath.Join(dir, fmt.Sprintf("shard-%d", i)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			st[i] = shardMissing
		case err != nil:
			// run.json is written whole (renamed into place), so one that cannot be read
			// stays so: the analysis reports it.
			st[i], status[i] = shardDone, "unreadable"
		case m.Status == rawlog.StatusRunning:
			st[i] = shardRunning
		default:
			st[i], status[i] = shardDone, m.Status
		}
	}
	return st, status
}

// RunWaitShards is `analyze wait-shards --shards N [--timeout D] DIR`: what a deployment's
// analysis runs first. It waits until every shard's DIR/shard-<I>/run.json holds its outcome;
// or, once every shard present has finished, until no missing one has appeared for --settle
// (a shard that did not start while the others ran never will); or until --timeout. It then
// exits 0 so that the analysis runs and names what is missing or failed; 2 on bad input.
func RunWaitShards(args []string, stderr io.Writer, sleep func(time.Duration)) int {
	fs := NewFlagSet("analyze wait-shards")
	shards := fs.Int("shards", 0, "number of shards of the run")
	timeout := fs.Duration("timeout", 24*time.Hour, "give up waiting after this long")
	settle := fs.Duration("settle", time.Minute, "once every shard present has finished, wait this long for a missing one")
	interval := fs.Duration("interval", 2*time.Second, "time between looks")
	bad := func(err error) int {
		fmt.Fprintln(stderr, OneLine("analyze wait-shards", err))
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: analyze wait-shards --shards N [--timeout D] DIR\n\n%s", fs.FlagUsages())
			return 0
		}
		return bad(ParseError(fs, err))
	}
	switch {
	case fs.NArg() != 1:
		return bad(errors.New("want one run folder (usage: analyze wait-shards --shards N DIR)"))
	case *shards < 1:
		return bad(fmt.Errorf("--shards %d: want at least 1", *shards))
	case *timeout <= 0 || *settle < 0 || *interval <= 0:
		return bad(errors.New("--timeout and --interval must be positive, --settle not negative"))
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return bad(fmt.Errorf("%s is not a folder", dir))
	}
	start := time.Now()
	var last string
	var settledSince time.Time
	for {
		st, status := readShardStates(dir, *shards)
		var missing, running, done []string
		for i, s := range st {
			switch s {
			case shardMissing:
				missing = append(missing, fmt.Sprint(i))
			case shardRunning:
				running = append(running, fmt.Sprint(i))
			default:
				done = append(done, fmt.Sprintf("%d: %s", i, status[i]))
			}
		}
		line := fmt.Sprintf("%d of %d shards finished (%s); running: %s; not started: %s",
			len(done), *shards, orNone(done), orNone(running), orNone(missing))
		if line != last {
			fmt.Fprintf(stderr, "analyze wait-shards: %s\n", line)
			last = line
			settledSince = time.Now()
		}
		switch {
		case len(done) == *shards:
			fmt.Fprintf(stderr, "analyze wait-shards: every shard finished; analysing %s\n", dir)
			return 0
		case len(running) == 0 && len(done) > 0 && time.Since(settledSince) >= *settle:
			fmt.Fprintf(stderr, "analyze wait-shards: shards %s never started while the others ran; analysing the others\n", strings.Join(missing, ", "))
			return 0
		case time.Since(start) >= *timeout:
			fmt.Fprintf(stderr, "analyze wait-shards: gave up after %v (running: %s; not started: %s); analysing what there is\n", *timeout, orNone(running), orNone(missing))
			return 0
		}
		sleep(*interval)
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
