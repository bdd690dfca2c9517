package analyze

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// TestRequestAnalyzerMatchesAnalyze: request by request, RequestAnalyzer gives every record
// metric Analyze writes to the per-request export for the same log (streams with reasoning,
// packed reads, HTTP 500s, cancellations), in the same display units, with the same error.
func TestRequestAnalyzerMatchesAnalyze(t *testing.T) {
	sc := scenario{n: 24, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 12, reasoning: 3, concurrency: 4,
		streaming: true, errEvery: 5, packEvery: 3, cancelEvery: 7}
	runDir := sc.build(t, t.TempDir())
	_, records := analyseDir(t, Options{}, runDir)
	type exported struct {
		Metadata struct {
			Index int `json:"request_index"`
		} `json:"metadata"`
		Metrics map[string]struct{ Value any } `json:"metrics"`
		Error   *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	want := map[int]exported{}
	for _, l := range bytes.Split(bytes.TrimSpace(records), []byte("\n")) {
		var e exported
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		want[e.Metadata.Index] = e
	}

	plan, err := mmapds.Open(filepath.Join(runDir, "plan.plan"), mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	ep, _ := endpoint.Lookup("chat")
	a, err := NewRequestAnalyzer(RequestOptions{Endpoint: ep, Tokenizer: wordCounter{}})
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(runDir, "worker-*.rawlog"))
	seen := 0
	for _, path := range logs {
		r, err := rawlog.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for {
			k, err := r.Next()
			if err != nil {
				break
			}
			if k != rawlog.KindRequest {
				continue
			}
			q := r.Request()
			rec, _, err := plan.Record(int(q.Index))
			if err != nil {
				t.Fatal(err)
			}
			m := a.Analyze(q, &rec)
			e, ok := want[int(q.Index)]
			if !ok {
				t.Fatalf("request %d is not in the export", q.Index)
			}
			seen++
			if (e.Error == nil) != m.Valid() {
				t.Fatalf("request %d: valid %v, export error %+v", q.Index, m.Valid(), e.Error)
			}
			if e.Error != nil && !strings.HasPrefix(m.Error(), m.ErrorKind()+": ") {
				t.Errorf("request %d: error %q does not start with its kind %q", q.Index, m.Error(), m.ErrorKind())
			}
			for _, def := range Metrics() {
				if def.Kind != Record {
					continue
				}
				got, has := m.Value(def.ID)
				ev, inExport := e.Metrics[def.Tag]
				f, isNum := ev.Value.(float64)
				if !inExport || !isNum {
					continue // lists (inter_chunk_latency) and metrics the export leaves out
				}
				if !has || got != f {
					t.Errorf("request %d %s: analyzer %v (set %v), export %v", q.Index, def.Tag, got, has, f)
				}
			}
		}
		r.Close()
	}
	if seen != len(want) || seen == 0 {
		t.Fatalf("analysed %d requests, the export has %d", seen, len(want))
	}
}

func TestNewRequestAnalyzerNeedsCounts(t *testing.T) {
	ep, _ := endpoint.Lookup("chat")
	if _, err := NewRequestAnalyzer(RequestOptions{Endpoint: ep}); err == nil {
		t.Error("no tokenizer and no server counts: want an error")
	}
	if _, err := NewRequestAnalyzer(RequestOptions{Endpoint: ep, UseServerTokenCount: true}); err != nil {
		t.Errorf("server counts: %v", err)
	}
	if _, err := NewRequestAnalyzer(RequestOptions{}); err == nil {
		t.Error("no endpoint: want an error")
	}
}
