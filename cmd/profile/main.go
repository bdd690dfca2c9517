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
// analyze defines (cmd/internal/cli); this command checks them all, composes them into the
// stages (stages.go) and hands the work to package profile (points, repeats, sweeps,
// searches and their aggregates). Exit status: 0 complete and every gate holds, 1 the run
// or a gate failed, 2 bad input, 130 interrupted.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/config"
	"github.com/llmbench/llmbench/internal/helptext"
	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
)

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
	configPath  string // --config/-f FILE (cli/config.go)
	printConfig bool
}

func newCommand() *command {
	c := &command{fs: cli.NewFlagSet("profile"), plan: cli.NewPlan(), replay: cli.NewReplay(), analyze: cli.NewAnalyze(), sweep: cli.NewSweep()}
	c.sweep.Lists(c.plan.FS) // --concurrency 1,2,4 and --request-rate 5,10: AIPerf's sweep lists
	for _, s := range []*pflag.FlagSet{c.plan.FS, c.replay.FS, c.analyze.FS, c.sweep.FS} {
		c.fs.AddFlagSet(s) // a name two sets define (--tokenizer, --plan, ...) is added once: see share
	}
	c.fs.StringVar(&c.artifactDir, "artifact-dir", "artifacts", "folder of the artifact directories: each run gets a new <model>-openai-<endpoint>-<stimulus> inside (--output-dir names the directory itself)")
	c.fs.BoolVar(&c.version, "version", false, "print the version and exit")
	c.fs.StringVarP(&c.configPath, "config", "f", "", "YAML config file: flag names as keys, or AIPerf's config v2 (schemaVersion \"2.0\"); flags on the command line win")
	c.fs.BoolVar(&c.printConfig, "print-config", false, "print the effective configuration (the flags set, then the defaults as comments) as YAML --config reads, and exit")
	for _, n := range profile.Noted {
		if c.fs.Lookup(n.Name) != nil {
			continue // a flag that now has work here (a composed set defines it)
		}
		switch {
		case n.IsBool:
			c.fs.Bool(n.Name, false, "accepted: "+n.Note)
		case n.List:
			c.fs.StringSlice(n.Name, nil, "accepted: "+n.Note)
		default:
			c.fs.String(n.Name, "", "accepted: "+n.Note)
		}
		if n.Optional != "" {
			c.fs.Lookup(n.Name).NoOptDefVal = n.Optional
		}
	}
	c.fs.CountP("verbose", "v", "accepted: more detail is in the run directory (raw logs, run.json); the output is the same")
	// The help (cli.Usage): AIPerf's flags that change nothing here in their own group, and
	// --output (refused: the plan goes into the artifact directory) not at all.
	c.fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Usage, "accepted: ") {
			cli.SetGroup(c.fs, helptext.GroupAIPerf, f.Name)
		}
	})
	cli.SetGroup(c.fs, helptext.GroupOmit, "output")
	c.fs.Lookup("model").Usage = "model name put in every request body (required unless --plan gives the plan); a comma list a,b gives each dataset turn one"
	for _, n := range multimodal {
		c.fs.String(n, "", "not supported yet")
		c.fs.Lookup(n).Hidden = true
	}
	c.fs.Bool("download-video-content", false, "not supported yet")
	c.fs.Lookup("download-video-content").Hidden = true
	return c
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
	bad := cli.BadInput(stderr, "profile")
	if code, ok := cli.Parse("profile", c.fs, argv[1:], stderr, func() { c.usage(stdout, getenv) }); !ok {
		return code
	}
	if c.configPath != "" {
		given := cli.ChangedFlags(c.fs) // the command line wins over the file
		settings, err := config.Read(c.configPath, cli.ConfigFlags(c.fs), getenv)
		if err != nil {
			return bad(err)
		}
		if err := cli.ApplyConfig(c.fs, settings, given, c.configPath); err != nil {
			return bad(err)
		}
	}
	switch {
	case c.version:
		cli.PrintVersion(stdout, "profile")
		return 0
	case c.plan.Help():
		c.usage(stdout, getenv)
		return 0
	case c.fs.NArg() > 0:
		return bad(fmt.Errorf("unexpected argument %q (flags only; see profile --help)", c.fs.Arg(0)))
	}
	if err := c.check(stderr); err != nil {
		return bad(err)
	}
	if c.printConfig {
		if err := cli.PrintConfig(stdout, c.fs, func(name string) bool { return configMeta[name] }); err != nil {
			return bad(err)
		}
		return 0
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
		n, s, err := profile.PlanArtifactName(c.replay.Plan())
		if err != nil {
			return bad(err)
		}
		name, streaming = n, s
	} else {
		c.plan.O.Output = profile.PlanFile // stands for the artifact directory's, made below
	}
	if err := c.adaptivePlan(so, planMode); err != nil { // adaptive.go
		return bad(err)
	}
	// Every flag of every stage, at every point, before anything is made or sent (check.go).
	if err := c.checkStages(so, planMode, streaming, argv, getenv); err != nil {
		return bad(err)
	}
	if !planMode {
		name = profile.RunName(c.plan.O.Model, c.plan.O.EndpointType, c.stimulus(), so)
	}
	if so.Search != "" && so.MaxErrorRate >= 0 {
		// --error-rate-sla bounds every probe, as analyze's own bound (profile.ErrorBound).
		bound := profile.ErrorBound(so.MaxErrorRate, c.analyze.MaxErrorRate(), cli.Changed(c.fs, "max-error-rate"))
		if err := c.analyze.FS.Set("max-error-rate", strconv.FormatFloat(bound, 'g', -1, 64)); err != nil {
			return bad(err)
		}
	}
	base := filepath.Join(c.artifactDir, name)
	if cli.Changed(c.fs, "output-dir") {
		base = c.replay.OutputDir()
	}
	_, parentErr := os.Stat(filepath.Dir(base))
	dir, err := profile.NewDir(base)
	if err != nil {
		return bad(err)
	}
	fmt.Fprintf(stderr, "profile: artifact directory %s\n", dir)
	code := profile.Run(dir, profile.Options{Sweep: so, SharedPlan: c.replay.Plan(), MaxErrorRate: c.analyze.MaxErrorRate(),
		AcceptScheduleMiss: c.analyze.AcceptScheduleMiss(), ExportPrefix: c.analyze.ExportPrefix(), Stdout: stdout, Stderr: stderr,
		Stages: &stages{c: c, argv: argv, stdout: stdout, stderr: stderr, getenv: getenv}})
	if os.IsNotExist(parentErr) {
		_ = os.Remove(filepath.Dir(base)) // made for this run (artifacts/): gone with it when it is empty
	}
	return code
}

