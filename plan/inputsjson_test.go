package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWriteInputsJSON: AIPerf's inputs.json shape, {"data": [{"session_id", "payloads"}]},
// one entry per session (multi-turn sessions grouped, warmup first), each payload the body
// the plan sends, in turn order.
func TestWriteInputsJSON(t *testing.T) {
	o := testOptions(t)
	o.NumDatasetEntries, o.RequestCount, o.WarmupRequestCount, o.ConversationTurnMean, o.Concurrency = 0, 9, 3, 3, 2
	p, _ := compileOpen(t, o)
	out := filepath.Join(t.TempDir(), InputsJSONFile)
	if err := WriteInputsJSONFile(o.Output, out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Data []struct {
			SessionID string            `json:"session_id"`
			Payloads  []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("inputs.json: %v\n%s", err, b)
	}
	// The plan's sessions, in record order, with their bodies.
	var want [][]json.RawMessage
	for i := range p.Len() {
		r, body, _ := p.Record(i)
		if i == 0 || r.Turn == 0 {
			want = append(want, nil)
		}
		want[len(want)-1] = append(want[len(want)-1], json.RawMessage(body))
	}
	if len(got.Data) != len(want) || len(want) != 4 {
		t.Fatalf("%d sessions in inputs.json, the plan has %d (want 4: 1 warmup, 3 profile)", len(got.Data), len(want))
	}
	seen := map[string]bool{}
	for i, d := range got.Data {
		if d.SessionID == "" || seen[d.SessionID] {
			t.Errorf("session %d: id %q empty or repeated", i, d.SessionID)
		}
		seen[d.SessionID] = true
		var g, w []any
		for _, x := range d.Payloads {
			var v any
			json.Unmarshal(x, &v)
			g = append(g, v)
		}
		for _, x := range want[i] {
			var v any
			json.Unmarshal(x, &v)
			w = append(w, v)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("session %d: payloads differ from the plan's bodies", i)
		}
	}
}
