package cli

import (
	"errors"
	"io"
	"os"
	"time"

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
	usage := Synopsis(stderr, "usage: analyze collect [--serve ADDR] DIR > DIR.tar", fs)
	if code, ok := Parse("analyze collect", fs, args, stderr, usage); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return BadInput(stderr, "analyze collect")(errors.New("want one run folder (usage: analyze collect DIR > DIR.tar)"))
	}
	return export.Collect(export.CollectOptions{Dir: fs.Arg(0), Partial: *partial, Serve: *serve, ServeFor: *serveFor,
		Stdout: stdout, Stderr: stderr})
}
