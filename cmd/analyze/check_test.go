package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// files lists the names in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestBadFlagsWriteNothing (issue 24 defects 5, 12): every bad analyze flag, and a gate or
// SLO on a metric a run that did not stream cannot give, is one line naming the flag and
// exit 2, with nothing written into the run directory. Before the fix --max-worker-cpu NaN,
// --max-error-rate NaN and --goodput thresholds of NaN or -5 passed (a NaN bound failed
// every run, or passed it), and a TTFT gate on a run without streaming read "FAIL (the run
// has no time_to_first_token values)" after the exports were written.
func TestBadFlagsWriteNothing(t *testing.T) {
	streamed := buildRun(t, 10, 0)
	plain := buildRunWith(t, 10, 0, false)
	missing := filepath.Join(t.TempDir(), "missing")
	cases := []struct {
		name string
		run  string
		args []string
		want string
	}{
		{"max worker cpu nan", streamed, []string{"--max-worker-cpu", "nan"}, "--max-worker-cpu NaN: want a positive finite percentage"},
		{"max worker cpu inf", streamed, []string{"--max-worker-cpu", "inf"}, "--max-worker-cpu +Inf"},
		{"max error rate nan", streamed, []string{"--max-error-rate", "nan"}, "--max-error-rate NaN: want a fraction between 0 and 1"},
		{"goodput nan", streamed, []string{"--goodput", "time_to_first_token:nan"}, `threshold "nan" is not a positive finite number`},
		{"goodput negative", streamed, []string{"--goodput", "time_to_first_token:-5"}, `threshold "-5" is not a positive finite number`},
		{"gate nan", streamed, []string{"--gate", "time_to_first_token.p99<nan"}, `"nan" is not a finite number`},
		{"gate typo", streamed, []string{"--gate", "time_to_frist_token.p99<4"}, "did you mean time_to_first_token?"},
		{"slice duration nan", streamed, []string{"--slice-duration", "nan"}, "--slice-duration"},
		{"parallelism", streamed, []string{"--parallelism", "-2"}, "--parallelism -2"},
		{"html twice", streamed, []string{"--no-html", "--html", "x.html"}, "contradict each other"},
		{"shape reference", streamed, []string{"--validate-shape", missing}, "--validate-shape " + missing},
		{"ttft gate without streaming", plain, []string{"--gate", "time_to_first_token.p99<400"}, `--gate "time_to_first_token.p99<400": the plan does not stream`},
		{"itl goodput without streaming", plain, []string{"--goodput", "inter_token_latency:5"}, "--goodput inter_token_latency:5: the plan does not stream"},
		{"summary level too", plain, []string{"--export-level", "summary", "--gate", "inter_token_latency.p50<5"}, "the plan does not stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := files(t, c.run)
			code, stdout, stderr := runCmd(append(c.args, c.run)...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "analyze: ") || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and one line containing %q", code, stderr, stdout, c.want)
			}
			if after := files(t, c.run); !slices.Equal(before, after) {
				t.Errorf("the run directory changed: %v, now %v", before, after)
			}
		})
	}
	// The same gates on a run that streams are evaluated.
	if code, stdout, stderr := runCmd("--gate", "time_to_first_token.p99<400", "--no-html", streamed); code != 0 || !strings.Contains(stdout, "PASS") {
		t.Fatalf("streaming run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCheckFlags: --check-flags checks without a run: 0 for good flags, 2 and one line for
// bad ones (deploy/slurm runs it before the load).
func TestCheckFlags(t *testing.T) {
	if code, stdout, stderr := runCmd("--check-flags", "--gate", "time_to_first_token.p99<400", "--max-error-rate", "0.1"); code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("good flags: exit %d, %q, %q", code, stdout, stderr)
	}
	code, _, stderr := runCmd("--check-flags", "--gate", "time_to_first_token.p99<nan")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "not a finite number") {
		t.Fatalf("bad flags: exit %d, %q", code, stderr)
	}
}
