// Command profile is AIPerf's `aiperf profile` in one command: it compiles a plan from
// AIPerf's flags, replays it against the server and analyses the run, writing everything
// into a new artifact directory, artifacts/<model>-openai-<endpoint>-<stimulus>/:
//
//	profile --model M [plan, replay and analyze flags]   plan -> replay -> analyze
//	profile --plan FILE [replay and analyze flags]      replay and analyse a shared plan
//
// The directory holds the plan (plan.llmplan), the run (raw logs, run.json) and the exports,
// so the run can be replayed or analysed again elsewhere. An existing directory is never
// reused: the new one gets a suffix (-2, -3, ...). Every flag is the one plan, replay or
// analyze defines (cmd/internal/cli). Exit status: 0 complete and every gate holds, 1 the
// run or a gate failed, 2 bad input, 130 interrupted.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
)

// planFile is the plan's name inside the artifact directory.
const planFile = "plan.llmplan"

// defaultURL is AIPerf's --url default.
const defaultURL = "localhost:8000"

func main() {
	if len(os.Args) > 1 && os.Args[1] == replay.WorkerArg {
		os.Exit(replay.WorkerMain(os.Stdin, os.Stdout))
	}
	// Its output redacted (package redact): no line it prints holds a credential of a URL.
	os.Exit(run(os.Args, redact.NewWriter(os.Stdout), redact.NewWriter(os.Stderr), os.Getenv))
}

// command is profile's composed flag set: the plan, replay and analyze sets, profile's own
// flags, and AIPerf's flags that have no work here.
type command struct {
	fs          *pflag.FlagSet
	plan        *cli.Plan
	replay      *cli.Replay
	analyze     *cli.Analyze
	sweep       *cli.Sweep
	artifactDir string
	version     bool
}

func newCommand() *command {
	c := &command{fs: cli.NewFlagSet("profile"), plan: cli.NewPlan(), replay: cli.NewReplay(), analyze: cli.NewAnalyze(), sweep: cli.NewSweep()}
	c.sweep.Lists(c.plan.FS) // --concurrency 1,2,4 and --request-rate 5,10: AIPerf's sweep lists
	for _, s := range []*pflag.FlagSet{c.plan.FS, c.replay.FS, c.analyze.FS, c.sweep.FS} {
		c.fs.AddFlagSet(s) // a name two sets define (--tokenizer, --plan, ...) is added once: see share
	}
	c.fs.StringVar(&c.artifactDir, "artifact-dir", "artifacts", "folder of the artifact directories: each run gets a new <model>-openai-<endpoint>-<stimulus> inside (--output-dir names the directory itself)")
	c.fs.BoolVar(&c.version, "version", false, "print the version and exit")
	for _, n := range noted {
		if c.fs.Lookup(n.name) != nil {
			continue // a flag that now has work here (a composed set defines it)
		}
		if n.isBool {
			c.fs.Bool(n.name, false, "accepted: "+n.note)
		} else {
			c.fs.String(n.name, "", "accepted: "+n.note)
		}
		if n.optional != "" {
			c.fs.Lookup(n.name).NoOptDefVal = n.optional
		}
	}
	c.fs.CountP("verbose", "v", "accepted: more detail is in the run directory (raw logs, run.json); the output is the same")
	for _, n := range multimodal {
		c.fs.String(n, "", "not supported yet")
		c.fs.Lookup(n).Hidden = true
	}
	c.fs.Bool("download-video-content", false, "not supported yet")
	c.fs.Lookup("download-video-content").Hidden = true
	return c
}

