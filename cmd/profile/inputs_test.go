package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/profile"
)

// TestInputsJSONBesideThePlan: profile's artifact directory holds AIPerf's inputs.json
// beside the plan, one session per entry with the bodies the plan sends, for a compiled plan
// and a shared --plan alike.
func TestInputsJSONBesideThePlan(t *testing.T) {
	url := faultServer(t, func(int64) bool { return false })
	compiled := profileArgs(t, nil, quick(url)...)
	if compiled.code != 0 {
		t.Fatalf("exit %d\n%s", compiled.code, compiled.stderr)
	}
	p, _ := planOf(t, compiled)
	planPath, _ := filepath.Glob(filepath.Join(compiled.dir, "*", profile.PlanFile))
	shared := profileArgs(t, nil, "--plan", planPath[0], "--url", url, "--ui-type", "none", "--max-schedule-lag", "10s",
		"--max-worker-cpu", "100000", "--workers", "1", "--no-pin")
	if shared.code != 0 {
		t.Fatalf("--plan: exit %d\n%s", shared.code, shared.stderr)
	}
	for _, r := range []profileRun{compiled, shared} {
		m, _ := filepath.Glob(filepath.Join(r.dir, "*", plan.InputsJSONFile))
		if len(m) != 1 {
			t.Fatalf("%s: inputs.json files %v, want one beside the plan", r.dir, m)
		}
		b, err := os.ReadFile(m[0])
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Data []struct {
				SessionID string            `json:"session_id"`
				Payloads  []json.RawMessage `json:"payloads"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		n := 0
		for _, d := range in.Data {
			n += len(d.Payloads)
		}
		if n != p.Len() || len(in.Data) != p.Len() {
			t.Errorf("%s: %d sessions, %d payloads; the plan has %d single-turn requests", m[0], len(in.Data), n, p.Len())
		}
	}
}
