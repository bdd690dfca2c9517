package cli

import (
	"errors"
	"io"
	"time"

	"github.com/llmbench/llmbench/export"
)

// RunWaitShards is `analyze wait-shards --shards N [--timeout D] DIR`: what a deployment's
// analysis runs first (export.WaitShards). It exits 0 once the analysis should run; 2 on bad
// input.
func RunWaitShards(args []string, stderr io.Writer, sleep func(time.Duration)) int {
	fs := NewFlagSet("analyze wait-shards")
	o := export.WaitShardsOptions{Sleep: sleep, Stderr: stderr}
	fs.IntVar(&o.Shards, "shards", 0, "number of shards of the run")
	fs.DurationVar(&o.Timeout, "timeout", 24*time.Hour, "give up waiting after this long")
	fs.DurationVar(&o.Settle, "settle", time.Minute, "once every shard present has finished, wait this long for a missing one")
	fs.DurationVar(&o.Interval, "interval", 2*time.Second, "time between looks")
	usage := Synopsis(stderr, "usage: analyze wait-shards --shards N [--timeout D] DIR", fs)
	if code, ok := Parse("analyze wait-shards", fs, args, stderr, usage); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return BadInput(stderr, "analyze wait-shards")(errors.New("want one run folder (usage: analyze wait-shards --shards N DIR)"))
	}
	o.Dir = fs.Arg(0)
	return export.WaitShards(o)
}
