package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlags covers the command lines that end before any request is sent.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "shared.llmplan")
	if err := os.WriteFile(plan, []byte("not a plan"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"version", []string{"--version"}, 0, "profile ", ""},
		{"help", []string{"--help"}, 0, "--request-rate", ""},
		{"help-all lists aliases", []string{"--help-all"}, 0, "--output-artifact-dir = --artifact-dir", ""},
		{"unknown flag suggests", []string{"--model", "m", "--request-rat", "3"}, 2, "", "unknown flag: --request-rat (did you mean --request-rate?)"},
		{"unknown flag suggests an alias", []string{"--model", "m", "--num-request", "3"}, 2, "", "(did you mean --num-requests?)"},
		{"unknown flag far from all", []string{"--zzzzzzzzzzzz"}, 2, "", "unknown flag: --zzzzzzzzzzzz\n"},
		{"multimodal", []string{"--model", "m", "--video-audio-codec", "aac"}, 2, "", "profile: --video-audio-codec: a video's embedded audio track is not supported yet\n"},
		{"multimodal bool", []string{"--model", "m", "--download-video-content"}, 2, "", "not supported yet"},
		{"plan mode refuses plan flags", []string{"--plan", plan, "--concurrency", "4"}, 2, "", "profile: --concurrency shapes a plan, but --plan " + plan + " gives one: drop one of them\n"},
		{"plan mode refuses aliases by canonical name", []string{"--plan", plan, "--isl", "4"}, 2, "", "--synthetic-input-tokens-mean shapes a plan"},
		{"plan mode bad file", []string{"--plan", plan}, 2, "", "profile: --plan: "},
		{"output refused", []string{"--model", "m", "-o", "x"}, 2, "", "--output: profile keeps the plan"},
		{"url with a space", []string{"--model", "m", "--url", "htp:/bad url"}, 2, "", `profile: --url "htp:/bad url": holds " " at byte 8: a URL has no spaces`},
		{"url scheme without //", []string{"--model", "m", "--url", "htp:/bad"}, 2, "", `profile: --url "htp:/bad": scheme "htp" without //`},
		{"url without host", []string{"--model", "m", "--url", "http:///v1"}, 2, "", `profile: --url "http:///v1": no host`},
		{"url scheme", []string{"--model", "m", "--url", "ftp://h/v1"}, 2, "", `profile: --url "ftp://h/v1": scheme must be http or https, not "ftp"`},
		{"url port", []string{"--model", "m", "--url", "localhost:"}, 2, "", `profile: --url "localhost:": port "": want a number`},
		{"ui-type", []string{"--model", "m", "--ui-type", "tui"}, 2, "", `--ui-type "tui": want none, simple or dashboard`},
		{"plan validation first", []string{"--concurrency", "-1", "--model", "m"}, 2, "", "profile: "},
		{"noted flag", []string{"--workers-max", "8", "--zzzzzzzzzzzz"}, 2, "", "unknown flag"},
		{"sweep list empty item", []string{"--model", "m", "--concurrency", "1,,2"}, 2, "", `empty list item`},
		{"sweep list zero", []string{"--model", "m", "--concurrency", "1,0"}, 2, "", `"0" is not a positive integer`},
		{"sweep rate list", []string{"--model", "m", "--request-rate", "5,x"}, 2, "", `"x" is not a positive number`},
		{"runs bound", []string{"--model", "m", "--num-profile-runs", "11"}, 2, "", "--num-profile-runs 11: want 1 to 10"},
		{"confidence level", []string{"--model", "m", "--confidence-level", "95"}, 2, "", "--confidence-level 95: want a fraction"},
		{"cooldown", []string{"--model", "m", "--profile-run-cooldown-seconds", "-1"}, 2, "", "--profile-run-cooldown-seconds -1: want seconds"},
		{"convergence needs runs", []string{"--model", "m", "--convergence-metric", "time_to_first_token"}, 2, "", "needs --num-profile-runs of 2 or more"},
		{"convergence metric", []string{"--model", "m", "--num-profile-runs", "3", "--convergence-metric", "ttft"}, 2, "", `unknown metric "ttft"`},
		{"convergence mode", []string{"--model", "m", "--num-profile-runs", "3", "--convergence-metric", "time_to_first_token", "--convergence-mode", "distribution"}, 2, "", "distribution mode is not supported"},
		{"convergence stat alone", []string{"--model", "m", "--convergence-stat", "p99"}, 2, "", "--convergence-stat needs --convergence-metric"},
		{"sla without search", []string{"--model", "m", "--ttft-sla-ms", "20"}, 2, "", "--ttft-sla-ms needs --search"},
		{"search unknown", []string{"--model", "m", "--search", "fastest"}, 2, "", `--search "fastest": want max-concurrency-under-sla`},
		{"search needs sla", []string{"--model", "m", "--search", "max-concurrency-under-sla"}, 2, "", "needs an SLA"},
		{"search goodput needs goodput", []string{"--model", "m", "--search", "max-goodput"}, 2, "", "needs --goodput"},
		{"search with a list", []string{"--model", "m", "--search", "max-concurrency-under-sla", "--ttft-sla-ms", "9", "--concurrency", "1,2"}, 2, "", "give --concurrency one value, not a list"},
		{"search sla syntax", []string{"--model", "m", "--search", "max-rate-under-sla", "--search-sla", "ttft:p95:le"}, 2, "", "--search-sla \"ttft:p95:le\": want METRIC:STAT:OP:VALUE"},
		{"search sla metric", []string{"--model", "m", "--search", "max-rate-under-sla", "--search-sla", "ttft:p95:le:3"}, 2, "", `--search-sla ttft:p95:le:3: unknown metric "ttft"`},
		{"search sla stat", []string{"--model", "m", "--search", "max-rate-under-sla", "--search-sla", "time_to_first_token:p97:le:3"}, 2, "", `unknown statistic "p97"`},
		{"search bounds", []string{"--model", "m", "--search", "max-rate-under-sla", "--ttft-sla-ms", "9", "--search-min", "10", "--search-max", "5"}, 2, "", "--search-max 5: must be at least --search-min 10"},
		{"sla ms positive", []string{"--model", "m", "--search", "max-rate-under-sla", "--ttft-sla-ms", "0"}, 2, "", "--ttft-sla-ms 0: want milliseconds"},
		{"error rate sla", []string{"--model", "m", "--search", "max-rate-under-sla", "--error-rate-sla", "2"}, 2, "", "--error-rate-sla 2: want a fraction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			var out, errb bytes.Buffer
			code := run(append([]string{"profile"}, c.args...), &out, &errb, func(string) string { return "" })
			if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("code %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout ~ %q, stderr ~ %q", code, c.code, out.String(), errb.String(), c.stdout, c.stderr)
			}
			if c.code == 2 && strings.Count(errb.String(), "\n") > 1 && !strings.Contains(c.name, "noted") {
				t.Errorf("want one line on stderr, got:\n%s", errb.String())
			}
			if _, err := os.Stat("artifacts"); c.code == 2 && c.name != "plan mode bad file" && err == nil {
				t.Errorf("bad input left an artifact directory")
			}
		})
	}
}

