package dataset

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestInsightSmall checks Insight on a trace small enough to work out by hand.
func TestInsightSmall(t *testing.T) {
	turn := func(ts int64, isl, osl int, ids ...int64) Turn {
		return Turn{TimestampNs: ts, DelayNs: NoTime, PromptTokens: isl, OSL: osl, HashIDs: ids}
	}
	ds := &Dataset{Timed: true, BlockSize: 10, Conversations: []Conversation{
		{Turns: []Turn{turn(0, 25, 5, 1, 2, 3)}},
		{Turns: []Turn{turn(20, 15, 7, 1, 2)}}, // arrives third
		{Turns: []Turn{turn(10, 30, 9, 1, 4, 5)}},
		{Turns: []Turn{turn(30, 8, 1)}}, // no hash ids
	}}
	got := Insight(ds)
	// Arrival order: [1 2 3], [1 4 5], [1 2], [].
	// Hit rates: 0/3 (cold), 1/3 (block 1), 2/2 → mean 4/9; blocks 3 of 8.
	// Prefix nodes: (1)×3, (1 2)×2, (1 2 3), (1 4), (1 4 5) → 5 unique; reused 5 of 8.
	// Position counts: (0,1)×3, (1,2)×2, (2,3), (1,4), (2,5): context lengths 2·10=20,
	// 1·10=10, 15 (all repeated); no-hash request: 0, unique 8.
	want := map[string]float64{
		"total_requests":     4,
		"unique_prefixes":    5,
		"num_prefix_groups":  1,
		"prefix_reuse_ratio": 5.0 / 8,
		"cache_hit_rate":     (0 + 1.0/3 + 1) / 3,
		"block_hit_rate":     3.0 / 8,
		"min_isl":            8,
		"max_isl":            30,
		"avg_isl":            78.0 / 4,
		"min_osl":            1,
		"max_osl":            9,
		"avg_osl":            22.0 / 4,
		"duration_s":         30e-9,
	}
	for k, w := range want {
		if g := toFloat(got[k]); math.Abs(g-w) > 1e-12 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	ctx := got["context_length_stats"].(map[string]float64)
	// Context lengths in arrival order: 20, 10, 15, 0 → sorted 0 10 15 20.
	if ctx["min"] != 0 || ctx["max"] != 20 || ctx["median"] != 12.5 || ctx["p25"] != 7.5 || ctx["mean"] != 11.25 {
		t.Errorf("context_length_stats %v", ctx)
	}
	uniq := got["unique_prompt_length_stats"].(map[string]float64)
	// Unique lengths: 25-20=5, 30-10=20, 0, 8.
	if uniq["max"] != 20 || uniq["min"] != 0 || uniq["mean"] != 33.0/4 {
		t.Errorf("unique_prompt_length_stats %v", uniq)
	}
	isl := got["isl_stats"].(map[string]float64)
	// ISL 8 15 25 30: mean 19.5, population std sqrt(((11.5)²+(4.5)²+(5.5)²+(10.5)²)/4).
	if math.Abs(isl["std_dev"]-math.Sqrt((11.5*11.5+4.5*4.5+5.5*5.5+10.5*10.5)/4)) > 1e-12 || isl["p75"] != 26.25 {
		t.Errorf("isl_stats %v", isl)
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func TestInsightEmpty(t *testing.T) {
	got := Insight(&Dataset{})
	if got["total_requests"] != 0 || got["cache_hit_rate"] != 0.0 {
		t.Errorf("empty dataset: %v", got)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Error(err)
	}
}

// TestInsightConversationTrace compares Insight on the real trace with a golden file
// (-update rewrites it). The golden numbers were checked against an independent Python
// implementation of aiperf analyze-trace's PrefixAnalyzer when the file was created.
func TestInsightConversationTrace(t *testing.T) {
	ds := conversationDataset(t)
	got, err := json.MarshalIndent(Insight(ds), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join(fileTestdata, "insight_conversation_trace.golden.json")
	if *updateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Insight differs from %s (run with -update if intended):\n%s", golden, got)
	}
}
