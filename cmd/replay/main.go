// Command replay sends a plan file's requests to an inference server at their planned
// instants from CPU-pinned worker processes and writes a run directory of raw event logs
// and run.json for `analyze`.
//
//	replay --plan FILE --url URL --output-dir DIR [--workers N] [--cpus LIST] [--api-key KEY]
//	       [-H 'Name: value'] [--request-timeout-seconds S] [--benchmark-grace-period S|inf]
//	       [--connection-reuse-strategy pooled|never|sticky-user-sessions]
//
// The API key may also come from OPENAI_API_KEY; it is never written anywhere. Ctrl-C (or
// SIGTERM) stops sending and gives in-flight requests the grace period; a second Ctrl-C
// aborts them at once. Exit status: 0 complete, 1 failed, 2 bad input, 130 interrupted.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == replay.WorkerArg {
		os.Exit(replay.WorkerMain(os.Stdin, os.Stdout))
	}
	os.Exit(run(os.Args, os.Stderr, os.Getenv))
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
	r, err := replay.New(*o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		n := 0
		for s := range sig {
			n++
			if n == 1 {
				fmt.Fprintf(stderr, "\nreplay: %v: stopping; in-flight requests get the grace period (again to abort)\n", s)
				r.Stop()
			} else {
				fmt.Fprintf(stderr, "\nreplay: %v: aborting in-flight requests\n", s)
				r.Abort()
			}
		}
	}()
	m, err := r.Run()
	if m != nil {
		c := m.Counts
		fmt.Fprintf(stderr, "replay: %s: %d planned, %d completed, %d failed, %d cancelled, %d aborted, %d not sent, %d lost; run in %s\n",
			m.Status, c.Planned, c.Completed, c.Failed, c.Cancelled, c.Aborted, c.NotSent, c.Lost, o.OutputDir)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if m.Status == rawlog.StatusInterrupted {
		return 130
	}
	return 0
}

// parse turns the command line into replay.Options; only this file reads flags and env.
func parse(argv []string, stderr io.Writer, getenv func(string) string) (*replay.Options, error) {
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	plan := fs.String("plan", "", "plan file to replay (written by `plan`)")
	urls := fs.StringArrayP("url", "u", nil, "base URL (http:// or https://); repeat to spread sessions over several servers")
	urlStrategy := fs.String("url-strategy", replay.URLRoundRobin, "how sessions are spread over several --url: round_robin")
	out := fs.String("output-dir", "", "run directory to create (must not hold a run already)")
	workers := fs.Int("workers", 0, "worker processes (default: one per CPU in --cpus)")
	cpus := fs.String("cpus", "", "CPUs to pin workers to, one each, e.g. 0-3,6 (default: every CPU this process may use)")
	noPin := fs.Bool("no-pin", false, "do not pin workers to CPUs")
	apiKey := fs.String("api-key", "", "API key sent as 'Authorization: Bearer KEY', or 'x-api-key: KEY' to the Anthropic Messages API (default $OPENAI_API_KEY); never written anywhere")
	headers := fs.StringArrayP("header", "H", nil, "extra request header 'Name: value' (repeatable)")
	timeout := fs.Float64("request-timeout-seconds", replay.DefaultRequestTimeout.Seconds(), "per-request timeout, connect to last byte")
	grace := fs.String("benchmark-grace-period", strconv.FormatFloat(replay.DefaultGracePeriod.Seconds(), 'f', -1, 64),
		"seconds in-flight requests may run after Ctrl-C or after a duration-sized plan's duration; inf to wait for them")
	reuse := fs.String("connection-reuse-strategy", replay.ReusePooled, "pooled, never (new connection per request) or sticky-user-sessions (one per session)")
	sessionHeader := fs.String("session-header", replay.DefaultSessionHeader, "header carrying the session id; empty for none")
	gpuInterval := fs.Duration("gpu-sample-interval", replay.DefaultGPUSampleInterval, "NVML GPU sampling period")
	noGPU := fs.Bool("no-gpu-telemetry", false, "do not sample GPUs")
	caFile := fs.String("tls-ca-cert", "", "PEM file of CAs to trust for https URLs")
	insecure := fs.Bool("tls-insecure-skip-verify", false, "accept any server certificate")
	spin := fs.Duration("spin", 0, "wake this long before each open-loop send and busy-wait the rest (trades worker CPU for lower schedule lag)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: replay --plan FILE --url URL --output-dir DIR [flags]\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(argv[1:]); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *plan == "" {
		return nil, errors.New("--plan is required")
	}
	if len(*urls) == 0 {
		return nil, errors.New("--url is required")
	}
	if *out == "" {
		return nil, errors.New("--output-dir is required")
	}
	o := &replay.Options{Plan: *plan, URLs: *urls, URLStrategy: *urlStrategy, OutputDir: *out,
		Workers: *workers, NoPin: *noPin, APIKey: *apiKey, Headers: *headers, ConnectionReuse: *reuse,
		SessionHeader: *sessionHeader, GPUSampleInterval: *gpuInterval, TLSCAFile: *caFile,
		TLSInsecureSkipVerify: *insecure, Spin: *spin, CommandLine: argv, ToolVersion: version(),
		Notice: stderr}
	if o.APIKey == "" {
		o.APIKey = getenv("OPENAI_API_KEY")
	}
	if *workers < 0 {
		return nil, fmt.Errorf("--workers %d: must be positive", *workers)
	}
	if *cpus != "" {
		c, err := replay.ParseCPUList(*cpus)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		if !*noPin {
			if err := replay.CheckCPUs(c); err != nil {
				return nil, fmt.Errorf("--cpus %q: %w", *cpus, err)
			}
		}
		o.CPUs = c
	}
	if *timeout <= 0 || math.IsNaN(*timeout) || math.IsInf(*timeout, 0) {
		return nil, fmt.Errorf("--request-timeout-seconds %v: must be a positive number", *timeout)
	}
	o.RequestTimeout = seconds(*timeout)
	g, err := parseGrace(*grace)
	if err != nil {
		return nil, err
	}
	o.GracePeriod = g
	if *noGPU {
		o.GPUSampleInterval = -1
	} else if *gpuInterval <= 0 {
		return nil, fmt.Errorf("--gpu-sample-interval %v: must be positive (use --no-gpu-telemetry to turn sampling off)", *gpuInterval)
	}
	// The progress line only makes sense on a terminal; logs and pipes stay clean.
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && stderr == io.Writer(os.Stderr) {
		o.Progress = os.Stderr
	}
	return o, nil
}

func parseGrace(s string) (time.Duration, error) {
	if strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinite") {
		return replay.InfiniteGrace, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("--benchmark-grace-period %q: want seconds (>= 0) or inf", s)
	}
	return seconds(v), nil
}

func seconds(v float64) time.Duration {
	if v*1e9 > math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(v * float64(time.Second))
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
