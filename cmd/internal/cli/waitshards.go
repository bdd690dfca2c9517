package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

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
	if fs.NArg() != 1 {
		return bad(errors.New("want one run folder (usage: analyze wait-shards --shards N DIR)"))
	}
	o.Dir = fs.Arg(0)
	return export.WaitShards(o)
}