// noted are AIPerf's flags that configure its own processes or collectors: accepted, so
// command lines carry over, with one line saying what happens here instead.
var noted = []struct {
	name, note, optional string
	isBool               bool
}{
	{name: "workers-max", note: "replay runs one worker process per CPU instead (--workers, --cpus)"},
	{name: "record-processors", note: "analyze reads the raw logs after the run instead (--parallelism)"},
	{name: "zmq-host", note: "workers talk to the coordinator over pipes, not ZMQ"},
	{name: "zmq-ipc-path", note: "workers talk to the coordinator over pipes, not ZMQ"},
	{name: "zmq-dual-bind", note: "workers talk to the coordinator over pipes, not ZMQ", isBool: true},
	{name: "api-host", note: "there is no live API; progress is on stderr"},
	{name: "api-port", note: "there is no live API; progress is on stderr"},
	{name: "log-level", note: "messages are fixed one-liners on stderr; the run directory keeps the detail"},
	{name: "gpu-telemetry", note: "replay samples local GPUs through NVML by default (--no-gpu-telemetry, --gpu-sample-interval)", optional: "pynvml"},
	{name: "no-server-metrics", note: "server /metrics are not scraped", isBool: true},
	{name: "server-metrics", note: "server /metrics are not scraped", optional: "default"},
}

// multimodal are AIPerf's media flags not served yet (the image, audio and video flags
// come with the plan flag set, cmd/internal/cli/media.go): a video's embedded audio track.
var multimodal = []string{
	"video-audio-sample-rate", "video-audio-num-channels", "video-audio-codec", "video-audio-depth",
}

