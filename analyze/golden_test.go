package analyze

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/analyze")

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }

// goldenDir holds the expected exports of the synthetic runs.
const goldenDir = "../testdata/analyze"

// outputs runs every reporter over s and returns file name → content.
func outputs(t *testing.T, s *Summary, records []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"jsonl": records}
	for name, w := range map[string]func(*bytes.Buffer) error{
		"json":    func(b *bytes.Buffer) error { return WriteAIPerfJSON(b, s) },
		"csv":     func(b *bytes.Buffer) error { return WriteAIPerfCSV(b, s) },
		"console": func(b *bytes.Buffer) error { return WriteConsole(b, s) },
	} {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	if len(s.Slices) > 0 {
		var j, c bytes.Buffer
		if err := WriteTimeslicesJSON(&j, s); err != nil {
			t.Fatal(err)
		}
		if err := WriteTimeslicesCSV(&c, s); err != nil {
			t.Fatal(err)
		}
		out["timeslices.json"], out["timeslices.csv"] = j.Bytes(), c.Bytes()
	}
	return out
}

// analyseDir runs Analyze over dirs with the word counter and returns the summary and the
// records it streamed.
func analyseDir(t *testing.T, opts Options, dirs ...string) (*Summary, []byte) {
	t.Helper()
	opts.RunDirs = dirs
	if opts.Tokenizer == nil {
		opts.Tokenizer = wordCounter{}
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	var rec bytes.Buffer
	s, err := Analyze(opts, &rec)
	if err != nil {
		t.Fatal(err)
	}
	return s, rec.Bytes()
}

var goldenCases = []struct {
	name string
	sc   scenario
	opts func() Options
}{
	{
		// Open loop at 50 req/s over two workers: reasoning, injected HTTP 500s, a cancelled
		// request, packed reads, CPU and GPU telemetry, goodput and 250 ms slices.
		name: "stream",
		sc: scenario{n: 40, warmup: 4, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 12, reasoning: 2,
			rate: 50, errEvery: 13, packEvery: 5, cancelEvery: 17, cpuPct: 35, gpus: 2, streaming: true, lag: 300 * us,
			sessionHeader: "X-Correlation-ID"},
		opts: func() Options {
			slos := objectives(nil, "time_to_first_token:20.4 inter_token_latency:5.05")
			return Options{Goodput: slos, SliceDuration: 250 * time.Millisecond}
		},
	},
	{
		// A closed loop of 4 slots whose client fell behind: the verdict must say so.
		name: "closed_lagging",
		sc: scenario{n: 24, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 8, concurrency: 4,
			lag: 3 * ms, cpuPct: 97, streaming: true},
		opts: func() Options { return Options{UseServerTokenCount: true} },
	},
	{
		name: "nonstream",
		sc:   scenario{n: 10, workers: 1, ttft: 30 * ms, itl: 4 * ms, tokens: 20, concurrency: 2},
		opts: func() Options { return Options{} },
	},
}

func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := gc.sc.build(t, tmp)
			s, records := analyseDir(t, gc.opts(), dir)
			for ext, got := range outputs(t, s, records) {
				got = bytes.ReplaceAll(got, []byte(tmp), []byte("$TMP"))
				path := filepath.Join(goldenDir, gc.name+"."+ext+".golden")
				if *update {
					if err := mkdir(goldenDir); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./analyze -run TestGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n%s", ext, path, firstDiff(string(got), string(want)))
				}
			}
		})
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + "\n got: " + a + "\nwant: " + b
		}
	}
	return ""
}

// Analysing the same directory twice, with logs read in parallel, gives identical bytes.
func TestDeterministic(t *testing.T) {
	sc := goldenCases[0].sc
	sc.workers = 5
	dir := sc.build(t, t.TempDir())
	// Also with a tiny exact limit, so distributions and slices fold into histograms at
	// points that must not depend on which log finished first.
	for _, limit := range []int{0, 40} {
		opts := goldenCases[0].opts()
		opts.ExactLimit = limit
		opts.Parallelism = 4
		s1, r1 := analyseDir(t, opts, dir)
		opts.Parallelism = 1
		s2, r2 := analyseDir(t, opts, dir)
		o1, o2 := outputs(t, s1, r1), outputs(t, s2, r2)
		for k := range o1 {
			if !bytes.Equal(o1[k], o2[k]) {
				t.Errorf("limit %d: %s differs between runs:\n%s", limit, k, firstDiff(string(o1[k]), string(o2[k])))
			}
		}
		if limit > 0 && !bytes.Contains(o1["json"], []byte(`"approx": true`)) {
			t.Errorf("limit %d: no distribution folded into a histogram", limit)
		}
	}
}
