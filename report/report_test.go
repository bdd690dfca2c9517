package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/analyze"
)

// fixtureGates is the gate line analyze prints for the fixture with --max-error-rate 0.2.
var fixtureGates = []GateLine{{Text: "Gate error rate <= 0.2: PASS", OK: true}}

// TestRunPageGolden holds the data JSON of the fixture run's page.
func TestRunPageGolden(t *testing.T) {
	r := analyseFixture(t, "rate-a", 500*time.Millisecond)
	p := BuildRun(RunInput{Summary: r.Summary, Records: r.Records, Gates: fixtureGates})
	b, err := DataJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rate-a.report.golden.json", b)
	if p.Verdict == "" || !strings.HasPrefix(p.Verdict, "Verdict: ") {
		t.Errorf("verdict %q", p.Verdict)
	}
	ids := map[string]bool{}
	for _, c := range p.Charts {
		ids[c.ID] = true
		for i, col := range c.Data {
			if len(col) != len(c.Data[0]) {
				t.Errorf("chart %s: column %d has %d values, x has %d", c.ID, i, len(col), len(c.Data[0]))
			}
		}
		if len(c.Data) != len(c.Series)+1 {
			t.Errorf("chart %s: %d columns for %d series", c.ID, len(c.Data), len(c.Series))
		}
	}
	for _, id := range []string{"dispatch", "lag_cdf", "lag_time", "time_to_first_token_cdf", "time_to_first_token_time",
		"inter_token_latency_cdf", "request_latency_time", "inflight", "tokens_per_sec", "isl_hist", "osl_hist", "slices"} {
		if !ids[id] {
			t.Errorf("chart %s missing (have %v)", id, ids)
		}
	}
	if p.ServerNote == "" || len(p.Server) != 0 {
		t.Errorf("server metrics: %v %q, want none and a note", p.Server, p.ServerNote)
	}
}

// TestWriteRunSelfContained checks the page inlines everything: no URL a browser would fetch.
func TestWriteRunSelfContained(t *testing.T) {
	r := analyseFixture(t, "rate-a", 0)
	var b bytes.Buffer
	if err := WriteRun(&b, RunInput{Summary: r.Summary, Records: r.Records}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script src", "<link", "http://", "https://cdn", "@import"} {
		if i := strings.Index(page, bad); i >= 0 && !strings.Contains(page[max(0, i-200):i], "sourceMappingURL") {
			// uPlot's licence comment has no URL; the data has the run's URLs only as JSON strings.
			if bad == "http://" && strings.Contains(page[i:min(len(page), i+40)], "127.0.0.1") {
				continue
			}
			t.Errorf("page holds %q at %d: %q", bad, i, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	start := strings.Index(page, `<script id="data" type="application/json">`)
	end := strings.Index(page[start:], "</script>")
	var p RunPage
	if err := json.Unmarshal([]byte(page[start+len(`<script id="data" type="application/json">`):start+end]), &p); err != nil {
		t.Fatalf("inlined data: %v", err)
	}
	if p.Version != PageVersion || p.Kind != "run" {
		t.Errorf("data version %d kind %q", p.Version, p.Kind)
	}
}

// TestDefinitionsInSync keeps definitions.json equal to docs/metrics.md's tables.
func TestDefinitionsInSync(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(parseDefinitions(string(doc)), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("definitions.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != string(definitionsJSON) {
		t.Errorf("definitions.json is out of date with docs/metrics.md: go test ./report -run TestDefinitionsInSync -update")
	}
	for _, tag := range []string{"time_to_first_token", "schedule_lag", "inter_token_latency"} {
		if definitions[tag] == "" {
			t.Errorf("no definition for %s", tag)
		}
	}
}

// parseDefinitions reads docs/metrics.md's table rows "| `tag` | unit | definition | ...",
// for the metrics of analyze's catalog (the table's tags).
func parseDefinitions(doc string) map[string]string {
	known := map[string]bool{}
	for _, m := range analyze.Metrics() {
		known[m.Tag] = true
	}
	out := map[string]string{}
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		tag := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if !known[tag] || out[tag] != "" {
			continue
		}
		out[tag] = strings.TrimSpace(cells[3])
	}
	return out
}

// telemetryOnly is a run summary with server and GPU series and nothing else.
func telemetryOnly() *analyze.Summary {
	return &analyze.Summary{StartUnixNs: 1, EndUnixNs: 2e9 + 1, RunDirs: []string{"x"},
		ServerSeries: []analyze.ServerMetricSeries{
			{Name: "kv_cache_usage", Unit: "ratio", Kind: "gauge", T: []float64{0, 1, 2}, V: []float64{0.1, 0.5, 0.2}},
			{Name: "gpu.power", Unit: "W", Kind: "gauge", Labels: "gpu=0", T: []float64{0, 1}, V: []float64{300, 310}},
			{Name: "gpu.power", Unit: "W", Kind: "gauge", Labels: "gpu=1", T: []float64{0.5, 1}, V: []float64{200, 210}},
		},
		ServerMetrics: []analyze.ServerMetric{{Name: "kv_cache_usage", Unit: "ratio", Kind: "gauge", Present: true, Max: 0.5}}}
}

// TestTelemetryCharts: server and GPU series (Summary.ServerSeries) become time charts, GPU
// first; their statistics a table. Without them the page says so and draws nothing.
func TestTelemetryCharts(t *testing.T) {
	p := BuildRun(RunInput{Summary: telemetryOnly()})
	if len(p.Charts) != 2 || p.Charts[0].ID != "telemetry_gpu_power" || p.Charts[1].ID != "telemetry_kv_cache_usage" {
		t.Fatalf("charts %+v", p.Charts)
	}
	g := p.Charts[0]
	if len(g.Series) != 2 || len(g.Data) != 3 || len(g.Data[0]) != 3 || !math.IsNaN(g.Data[2][0]) || !g.Time {
		t.Errorf("GPU chart %+v: want two GPUs aligned on x {0, 0.5, 1}", g)
	}
	if len(p.Server) != 1 || p.ServerNote != "" || p.Server[0].Max != 0.5 {
		t.Errorf("server rows %+v note %q", p.Server, p.ServerNote)
	}
	empty := BuildRun(RunInput{Summary: &analyze.Summary{RunDirs: []string{"x"}}})
	if len(empty.Charts) != 0 || !strings.HasPrefix(empty.ServerNote, "not available") || len(empty.GPUs) != 0 {
		t.Errorf("empty run: charts %d note %q", len(empty.Charts), empty.ServerNote)
	}
}