// share copies a flag given on the command line into the sets that define the same name
// but were not added to c.fs (AddFlagSet keeps the first): --tokenizer and
// --use-server-token-count then reach analyze as well as plan.
func (c *command) share() error {
	for _, s := range []*pflag.FlagSet{c.replay.FS, c.analyze.FS} {
		var err error
		s.VisitAll(func(f *pflag.Flag) {
			top := c.fs.Lookup(f.Name)
			if err != nil || top == nil || top == f || !top.Changed {
				return
			}
			err = s.Set(f.Name, top.Value.String())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func run(argv []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c := newCommand()
	bad := func(err error) int {
		fmt.Fprintln(stderr, cli.OneLine("profile", err))
		return 2
	}
	if err := c.fs.Parse(argv[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.usage(stdout)
			return 0
		}
		return bad(cli.ParseError(c.fs, err))
	}
	switch {
	case c.version:
		cli.PrintVersion(stdout, "profile")
		return 0
	case c.plan.Help():
		c.usage(stdout)
		return 0
	case c.fs.NArg() > 0:
		return bad(fmt.Errorf("unexpected argument %q (flags only; see profile --help)", c.fs.Arg(0)))
	}
	if err := c.check(stderr); err != nil {
		return bad(err)
	}
	if err := c.share(); err != nil {
		return bad(err)
	}
	planMode := c.replay.Plan() != ""
	so, err := c.sweep.Options(planMode, cli.Changed(c.fs, "goodput"))
	if err != nil {
		return bad(err)
	}
	if len(c.replay.URLs()) == 0 {
		if err := c.replay.FS.Set("url", defaultURL); err != nil {
			return bad(err)
		}
	}
	var name string
	streaming := c.plan.O.Streaming
	if planMode {
		n, s, err := planArtifactName(c.replay.Plan())
		if err != nil {
			return bad(err)
		}
		name, streaming = n, s
	} else {
		c.plan.O.Output = planFile // stands for the artifact directory's, made below
	}
	// Every flag of every stage, at every point, before anything is made or sent (check.go).
	if err := c.checkStages(so, planMode, streaming, argv, getenv); err != nil {
		return bad(err)
	}
	if !planMode {
		o := c.plan.O
		name = artifactName(o.Model, o.EndpointType, stimulus{o.Concurrency, o.RequestRate, o.FixedSchedule, o.UserCentricRate, o.NumUsers})
		if multi := multiName(so); multi != "" {
			name = modelEndpoint(o.Model, o.EndpointType) + "-" + multi
		}
	}
	base := filepath.Join(c.artifactDir, name)
	if cli.Changed(c.fs, "output-dir") {
		base = c.replay.OutputDir()
	}
	dir, err := newDir(base)
	if err != nil {
		return bad(err)
	}
	fmt.Fprintf(stderr, "profile: artifact directory %s\n", dir)
	r := &runner{c: c, o: so, sharedPlan: c.replay.Plan(), argv: argv, stdout: stdout, stderr: stderr, getenv: getenv}
	var code int
	switch {
	case so.Search != "":
		code = r.search(dir)
	case len(so.Points) > 1:
		code = r.sweep(dir)
	default:
		code = r.point(dir, so.Points[0]).code
	}
	if code == 2 {
		removeUnused(dir) // bad input only the compiler could see (the input file's contents)
	}
	return code
}

// removeUnused removes the artifact directory dir when it holds no file: bad input found
// once it was made (by the compiler, in the input's contents) leaves nothing behind.
func removeUnused(dir string) {
	empty := true
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			empty = false
			return filepath.SkipAll
		}
		return nil
	})
	if empty {
		_ = os.RemoveAll(dir)
	}
}

// runOnce replays the plan at planPath into runDir and analyses it there. It returns the
// summary (nil when the analysis failed) and the exit status: replay's when it failed,
// else analyze's.
func (r *runner) runOnce(planPath, runDir string) (*analyze.Summary, int, int) {
	c := r.c
	bad := func(err error) (*analyze.Summary, int, int) {
		fmt.Fprintln(r.stderr, cli.OneLine("profile", err))
		return nil, 2, 2
	}
	for _, kv := range [][2]string{{"plan", planPath}, {"output-dir", runDir}} {
		if err := c.replay.FS.Set(kv[0], kv[1]); err != nil {
			return bad(err)
		}
		if err := c.analyze.FS.Set(kv[0], kv[1]); err != nil {
			return bad(err)
		}
	}
	o, err := c.replay.Options(r.argv, r.stderr, r.getenv)
	if err != nil {
		return bad(err)
	}
	if err := r.validateGenerator(o); err != nil { // --validate-generator (validate.go)
		return bad(err)
	}
	code := cli.RunReplay(o, r.stderr)
	if code == 2 {
		return nil, code, code
	}
	acode := c.analyze.Run([]string{runDir}, r.stdout, r.stderr)
	fmt.Fprintf(r.stderr, "profile: artifacts in %s (replay again: replay --plan %s --url URL --output-dir DIR)\n", runDir, planPath)
	if code != 0 {
		return c.analyze.Last(), code, code
	}
	return c.analyze.Last(), code, acode
}

// placePlan puts the point's plan into dir: the shared --plan copied, or one compiled from
// the flags (set to the point's values). It returns the plan's path and an exit status.
func (r *runner) placePlan(dir string) (string, int) {
	planPath := filepath.Join(dir, planFile)
	if r.sharedPlan != "" {
		if err := copyFile(r.sharedPlan, planPath); err != nil {
			fmt.Fprintln(r.stderr, cli.OneLine("profile", err))
			return "", 2
		}
		return planPath, 0
	}
	r.c.plan.O.Output = planPath
	return planPath, r.c.plan.Compile(r.getenv, r.stdout, r.stderr)
}

// check refuses what profile cannot do and notes the AIPerf flags that have no work here.
func (c *command) check(stderr io.Writer) error {
	var err error
	c.fs.Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		switch {
		case f.Hidden:
			err = fmt.Errorf("--%s: a video's embedded audio track is not supported yet", f.Name)
		case f.Name == "output":
			err = fmt.Errorf("--output: profile keeps the plan in the artifact directory as %s (to compile one elsewhere, use plan -o)", planFile)
		case f.Name == "ui-type":
			err = c.replay.CheckUI() // before the plan is compiled; replay says what dashboard does
		case strings.HasPrefix(f.Usage, "accepted: "):
			fmt.Fprintf(stderr, "profile: --%s accepted: %s\n", f.Name, strings.TrimPrefix(f.Usage, "accepted: "))
		}
	})
	if err != nil || c.replay.Plan() == "" {
		return err
	}
	// --plan FILE: the plan is given, so the flags that shape one have nothing to do.
	c.plan.FS.VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && !sharedWithAnalyze[f.Name] {
			err = fmt.Errorf("--%s shapes a plan, but --plan %s gives one: drop one of them", f.Name, c.replay.Plan())
		}
	})
	return err
}

