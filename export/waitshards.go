package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/rawlog"
)

// WaitShardsOptions are `analyze wait-shards`' options.
type WaitShardsOptions struct {
	// Dir is the run folder that holds shard-<I>/ of every shard.
	Dir string
	// Shards is the number of shards of the run.
	Shards int
	// Timeout: give up waiting after this long.
	Timeout time.Duration
	// Settle: once every shard present has finished, wait this long for a missing one.
	Settle time.Duration
	// Interval is the time between looks, slept by Sleep (time.Sleep; tests step time).
	Interval time.Duration
	Sleep    func(time.Duration)
	// Stderr receives the progress lines.
	Stderr io.Writer
}

// Check checks the options on their own and that Dir, if it exists, is a folder.
func (o WaitShardsOptions) Check() error {
	switch {
	case o.Shards < 1:
		return fmt.Errorf("--shards %d: want at least 1", o.Shards)
	case o.Timeout <= 0 || o.Settle < 0 || o.Interval <= 0:
		return errors.New("--timeout and --interval must be positive, --settle not negative")
	}
	if st, err := os.Stat(o.Dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%s is not a folder", o.Dir)
	}
	return nil
}

// shardState is one shard's folder as WaitShards sees it.
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

// WaitShards is what a deployment's analysis runs first. It waits until every shard's
// Dir/shard-<I>/run.json holds its outcome; or, once every shard present has finished, until
// no missing one has appeared for Settle (a shard that did not start while the others ran
// never will); or until Timeout. It then returns 0 so that the analysis runs and names what
// is missing or failed; ExitBadInput on bad options (said on Stderr).
func WaitShards(o WaitShardsOptions) int {
	stderr := o.Stderr
	if err := o.Check(); err != nil {
		fmt.Fprintln(stderr, errline.Format("analyze wait-shards", err))
		return ExitBadInput
	}
	start := time.Now()
	var last string
	var settledSince time.Time
	for {
		st, status := readShardStates(o.Dir, o.Shards)
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
			len(done), o.Shards, orNone(done), orNone(running), orNone(missing))
		if line != last {
			fmt.Fprintf(stderr, "analyze wait-shards: %s\n", line)
			last = line
			settledSince = time.Now()
		}
		switch {
		case len(done) == o.Shards:
			fmt.Fprintf(stderr, "analyze wait-shards: every shard finished; analysing %s\n", o.Dir)
			return 0
		case len(running) == 0 && len(done) > 0 && time.Since(settledSince) >= o.Settle:
			fmt.Fprintf(stderr, "analyze wait-shards: shards %s never started while the others ran; analysing the others\n", strings.Join(missing, ", "))
			return 0
		case time.Since(start) >= o.Timeout:
			fmt.Fprintf(stderr, "analyze wait-shards: gave up after %v (running: %s; not started: %s); analysing what there is\n", o.Timeout, orNone(running), orNone(missing))
			return 0
		}
		o.Sleep(o.Interval)
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
