// Package cli holds the flags of plan, replay and analyze, each defined once, with the
// conversion of each set into its package's options; the commands plan, replay, analyze and
// profile compose these sets, so the same name has the same default and help everywhere.
// AIPerf's other names for a flag are added in one place, Aliases.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/internal/suggest"
	"github.com/llmbench/llmbench/internal/version"
)

// Aliases maps AIPerf's alternative flag names to the canonical ones, for every command.
var Aliases = map[string]string{
	"model-names":                       "model",
	"endpoint":                          "custom-endpoint",
	"isl":                               "synthetic-input-tokens-mean",
	"prompt-input-tokens-mean":          "synthetic-input-tokens-mean",
	"isl-stddev":                        "synthetic-input-tokens-stddev",
	"prompt-input-tokens-stddev":        "synthetic-input-tokens-stddev",
	"synthetic-input-tokens-stdev":      "synthetic-input-tokens-stddev",
	"prompt-input-tokens-block-size":    "isl-block-size",
	"synthetic-input-tokens-block-size": "isl-block-size",
	"osl":                               "output-tokens-mean",
	"prompt-output-tokens-mean":         "output-tokens-mean",
	"osl-stddev":                        "output-tokens-stddev",
	"prompt-output-tokens-stddev":       "output-tokens-stddev",
	"sequence-distribution":             "seq-dist",
	"num-prompts":                       "num-dataset-entries",
	"num-prefix-prompts":                "prompt-prefix-pool-size",
	"prefix-prompt-pool-size":           "prompt-prefix-pool-size",
	"prefix-prompt-length":              "prompt-prefix-length",
	"num-conversations":                 "num-sessions",
	"conversation-num":                  "num-sessions",
	"request-rate-mode":                 "arrival-pattern",
	"vllm-burstiness":                   "arrival-smoothness",
	"num-requests":                      "request-count",
	"num-warmup-requests":               "warmup-request-count",
	"batch-size-text":                   "prompt-batch-size",
	"output-file":                       "output",
	"conversation-turn-delay-stdev":     "conversation-turn-delay-stddev",
	"output-artifact-dir":               "artifact-dir",
	"ui":                                "ui-type",
	"validate-generator":                "validate",
	"ready-check-timeout":               "wait-for-model-timeout",
	"batch-size":                        "prompt-batch-size",
	"batch-size-audio":                  "audio-batch-size",
	"batch-size-image":                  "image-batch-size",
	"batch-size-video":                  "video-batch-size",
	"session-turns-mean":                "conversation-turn-mean",
	"session-turns-stddev":              "conversation-turn-stddev",
	"session-turn-delay-mean":           "conversation-turn-delay-mean",
	"session-turn-delay-stddev":         "conversation-turn-delay-stddev",
	"session-delay-ratio":               "conversation-turn-delay-ratio",
	"profile-export-file":               "profile-export-prefix",
	"profile-export-level":              "export-level",
	"transport-type":                    "transport",
	"max-workers":                       "workers-max",
	"record-processor-service-count":    "record-processors",
}

// NewFlagSet returns an empty flag set named name that resolves Aliases, reports errors
// to its caller only, and lists flags in definition order.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, n string) pflag.NormalizedName {
		if c, ok := Aliases[n]; ok {
			return pflag.NormalizedName(c)
		}
		return pflag.NormalizedName(n)
	})
	return fs
}

// Changed reports whether the flag name was set on the command line. Unlike
// FlagSet.Changed it also holds when the flag was parsed as part of a larger set that
// composes fs (profile).
func Changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}

// AddVersion defines --version on fs; the returned flag is true when it was given.
func AddVersion(fs *pflag.FlagSet) *bool {
	return fs.Bool("version", false, "print the version and exit")
}

// PrintVersion writes "name VERSION" on w.
func PrintVersion(w io.Writer, name string) {
	fmt.Fprintf(w, "%s %s\n", name, version.String())
}

// ParseError adds to a parse error of fs the nearest flag name when the flag is unknown:
// "unknown flag: --request-rat (did you mean --request-rate?)".
func ParseError(fs *pflag.FlagSet, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(msg, prefix), "=")
	if s := Suggest(fs, name); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}

// Parse parses args into fs, the flags of the command name. -h or --help calls usage (nil:
// the flag set's own Usage, if any, has printed it) and ends the command with exit status 0;
// a bad flag prints one line on stderr, "name: message" naming the nearest flag (ParseError),
// and ends it with 2. ok is true when the command goes on; otherwise code is its exit status.
func Parse(name string, fs *pflag.FlagSet, args []string, stderr io.Writer, usage func()) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, pflag.ErrHelp):
		if usage != nil {
			usage()
		}
		return 0, false
	}
	return BadInput(stderr, name)(ParseError(fs, err)), false
}

// Synopsis returns a usage that writes line, a blank line and the flags of fs on w.
func Synopsis(w io.Writer, line string, fs *pflag.FlagSet) func() {
	return func() { fmt.Fprintf(w, "%s\n\n%s", line, fs.FlagUsages()) }
}

// BadInput returns how the command name ends on bad input: Fail with exit status 2.
func BadInput(w io.Writer, name string) func(error) int {
	return func(err error) int { return Fail(w, name, 2, err) }
}

// Fail prints err as the one line "name: message" (OneLine) on w and returns code.
func Fail(w io.Writer, name string, code int, err error) int {
	fmt.Fprintln(w, OneLine(name, err))
	return code
}

// Suggest returns the flag or alias of fs nearest to name (suggest.Nearest), or "" when
// none is near.
func Suggest(fs *pflag.FlagSet, name string) string {
	names := []string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	for a, c := range Aliases {
		if fs.Lookup(c) != nil {
			names = append(names, a)
		}
	}
	return suggest.Nearest(name, names)
}

// OneLine formats err as the single line "name: message", without a repeated prefix
// (errline.Format: the workflows' lines read the same).
func OneLine(name string, err error) string { return errline.Format(name, err) }
