package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// Help: every command's --help lists its flags by topic, the essentials first, each group a
// pflag.FlagSet of its own printed by FlagUsagesWrapped at the terminal's width. A flag's
// group is its GroupAnnotation when a command set one (SetGroup), else flagGroups' entry,
// else GroupOther: a flag defined later without a group still shows, under "Other".

// GroupAnnotation is the pflag annotation that puts a flag in a help group.
const GroupAnnotation = "llmbench_help_group"

// The help groups' keys.
const (
	GroupEssentials  = "essentials"
	GroupEndpoint    = "endpoint"
	GroupInput       = "input"
	GroupLoad        = "load"
	GroupOutput      = "output"
	GroupTelemetry   = "telemetry"
	GroupDistributed = "distributed"
	GroupRepeats     = "repeats"
	GroupOther       = "other"
	GroupAIPerf      = "aiperf"
	// GroupOmit keeps a flag out of the help: one a command defines only to refuse it with
	// a better message (profile's --output).
	GroupOmit = "omit"
)

// helpGroups are the groups in the order --help shows them, with their titles.
var helpGroups = []struct{ key, title string }{
	{GroupEssentials, "Essentials"},
	{GroupEndpoint, "Endpoint (where and how requests are sent)"},
	{GroupInput, "Input (what the requests hold)"},
	{GroupLoad, "Load (when requests are sent)"},
	{GroupOutput, "Output and gates"},
	{GroupTelemetry, "Telemetry"},
	{GroupRepeats, "Repeats, sweeps and searches"},
	{GroupDistributed, "Distributed runs"},
	{GroupOther, "Other"},
	{GroupAIPerf, "AIPerf compatibility"},
}

// essentials are the flags a first run needs, in the order --help lists them.
var essentials = []string{"model", "url", "endpoint-type", "streaming", "concurrency", "request-rate", "request-count"}

// flagGroups are the groups of the flags the sets of this package define (essentials aside).
var flagGroups = func() map[string]string {
	m := map[string]string{}
	add := func(g string, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = g
		}
	}
	add(GroupEndpoint, `model-selection-strategy custom-endpoint use-legacy-max-tokens use-server-token-count
		extra-inputs payload-template response-field url-strategy api-key api-key-file header
		request-timeout-seconds connection-reuse-strategy session-header tls-ca-cert tls-insecure-skip-verify
		max-response-bytes wait-for-model-timeout wait-for-model-mode wait-for-model-interval
		request-content-type preflight no-preflight system-prompt no-history quick`)
	add(GroupInput, `tokenizer tokenizer-revision tokenizer-trust-remote-code input-file custom-dataset-type max-line-bytes
		public-dataset isl-block-size dataset-sampling-strategy random-seed synthesis-speedup-ratio
		trace-idle-gap-cap-seconds trajectory-start-min-ratio trajectory-start-max-ratio cache-bust
		synthesis-prompt-len-multiplier synthesis-prefix-len-multiplier synthesis-prefix-root-multiplier
		synthesis-output-len-multiplier synthesis-max-isl synthesis-max-osl num-sessions num-dataset-entries
		conversation-turn-mean conversation-turn-stddev conversation-turn-delay-mean conversation-turn-delay-stddev
		conversation-turn-delay-ratio inter-turn-delay-cap-seconds conversation-history
		synthetic-input-tokens-mean synthetic-input-tokens-stddev output-tokens-mean output-tokens-stddev
		random-range-ratio random-range-ratio-mode seq-dist shared-system-prompt-length user-context-prompt-length
		prompt-prefix-pool-size prompt-prefix-length prompt-corpus prompt-batch-size
		rankings-passages-mean rankings-passages-stddev rankings-passages-prompt-token-mean
		rankings-passages-prompt-token-stddev rankings-query-prompt-token-mean rankings-query-prompt-token-stddev
		image-width-mean image-width-stddev image-height-mean image-height-stddev image-batch-size image-format
		image-source image-source-sampling audio-length-mean audio-length-stddev audio-format audio-depths
		audio-sample-rates audio-num-channels audio-batch-size video-width video-height video-fps video-duration
		video-synth-type video-format video-codec video-batch-size plan max-plan-bytes`)
	add(GroupLoad, `fixed-schedule no-fixed-schedule fixed-schedule-auto-offset fixed-schedule-start-offset
		fixed-schedule-end-offset arrival-pattern arrival-smoothness request-rate-ramp-duration
		concurrency-ramp-duration prefill-concurrency prefill-concurrency-ramp-duration benchmark-duration
		warmup-request-count num-warmup-sessions warmup-duration warmup-concurrency warmup-request-rate
		warmup-arrival-pattern warmup-prefill-concurrency warmup-concurrency-ramp-duration
		warmup-prefill-concurrency-ramp-duration warmup-request-rate-ramp-duration request-cancellation-rate
		request-cancellation-delay user-centric-rate num-users workers cpus no-pin spin client
		benchmark-grace-period validate validate-generator validate-ttft validate-itl validate-requests
		validate-duration`)
	add(GroupOutput, `output output-dir artifact-dir goodput gate max-error-rate max-schedule-lag
		accept-schedule-miss slice-duration quiet parallelism max-worker-cpu profile-export-prefix export-level
		show-trace-timing export-http-trace export-per-chunk-data require-trustworthy gates validate-shape
		generator-validation no-html html metric metrics-file where group-by export ui-type check-flags`)
	add(GroupTelemetry, `gpu-sample-interval no-gpu-telemetry server-metrics-url server-metrics
		no-server-metrics server-metrics-interval gpu-telemetry otel-url stream otel-resource-attributes
		gen-ai-provider traceparent trace-receiver trace-receiver-http trace-receiver-grace
		trace-receiver-max-bytes`)
	add(GroupRepeats, `num-profile-runs confidence-level profile-run-cooldown-seconds
		parameter-sweep-cooldown-seconds convergence-metric convergence-stat convergence-mode
		convergence-threshold search search-min search-max search-precision search-max-iterations
		ttft-sla-ms itl-sla-ms tpot-sla-ms e2e-sla-ms error-rate-sla search-sla`)
	add(GroupDistributed, `shard-index shard-count start-at run-id plan-hash local-addr rendezvous
		rendezvous-timeout`)
	add(GroupOther, `config print-config help help-all version`)
	return m
}()

