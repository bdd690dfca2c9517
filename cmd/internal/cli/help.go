package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/internal/helptext"
)

// Help: every command's --help lists its flags by topic, the essentials first, each group a
// pflag.FlagSet of its own printed by FlagUsagesWrapped at the terminal's width. A flag's
// group is its GroupAnnotation when a command set one (SetGroup), else helptext.Table's entry,
// else GroupOther: a flag defined later without a group still shows, under "Other".

// GroupAnnotation is the pflag annotation that puts a flag in a help group.
const GroupAnnotation = "llmbench_help_group"

// SetGroup puts the named flags of fs in group g of the help (GroupAnnotation), whatever
// helptext says: a command's own placement, such as profile's AIPerf-only flags.
func SetGroup(fs *pflag.FlagSet, g string, names ...string) {
	for _, n := range names {
		if fs.Lookup(n) != nil {
			_ = fs.SetAnnotation(n, GroupAnnotation, []string{g})
		}
	}
}

// groupOf is the help group of f: a command's own placement (SetGroup), else helptext's.
func groupOf(f *pflag.Flag) string {
	if g := f.Annotations[GroupAnnotation]; len(g) > 0 {
		return g[0]
	}
	return helptext.Of(f.Name)
}

// AddHelpAll defines --help-all on fs: the help with every AIPerf compatibility flag and
// alias described, not only named.
func AddHelpAll(fs *pflag.FlagSet) *bool {
	return fs.Bool("help-all", false, "print the help with the AIPerf compatibility flags and aliases described")
}

// Usage writes the help of fs on w: head (the usage lines), then the visible flags by group,
// each wrapped to width columns. The AIPerf compatibility group and the aliases are named in a
// few lines unless all (--help-all) asks for each to be described.
func Usage(w io.Writer, head string, fs *pflag.FlagSet, width int, all bool) {
	sets := map[string]*pflag.FlagSet{}
	set := func(g string) *pflag.FlagSet {
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = false
		}
		return sets[g]
	}
	for _, n := range helptext.Essentials {
		if f := fs.Lookup(n); f != nil && !f.Hidden && groupOf(f) == helptext.GroupEssentials {
			set(helptext.GroupEssentials).AddFlag(f)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if g := groupOf(f); !f.Hidden && g != helptext.GroupEssentials {
			set(g).AddFlag(f)
		}
	})
	fmt.Fprintln(w, strings.TrimRight(head, "\n"))
	for _, g := range helptext.Groups {
		s := sets[g.Key]
		if s == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g.Title)
		if g.Key == helptext.GroupAIPerf && !all {
			var names []string
			s.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
			fmt.Fprint(w, helptext.Words("accepted so AIPerf command lines run unchanged; they change nothing here (--help-all says what each does): "+strings.Join(names, ", "), width, "  "))
			continue
		}
		fmt.Fprint(w, groupUsage(s, width))
	}
	aliases := aliasesOf(fs)
	if len(aliases) == 0 {
		return
	}
	if !all {
		fmt.Fprintf(w, "\n%s", helptext.Words(fmt.Sprintf("AIPerf's other names for %d of these flags are accepted too (--isl, --osl, --num-requests, ...): --help-all lists them.", len(aliases)), width, ""))
		return
	}
	fmt.Fprintf(w, "\naliases (AIPerf's other names):\n")
	for _, a := range aliases {
		fmt.Fprintf(w, "  --%s = --%s\n", a, Aliases[a])
	}
}

// groupUsage is s.FlagUsagesWrapped(width), or helptext's narrow layout of its lines.
func groupUsage(s *pflag.FlagSet, width int) string {
	if text, ok := helptext.Narrow(s.FlagUsagesWrapped(0), width); ok {
		return text
	}
	return s.FlagUsagesWrapped(width)
}

// aliasesOf are the aliases of the flags fs defines, sorted.
func aliasesOf(fs *pflag.FlagSet) []string {
	keys := make([]string, 0, len(Aliases))
	for k, v := range Aliases {
		if fs.Lookup(v) != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Width is the width help is wrapped to (helptext.Width): $COLUMNS, else the terminal's on fd.
var Width = helptext.Width

// StdoutWidth is Width for the process's stdout and environment.
func StdoutWidth() int { return Width(os.Getenv, int(os.Stdout.Fd())) }

// ColorTerminal reports whether f is a terminal that may be shown colour: a character
// device, $NO_COLOR unset or empty (no-color.org) and $TERM not "dumb".
func ColorTerminal(getenv func(string) string, f *os.File) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
