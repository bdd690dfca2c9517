package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/internal/helptext"
)

// helpSets are the flag sets of the commands, composed as the commands compose them.
func helpSets() map[string]*pflag.FlagSet {
	replay := NewReplay()
	AddVersion(replay.FS)
	AddDistributed(replay.FS)
	analyze := NewAnalyze()
	AddVersion(analyze.FS)
	profile := NewFlagSet("profile")
	for _, s := range []*pflag.FlagSet{NewPlan().FS, NewReplay().FS, NewAnalyze().FS, NewSweep().FS} {
		profile.AddFlagSet(s)
	}
	return map[string]*pflag.FlagSet{"plan": NewPlan().FS, "replay": replay.FS, "analyze": analyze.FS, "chat": NewChat().FS, "profile": profile}
}

// TestHelpGroups: every flag-group entry names a flag some command defines (no typo leaves a
// flag in "Other"), and every command's help shows each of its visible flags once, under a
// titled group.
func TestHelpGroups(t *testing.T) {
	sets := helpSets()
	for name := range helptext.Table {
		found := false
		for _, fs := range sets {
			found = found || fs.Lookup(name) != nil
		}
		if !found && name != "validate-generator" && name != "artifact-dir" && name != "config" && name != "print-config" && name != "check-flags" {
			t.Errorf("helptext.Table names --%s, which no command defines", name)
		}
	}
	for cmd, fs := range sets {
		var b bytes.Buffer
		Usage(&b, "usage: "+cmd, fs, 100, true)
		help := b.String()
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if n := len(regexp.MustCompile(`(?m)^(  -., |      )--`+regexp.QuoteMeta(f.Name)+`(\[| |$)`).FindAllString(help, -1)); n != 1 {
				t.Errorf("%s --help-all shows --%s %d times", cmd, f.Name, n)
			}
			if g := groupOf(f); g == helptext.GroupOther && f.Name != "help" && f.Name != "help-all" && f.Name != "version" {
				t.Errorf("%s: --%s has no help group (add it to helptext.Table)", cmd, f.Name)
			}
		})
	}
}

// TestGroupUsageNarrow: a group whose longest name leaves too little room puts each
// description under its name, every line within the width.
func TestGroupUsageNarrow(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("a-very-long-flag-name-that-takes-the-column", "", "one two three four five six seven eight nine ten eleven twelve thirteen fourteen")
	fs.Bool("b", false, "short")
	for _, width := range []int{60, 80} {
		out := groupUsage(fs, width)
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if len(l) > width {
				t.Errorf("width %d: line %q is longer", width, l)
			}
		}
		if !strings.Contains(out, "\n"+helptext.DescIndent+"one two") || !strings.Contains(out, "--b[=true|false]\n"+helptext.DescIndent+"short") {
			t.Errorf("width %d: descriptions not under their names:\n%s", width, out)
		}
	}
	if out := groupUsage(fs, 200); strings.Contains(out, "\n"+helptext.DescIndent+"one") {
		t.Errorf("a wide terminal keeps the descriptions beside the names:\n%s", out)
	}
}