// stimulus is the load the plan flags give now: what names a run's directory.
func (c *command) stimulus() profile.Stimulus {
	o := c.plan.O
	return profile.Stimulus{Concurrency: o.Concurrency, Rate: o.RequestRate, Fixed: o.FixedSchedule, UserRate: o.UserCentricRate, Users: o.NumUsers}
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
			err = fmt.Errorf("--output: profile keeps the plan in the artifact directory as %s (to compile one elsewhere, use plan -o)", profile.PlanFile)
		case f.Name == "ui-type":
			err = c.replay.CheckUI() // before the plan is compiled; replay says what dashboard does
		case strings.HasPrefix(f.Usage, "accepted: "):
			vals := []string{f.Value.String()}
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				vals = sv.GetSlice()
			}
			if err = profile.CheckNoted(f.Name, vals); err == nil { // profile/noted.go
				fmt.Fprintf(stderr, "profile: --%s accepted: %s\n", f.Name, strings.TrimPrefix(f.Usage, "accepted: "))
			}
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

// configMeta are the flags about the configuration itself, which --print-config leaves out.
var configMeta = map[string]bool{"config": true, "print-config": true, "help": true, "help-all": true, "version": true}

// sharedWithAnalyze are plan flags analyze defines too: they stay meaningful with --plan.
var sharedWithAnalyze = map[string]bool{"tokenizer": true, "use-server-token-count": true}

func (c *command) usage(w io.Writer, getenv func(string) string) {
	cli.Usage(w, "usage: profile --model M [flags]     plan, replay and analyze (AIPerf's profile)\n"+
		"       profile --plan FILE [flags]   replay and analyze a shared plan",
		c.fs, cli.Width(getenv, int(os.Stdout.Fd())), c.plan.HelpAll())
}