// sharedWithAnalyze are plan flags analyze defines too: they stay meaningful with --plan.
var sharedWithAnalyze = map[string]bool{"tokenizer": true, "use-server-token-count": true}

func (c *command) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: profile --model M [flags]        plan -> replay -> analyze (AIPerf's aiperf profile)\n"+
		"       profile --plan FILE [flags]      replay and analyse a shared plan\n\nflags:\n%s\naliases (AIPerf's other names):\n%s",
		c.fs.FlagUsages(), cli.AliasUsage(c.fs))
}

// stimulus is what AIPerf names a run's load by.
type stimulus struct {
	concurrency int
	rate        float64
	fixed       bool
	userRate    float64
	users       int
}

// artifactName is AIPerf's artifact directory name <model>-<service kind>-<endpoint>-<stimulus>,
// e.g. Qwen_Qwen3-0.6B-openai-chat-concurrency1 or ...-request_rate10.
func artifactName(model, endpoint string, s stimulus) string {
	return modelEndpoint(model, endpoint) + "-" + stimulusName(s)
}

// modelEndpoint is the <model>-openai-<endpoint> part of an artifact directory's name.
func modelEndpoint(model, endpoint string) string {
	model, _, _ = strings.Cut(model, ",") // a --model list is named by its first model, as AIPerf names it
	if model = strings.TrimSpace(model); model == "" {
		model = "model"
	}
	model = strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(model)
	return model + "-openai-" + endpoint
}

// stimulusName is the <stimulus> part of an artifact directory's name: concurrency8,
// request_rate10, fixed_schedule, ...
func stimulusName(s stimulus) string {
	var parts []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case s.fixed:
		parts = append(parts, "fixed_schedule")
	case s.userRate > 0:
		parts = append(parts, fmt.Sprintf("user_centric-users%d-qps%s", s.users, strconv.FormatFloat(s.userRate, 'f', 1, 64)))
	default:
		if s.concurrency > 0 {
			parts = append(parts, "concurrency"+strconv.Itoa(s.concurrency))
		}
		if s.rate > 0 {
			parts = append(parts, "request_rate"+num(s.rate))
		}
		if len(parts) == 0 {
			parts = append(parts, "concurrency1")
		}
	}
	return strings.Join(parts, "-")
}

// planArtifactName names the artifact directory of a shared plan from the flags it was
// compiled with, and says whether the plan streams.
func planArtifactName(path string) (string, bool, error) {
	p, err := mmapds.Open(path, mmapds.Options{SkipHash: true})
	if err != nil {
		return "", false, fmt.Errorf("--plan: %w", err)
	}
	defer p.Close()
	m := p.Meta()
	num := func(k string) float64 {
		switch v := m.Spec[k].(type) {
		case float64:
			return v
		case int64:
			return float64(v)
		case uint64:
			return float64(v)
		case int:
			return float64(v)
		}
		return 0
	}
	fixed, _ := m.Spec["fixed-schedule"].(bool)
	return artifactName(m.Model, m.Endpoint, stimulus{int(num("concurrency")), num("request-rate"), fixed, num("user-centric-rate"), int(num("num-users"))}), m.Streaming, nil
}

// newDir creates base, or base-2, base-3, ... when it exists: an artifact directory is
// never reused.
func newDir(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("--artifact-dir: %w", err)
	}
	for i := 1; i < math.MaxInt16; i++ {
		dir := base
		if i > 1 {
			dir = base + "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("artifact directory: %w", err)
		}
	}
	return "", fmt.Errorf("artifact directory %s: every suffix up to -%d is taken", base, math.MaxInt16-1)
}

// copyFile copies the shared plan into the artifact directory.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("--plan: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("artifact directory: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying --plan %s: %w", src, err)
	}
	return out.Close()
}
