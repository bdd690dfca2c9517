package cli

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/tokenizer"
)

// Plan is the flag set of the plan compiler (`plan [flags] -o FILE`) and the options it
// fills (plan.Flags: the one table of the plan's flags).
type Plan struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet
	*plan.Flags
	help    bool
	helpAll *bool
}

// NewPlan defines the plan flags, with AIPerf's names and defaults, on a new set.
func NewPlan() *Plan {
	p := &Plan{FS: NewFlagSet("plan"), Flags: plan.NewFlags()}
	p.FS.StringVarP(&p.O.Output, "output", "o", "", "plan file to write (required by plan)")
	p.FS.BoolVarP(&p.help, "help", "h", false, "print this help")
	p.helpAll = AddHelpAll(p.FS)
	p.DefineFlags(p.FS)
	return p
}

// Help reports whether --help was given.
func (p *Plan) Help() bool { return p.help || *p.helpAll }

// HelpAll tells whether --help-all was given: the help with every compatibility flag described.
func (p *Plan) HelpAll() bool { return *p.helpAll }

// TokenizerSpec is the tokenizer the plan is compiled with (--tokenizer, else the model id).
func (p *Plan) TokenizerSpec() string { return p.Source.TokenizerSpec(p.O.Model) }

// Validate checks the flags on their own (no tokenizer, no input read), so a typo fails at
// once; the input-dependent checks follow in Compile.
func (p *Plan) Validate() error {
	o := p.O
	if err := p.apply(&o); err != nil {
		return err
	}
	if p.Source.InputFile != "" {
		o.Dataset = &dataset.Dataset{} // stands for the input until it is loaded: skips the synthetic-only checks
	}
	return o.Validate()
}

// Compile loads the tokenizer and the input, compiles the plan to p.O.Output and prints the
// one-line summary on stdout; notices (the builtin tokenizer standing in for a model id,
// downloads) go to stderr. It returns the exit status: 0, 1 failed, 2 bad input (said on
// stderr in one line "plan: ...").
func (p *Plan) Compile(getenv func(string) string, stdout, stderr io.Writer) int {
	o := p.O
	cf := p.Flags
	if err := p.apply(&o); err != nil {
		return Fail(stderr, "plan", 2, err)
	}
	tokSpec := cf.Source.TokenizerSpec(o.Model)
	if cf.Source.InputFile != "" {
		o.Dataset = &dataset.Dataset{}
	}
	if err := o.Validate(); err != nil {
		return Fail(stderr, "plan", 2, err)
	}
	o.Dataset = nil

	lo := tokenizer.EnvLoadOptions(getenv)
	lo.Revision, lo.TrustRemoteCode, lo.Progress = cf.Source.TokenizerRevision, cf.Source.TrustRemoteCode, stderr
	tok, err := tokenizer.LoadWithOptions(tokSpec, lo)
	if err != nil {
		return Fail(stderr, "plan", 2, fmt.Errorf("--tokenizer: %w", err))
	}
	o.Tokenizer = tok
	if o.Corpus, err = cf.Source.Corpus(tok); err != nil {
		code := 1 // the embedded corpus failing is ours
		if cf.Source.PromptCorpus != "shakespeare" {
			code = 2
		}
		return Fail(stderr, "plan", code, err)
	}
	if cf.Source.InputFile != "" {
		o.Dataset, err = cf.Source.LoadDataset(&o)
		if err != nil {
			return Fail(stderr, "plan", 2, err)
		}
		if o.Dataset.LiveReplies && !Changed(p.FS, "conversation-history") {
			// dag_jsonl bodies carry the actual replies (AIPerf's semantics): live unless asked
			// otherwise, which plan.Compile then refuses naming the flag.
			o.ConversationHistory = "live"
			p.FS.Set("conversation-history", "live")
		}
	}
	o.Spec = p.Spec(&o)
	o.Notice = func(msg string) { fmt.Fprintf(stderr, "plan: %s\n", msg) }
	res, err := plan.Compile(o)
	if err != nil {
		code := 1
		if errors.Is(err, plan.ErrUsage) {
			code = 2
		}
		return Fail(stderr, "plan", code, err)
	}
	fmt.Fprintf(stdout, "plan: wrote %s: %d requests (%d warmup, %d profile), %d sessions, %d distinct bodies, %s, seed %d; sha256 %s\n",
		o.Output, res.Warmup+res.Profile, res.Warmup, res.Profile, res.Sessions, res.Bodies, res.Mode, o.Seed, hex.EncodeToString(res.Hash[:]))
	if res.RepeatNote != "" {
		fmt.Fprintf(stdout, "plan: %s\n", res.RepeatNote)
	}
	return 0
}

// apply maps the flags that need conversion onto o (plan.Flags.Apply).
func (p *Plan) apply(o *plan.Options) error {
	return p.Apply(o, func(name string) bool { return Changed(p.FS, name) })
}