// SetGroup puts the named flags of fs in group g of the help (GroupAnnotation), whatever
// flagGroups says: a command's own placement, such as profile's AIPerf-only flags.
func SetGroup(fs *pflag.FlagSet, g string, names ...string) {
	for _, n := range names {
		if fs.Lookup(n) != nil {
			_ = fs.SetAnnotation(n, GroupAnnotation, []string{g})
		}
	}
}

// groupOf is the help group of f.
func groupOf(f *pflag.Flag) string {
	if g := f.Annotations[GroupAnnotation]; len(g) > 0 {
		return g[0]
	}
	for _, e := range essentials {
		if f.Name == e {
			return GroupEssentials
		}
	}
	if g, ok := flagGroups[f.Name]; ok {
		return g
	}
	return GroupOther
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
	for _, n := range essentials {
		if f := fs.Lookup(n); f != nil && !f.Hidden && groupOf(f) == GroupEssentials {
			set(GroupEssentials).AddFlag(f)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if g := groupOf(f); !f.Hidden && g != GroupEssentials {
			set(g).AddFlag(f)
		}
	})
	fmt.Fprintln(w, strings.TrimRight(head, "\n"))
	for _, g := range helpGroups {
		s := sets[g.key]
		if s == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g.title)
		if g.key == GroupAIPerf && !all {
			var names []string
			s.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
			fmt.Fprint(w, wrapWords("accepted so AIPerf command lines run unchanged; they change nothing here (--help-all says what each does): "+strings.Join(names, ", "), width, "  "))
			continue
		}
		fmt.Fprint(w, groupUsage(s, width))
	}
	aliases := aliasesOf(fs)
	if len(aliases) == 0 {
		return
	}
	if !all {
		fmt.Fprintf(w, "\n%s", wrapWords(fmt.Sprintf("AIPerf's other names for %d of these flags are accepted too (--isl, --osl, --num-requests, ...): --help-all lists them.", len(aliases)), width, ""))
		return
	}
	fmt.Fprintf(w, "\naliases (AIPerf's other names):\n")
	for _, a := range aliases {
		fmt.Fprintf(w, "  --%s = --%s\n", a, Aliases[a])
	}
}

// groupUsage is s.FlagUsagesWrapped(width), unless the group's longest flag leaves its
// descriptions fewer than minDescWidth columns: then each flag's description goes under its
// name, indented, so that a narrow terminal still reads a line of words, not a column of them.
func groupUsage(s *pflag.FlagSet, width int) string {
	flat := s.FlagUsagesWrapped(0) // one flag a line: name, 3 or more spaces, description
	col := 0
	for _, line := range strings.Split(flat, "\n") {
		if i := descStart(line); i > col {
			col = i
		}
	}
	if width-col >= minDescWidth {
		return s.FlagUsagesWrapped(width)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(flat, "\n"), "\n") {
		i := descStart(line)
		if i < 0 { // a description's own line break
			b.WriteString(wrapWords(line, width, descIndent))
			continue
		}
		b.WriteString(strings.TrimRight(line[:i], " ") + "\n")
		b.WriteString(wrapWords(line[i:], width, descIndent))
	}
	return b.String()
}

// minDescWidth is the narrowest description column groupUsage keeps beside the names;
// descIndent indents a description under its name.
const (
	minDescWidth = 40
	descIndent   = "        "
)

// descStart is where the description of a FlagUsagesWrapped(0) line begins (after the
// name and the 3 or more spaces that follow it), -1 when the line holds no flag name.
func descStart(line string) int {
	name := strings.TrimLeft(line, " ")
	if !strings.HasPrefix(name, "-") {
		return -1
	}
	off := len(line) - len(name)
	i := strings.Index(name, "   ")
	if i < 0 {
		return -1
	}
	j := i
	for j < len(name) && name[j] == ' ' {
		j++
	}
	return off + j
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

// wrapWords wraps text at spaces into lines of at most width columns (a longer word on a
// line of its own), each line begun with indent.
func wrapWords(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	if line != indent {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Width is the width help is wrapped to: $COLUMNS when it is a number, else the width of
// the terminal on fd (stdout), else 80.
func Width(getenv func(string) string, fd int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return max(n, minHelpWidth)
	}
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return max(int(ws.Col), minHelpWidth)
	}
	return 80
}

// minHelpWidth keeps a flag's description readable in a very narrow terminal.
const minHelpWidth = 40

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
