// Package helptext owns the layout of every command's --help: which topic group each flag is
// in (Table, Essentials, Groups' order and titles), the narrow-terminal layout of a group's flag
// lines, word wrapping and the width the help is wrapped to. It holds data about flags and text,
// not flags: cmd/internal/cli prints pflag's usage lines through it. It imports the standard
// library and x/sys (the terminal's width) only.
package helptext

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

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

// Groups are the groups in the order --help shows them, with their titles.
var Groups = []struct{ Key, Title string }{
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

// Essentials are the flags a first run needs, in the order --help lists them.
var Essentials = []string{"model", "url", "endpoint-type", "streaming", "concurrency", "request-rate", "request-count"}

// Table holds the group of every flag the commands define (Essentials aside).
var Table = func() map[string]string {
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
		request-cancellation-delay user-centric-rate num-users workers cpus no-pin spin spare-connections client
		benchmark-grace-period validate validate-generator validate-ttft validate-itl validate-requests
		validate-duration`)
	add(GroupOutput, `output output-dir artifact-dir goodput gate max-error-rate max-schedule-lag
		accept-schedule-miss slice-duration quiet parallelism max-worker-cpu profile-export-prefix export-level
		show-trace-timing export-http-trace export-per-chunk-data require-trustworthy gates validate-shape
		generator-validation no-html html metric metrics-file where group-by export ui-type check-flags`)
	add(GroupTelemetry, `gpu-sample-interval no-gpu-telemetry server-metrics-url server-metrics
		no-server-metrics server-metrics-interval gpu-telemetry otel-url stream otel-resource-attributes
		gen-ai-provider server-traces traceparent trace-receiver trace-receiver-http trace-receiver-grace
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

// Of is the help group of the flag name when no command placed it (an annotation): the
// essentials first, then Table, else GroupOther.
func Of(name string) string {
	for _, e := range Essentials {
		if name == e {
			return GroupEssentials
		}
	}
	if g, ok := Table[name]; ok {
		return g
	}
	return GroupOther
}

// Narrow lays out a group's flag lines, given one flag a line as pflag's FlagUsagesWrapped(0)
// prints them (name, 3 or more spaces, description), for width columns: ok is false when the
// longest name leaves at least MinDescWidth columns (pflag's own wrapping at width then reads
// well); otherwise each description goes under its name, indented by DescIndent, so that a
// narrow terminal still reads a line of words, not a column of them.
func Narrow(flat string, width int) (text string, ok bool) {
	col := 0
	for _, line := range strings.Split(flat, "\n") {
		if i := descStart(line); i > col {
			col = i
		}
	}
	if width-col >= MinDescWidth {
		return "", false
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(flat, "\n"), "\n") {
		i := descStart(line)
		if i < 0 { // a description's own line break
			b.WriteString(Words(line, width, DescIndent))
			continue
		}
		b.WriteString(strings.TrimRight(line[:i], " ") + "\n")
		b.WriteString(Words(line[i:], width, DescIndent))
	}
	return b.String(), true
}

// MinDescWidth is the narrowest description column Narrow keeps beside the names;
// DescIndent indents a description under its name.
const (
	MinDescWidth = 40
	DescIndent   = "        "
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

// Words wraps text at spaces into lines of at most width columns (a longer word on a
// line of its own), each line begun with indent.
func Words(text string, width int, indent string) string {
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
		return max(n, MinWidth)
	}
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return max(int(ws.Col), MinWidth)
	}
	return 80
}

// MinWidth keeps a flag's description readable in a very narrow terminal.
const MinWidth = 40