func TestNotedFlagsSayWhat(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	run([]string{"profile", "--workers-max", "8", "--record-processors", "2", "-v", "--zmq-dual-bind", "--image-format", "png"}, &out, &errb, func(string) string { return "" })
	for _, want := range []string{"--workers-max accepted: replay runs one worker process per CPU", "--record-processors accepted", "--verbose accepted", "--zmq-dual-bind accepted"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestHelpFirstScreen: profile --help shows the essentials in its first screen (24 lines),
// none of AIPerf's compatibility-only flags there, every line within the terminal's width
// (COLUMNS) but for a single unbreakable word, every visible flag somewhere, and no --output
// (which profile refuses).
func TestHelpFirstScreen(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := func(k string) string {
				if k == "COLUMNS" {
					return strconv.Itoa(width)
				}
				return ""
			}
			if code := run([]string{"profile", "--help"}, &out, &errb, env); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			lines := strings.Split(out.String(), "\n")
			screen := strings.Join(lines[:min(24, len(lines))], "\n")
			for _, f := range []string{"--model", "--url", "--endpoint-type", "--streaming", "--concurrency", "--request-rate", "--request-count"} {
				if !strings.Contains(screen, f+" ") && !strings.Contains(screen, f+"[") {
					t.Errorf("%s is not in the first screen:\n%s", f, screen)
				}
			}
			c := newCommand()
			c.fs.VisitAll(func(f *pflag.Flag) {
				switch {
				case strings.HasPrefix(f.Usage, "accepted: ") && strings.Contains(screen, "--"+f.Name):
					t.Errorf("compatibility-only --%s in the first screen", f.Name)
				case f.Name == "output":
					if strings.Contains(out.String(), "--output ") || strings.Contains(out.String(), "-o, ") {
						t.Errorf("profile refuses --output, but its help shows it")
					}
				case !f.Hidden && !strings.Contains(out.String(), "--"+f.Name):
					t.Errorf("--%s is missing from the help", f.Name)
				}
			})
			for _, l := range lines {
				if len([]rune(l)) > width && len(strings.Fields(l)) > 1 {
					t.Errorf("line wider than %d columns: %q", width, l)
				}
			}
			if strings.Contains(out.String(), "(required)") {
				t.Errorf("profile's help calls a flag required, yet profile needs none but --model or --plan")
			}
		})
	}
}
