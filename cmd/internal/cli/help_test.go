package cli

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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
	for name := range flagGroups {
		found := false
		for _, fs := range sets {
			found = found || fs.Lookup(name) != nil
		}
		if !found && name != "validate-generator" && name != "artifact-dir" && name != "config" && name != "print-config" && name != "check-flags" {
			t.Errorf("flagGroups names --%s, which no command defines", name)
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
			if g := groupOf(f); g == GroupOther && f.Name != "help" && f.Name != "help-all" && f.Name != "version" {
				t.Errorf("%s: --%s has no help group (add it to flagGroups)", cmd, f.Name)
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
		if !strings.Contains(out, "\n"+descIndent+"one two") || !strings.Contains(out, "--b[=true|false]\n"+descIndent+"short") {
			t.Errorf("width %d: descriptions not under their names:\n%s", width, out)
		}
	}
	if out := groupUsage(fs, 200); strings.Contains(out, "\n"+descIndent+"one") {
		t.Errorf("a wide terminal keeps the descriptions beside the names:\n%s", out)
	}
}

func TestWidth(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	fd := int(devnull.Fd()) // not a terminal
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		columns string
		want    int
	}{{"", 80}, {"132", 132}, {"abc", 80}, {"-3", 80}, {"10", minHelpWidth}}
	for _, c := range cases {
		if got := Width(env(c.columns), fd); got != c.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", c.columns, got, c.want)
		}
	}
}
