package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
)

// numericTypes are the pflag value types that hold numbers.
var numericTypes = map[string]bool{"int": true, "int64": true, "uint64": true, "float64": true, "intSlice": true, "float64Slice": true}

// badValues are the values every numeric flag of plan must refuse, by type: negative,
// not a number, infinite, and past any cap a size or duration can have.
var badValues = map[string][]string{
	"int":          {"-1", "9223372036854775807"},
	"int64":        {"-1", "9223372036854775807"},
	"intSlice":     {"-1", "9223372036854775807"},
	"float64":      {"-1", "nan", "inf", "-inf", "1e300"},
	"float64Slice": {"-1", "nan", "inf", "1e300"},
}

// noCap are the numeric flags a huge value is meaningful for: --random-seed takes any
// uint64, and --max-plan-bytes is itself the limit.
var noCap = map[string]bool{"random-seed": true, "max-plan-bytes": true}

// TestEveryNumericFlagBounded (issue 24 defects 9, 10, 12): every numeric flag of plan,
// found in its flag set (so a new one is covered too), refuses negative, NaN, infinite and
// huge values up front: exit 2, one line naming the flag, no plan file. Before the fix
// --num-dataset-entries, --conversation-turn-mean, the prefix and context lengths, the
// durations and rates took any value and allocated gigabytes or wrapped around.
func TestEveryNumericFlagBounded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.plan")
	n := 0
	cli.NewPlan().FS.VisitAll(func(f *pflag.Flag) {
		typ := f.Value.Type()
		if !numericTypes[typ] || typ == "uint64" {
			return
		}
		for _, v := range badValues[typ] {
			if noCap[f.Name] && v != "-1" {
				continue
			}
			n++
			args := []string{"--model", "m", "-o", out, "--" + f.Name + "=" + v}
			code, stdout, stderr := runCmd(t, args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "plan: ") || !strings.Contains(stderr, "--"+f.Name) || stdout != "" {
				t.Errorf("--%s=%s: exit %d, stderr %q; want exit 2 and one line naming --%s", f.Name, v, code, stderr, f.Name)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("--%s=%s wrote a plan", f.Name, v)
			}
		}
	})
	if n < 150 {
		t.Fatalf("only %d values tried: the flag set lost its numeric flags?", n)
	}
}

// TestNumericFlagBoundsDocumented: every numeric flag of plan has its bound in
// docs/plan-format.md "Bounds".
func TestNumericFlagBoundsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "plan-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, bounds, ok := strings.Cut(string(b), "\n## Bounds\n")
	if !ok {
		t.Fatal(`docs/plan-format.md has no "## Bounds" section`)
	}
	bounds, _, _ = strings.Cut(bounds, "\n## ")
	cli.NewPlan().FS.VisitAll(func(f *pflag.Flag) {
		if numericTypes[f.Value.Type()] && !strings.Contains(bounds, "`--"+f.Name+"`") {
			t.Errorf("--%s: no bound in docs/plan-format.md \"Bounds\"", f.Name)
		}
	})
}
