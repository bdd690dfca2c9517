// Command analyze computes every metric of one benchmark run (or the shards of one plan) from
// its raw event logs, writes AIPerf-compatible exports into the run directory, prints the
// console table and the verdict on the client's schedule, and checks release gates.
//
//	analyze [flags] RUN_DIR [RUN_DIR...]
//	analyze compare [flags] RUN_A RUN_B [RUN...]   (compare.html, compare.json: docs/report.md)
//	analyze collect [--serve ADDR] DIR > DIR.tar   (a finished run as a tar: docs/distributed.md)
//	analyze wait-shards --shards N [--timeout D] DIR (wait for a distributed run's shards)
//
// Exit status: 0 when every gate holds, 1 when a gate or the error-rate bound fails or a log
// is damaged (the other logs are still analysed), 2 on bad input (one line on stderr).
package main

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/redact"
)

// main runs analyze with its output redacted (package redact): no line it prints holds a
// credential of a URL it read.
func main() {
	// The key a replay of this run may have sent: a server's error body may echo it.
	redact.AddCredentials(os.Getenv("OPENAI_API_KEY"), nil)
	os.Exit(run(os.Args[1:], redact.NewWriter(os.Stdout), redact.NewWriter(os.Stderr)))
}

// run parses the command line (flags: cli.Analyze) and analyses the run directories.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "compare" { // analyze compare RUN_A RUN_B [RUN...] (cli/compare.go)
		return cli.RunCompare(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "collect" { // analyze collect DIR > DIR.tar (cli/collect.go)
		return cli.RunCollect(args[1:], os.Stdout, stderr)
	}
	if len(args) > 0 && args[0] == "wait-shards" { // analyze wait-shards --shards N DIR (cli/waitshards.go)
		return cli.RunWaitShards(args[1:], stderr, time.Sleep)
	}
	a := cli.NewAnalyze()
	fs := a.FS
	ver := cli.AddVersion(fs)
	helpAll := cli.AddHelpAll(fs)
	checkOnly := fs.Bool("check-flags", false, "check the flags (bounds, gates, goodput, the --gates file) and exit: 0 when they are valid, 2 with one line when not; no run is read (scripts that analyse after a replay check first: deploy/slurm)")
	fs.Usage = func() {}
	bad := cli.BadInput(stderr, "analyze")
	if code, ok := cli.Parse("analyze", fs, args, stderr, func() { usage(stdout, fs, *helpAll) }); !ok {
		return code
	}
	if *helpAll {
		usage(stdout, fs, true)
		return 0
	}
	if *ver {
		cli.PrintVersion(stdout, "analyze")
		return 0
	}
	if *checkOnly {
		if err := a.Check(); err != nil {
			return bad(err)
		}
		return 0
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		return bad(errors.New("no run directory given (usage: analyze [flags] RUN_DIR [RUN_DIR...])"))
	}
	return a.Run(dirs, stdout, stderr)
}

func usage(w io.Writer, fs *pflag.FlagSet, all bool) {
	cli.Usage(w, "usage: analyze [flags] RUN_DIR [RUN_DIR...]\n"+
		"       analyze compare RUN_A RUN_B [RUN...] [flags]\n"+
		"       analyze collect DIR > DIR.tar\n"+
		"       analyze wait-shards --shards N DIR", fs, cli.StdoutWidth(), all)
}
