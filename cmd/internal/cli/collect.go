package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/export"
)

// RunCollect is `analyze collect [--serve ADDR [--serve-for D]] DIR`: it writes a finished run
// folder (a run, or the shards of one and their merged analysis) as a tar to stdout, or
// serves it over HTTP, so that a FROM-scratch image, which has no tar for `kubectl cp`, can
// hand results out of a volume:
//
//	kubectl exec POD -- /bin/analyze collect /results/RUN > RUN.tar
//
// A run still running (a run.json saying so) is refused unless --partial (export.Collect).
// Exit 0, 1 when writing failed, 2 on bad input.
func RunCollect(args []string, stdout *os.File, stderr io.Writer) int {
	fs := NewFlagSet("analyze collect")
	serve := fs.String("serve", "", "serve the tar over HTTP on this address (GET /) instead of writing it to stdout")
	serveFor := fs.Duration("serve-for", time.Hour, "with --serve: stop serving after this long")
	partial := fs.Bool("partial", false, "collect even if a run.json says the run is still running")
	bad := func(err error) int {
		fmt.Fprintln(stderr, OneLine("analyze collect", err))
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: analyze collect [--serve ADDR] DIR > DIR.tar\n\n%s", fs.FlagUsages())
			return 0
		}
		return bad(ParseError(fs, err))
	}
	if fs.NArg() != 1 {
		return bad(errors.New("want one run folder (usage: analyze collect DIR > DIR.tar)"))
	}
	return export.Collect(export.CollectOptions{Dir: fs.Arg(0), Partial: *partial, Serve: *serve, ServeFor: *serveFor,
		Stdout: stdout, Stderr: stderr})
}
