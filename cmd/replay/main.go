// Command replay sends a plan file's requests to an inference server at their planned
// instants from CPU-pinned worker processes and writes a run directory of raw event logs
// and run.json for `analyze`.
//
//	replay --plan FILE --url URL --output-dir DIR [--workers N] [--cpus LIST] [--api-key-file FILE]
//	       [-H 'Name: value'] [--request-timeout-seconds S] [--benchmark-grace-period S|inf]
//	       [--connection-reuse-strategy pooled|never|sticky-user-sessions]
//	       [--wait-for-model-timeout S] [--request-content-type TYPE] [--ui-type none|simple|dashboard]
//	       [--shard-index I --shard-count N] [--rendezvous HOST:PORT [--rendezvous-timeout D] | --start-at TIME|+DURATION]
//	       [--run-id NAME] [--plan-hash HEX] [--local-addr LIST]
//	replay kubernetes --plan FILE --shards N --url URL --image IMAGE [flags] [-- REPLAY_FLAGS]
//	replay kubernetes preflight|create -f FILE|wait -f FILE|collector ...
//	replay copy-plan --plan-hash HEX SRC DST
//
// The shard flags split the plan by session over N replays sharing one start instant, which
// they agree on at a rendezvous on shard 0 or are given with --start-at (docs/distributed.md);
// without them the shard comes from JOB_COMPLETION_INDEX and LLMBENCH_SHARD_COUNT
// (Kubernetes) or SLURM_PROCID and SLURM_NTASKS (srun). `replay kubernetes` prints the
// manifests of such a run and checks, creates and waits for it; `replay copy-plan` is what
// their init container runs.
//
// Progress goes to stderr: a line rewritten in place on a terminal, else one line every 10 s
// (--ui-type none for none).
// The API key may also come from --api-key-file or OPENAI_API_KEY; it is never written
// anywhere. A key given with --api-key is visible to other local users in the process list. Ctrl-C (or
// SIGTERM) stops sending and gives in-flight requests the grace period; a second Ctrl-C
// aborts them at once. Before the run, the preflight (on unless --no-preflight) sends one tiny
// request of the plan's shape to each URL and refuses a run that could measure nothing.
// Exit status: 0 complete, 1 failed (every request failed too), 2 bad input or the
// preflight's refusal, 130 interrupted.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == replay.WorkerArg {
		os.Exit(replay.WorkerMain(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == "kubernetes" {
		os.Exit(cli.RunKubernetes(os.Args[2:], os.Stdout, os.Stderr, time.Now()))
	}
	if len(os.Args) > 1 && os.Args[1] == "copy-plan" {
		os.Exit(cli.RunCopyPlan(os.Args[2:], os.Stderr))
	}
	// stderr redacted (package redact): no line replay prints holds a credential of a URL.
	// `replay kubernetes` above writes the manifests whole: they must carry the real URLs.
	os.Exit(run(os.Args, redact.NewWriter(os.Stderr), os.Getenv))
}

func run(argv []string, stderr io.Writer, getenv func(string) string) int {
	o, err := parse(argv, stderr, getenv)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	if validation.Enabled() {
		// The validation writes into the run directory: every flag is checked before it.
		if err := validation.Check(); err != nil {
			fmt.Fprintf(stderr, "replay: %v\n", err)
			return 2
		}
		if err := replay.CheckOptions(*o); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	if err := validation.RunIfEnabled(o, stderr); err != nil { // --validate: the generator, before the run
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	code, _ := replay.RunReport(o, stderr)
	code = adaptiveFlags.Exit(code, stderr, "replay") // an adaptive search that failed or did not end: 1
	return validation.Exit(o, code, stderr)           // a failed --validate fails the run
}

// validation holds the generator validation flags of the last parse (one per process),
// adaptiveFlags the adaptive-scale ones.
var (
	validation    *cli.Validate
	adaptiveFlags *cli.Adaptive
)

// parse turns the command line into replay.Options; only this file reads flags and env.
func parse(argv []string, stderr io.Writer, getenv func(string) string) (*replay.Options, error) {
	rf := cli.NewReplay()
	fs := rf.FS
	fs.SetOutput(stderr)
	ver := cli.AddVersion(fs)
	dist := cli.AddDistributed(fs)
	validation = rf.Validation // --validate (cli/validate.go)
	helpAll := cli.AddHelpAll(fs)
	usage := func() {
		cli.Usage(stderr, "usage: replay --plan FILE --url URL --output-dir DIR [flags]\n"+
			"       replay kubernetes ... | replay copy-plan ...", fs, cli.Width(getenv, int(os.Stdout.Fd())), *helpAll)
	}
	fs.Usage = usage
	if err := fs.Parse(argv[1:]); err != nil {
		return nil, cli.ParseError(fs, err)
	}
	if *helpAll {
		usage()
		return nil, pflag.ErrHelp
	}
	if *ver {
		cli.PrintVersion(os.Stdout, "replay")
		return nil, pflag.ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if rf.Plan() == "" {
		return nil, errors.New("--plan is required")
	}
	if len(rf.URLs()) == 0 {
		return nil, errors.New("--url is required")
	}
	if rf.OutputDir() == "" {
		return nil, errors.New("--output-dir is required")
	}
	o, err := rf.Options(argv, stderr, getenv)
	if err != nil {
		return nil, err
	}
	adaptiveFlags = rf.Adaptive
	if err := rf.Adaptive.Apply(o, stderr); err != nil {
		return nil, err
	}
	if err := dist.Apply(o, getenv, time.Now(), stderr); err != nil {
		return nil, err
	}
	if o.ShardCount > 1 && !rf.PreflightAsked() {
		// A shard sends nothing before the shards agree on the start (a shard alone sends
		// nothing at all), and N shards would preflight N times: --preflight asks for it.
		o.Preflight = false
	}
	return o, nil
}
