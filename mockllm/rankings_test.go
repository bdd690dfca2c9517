package mockllm

import (
	"math"
	"testing"
)

func TestRankings(t *testing.T) {
	base := startServer(t, testOptions())
	passages := []string{"alpha", "beta", "gamma", "delta"}
	check := func(t *testing.T, items []any, idxKey, scoreKey string, n int) {
		t.Helper()
		if len(items) != n {
			t.Fatalf("%d results, want %d", len(items), n)
		}
		seen := map[int]bool{}
		prev := math.Inf(1)
		for _, it := range items {
			i := num(path(it, idxKey))
			s := path(it, scoreKey).(float64)
			if seen[i] || i < 0 || i >= len(passages) {
				t.Errorf("bad or repeated index %d", i)
			}
			seen[i] = true
			if s > prev {
				t.Errorf("results not sorted by %s: %v after %v", scoreKey, s, prev)
			}
			prev = s
		}
	}
	t.Run("nim", func(t *testing.T) {
		m := postJSON(t, base+"/v1/ranking", `{"model":"r","query":{"text":"q"},"passages":[{"text":"alpha"},{"text":"beta"},{"text":"gamma"},{"text":"delta"}]}`)
		check(t, m["rankings"].([]any), "index", "logit", 4)
	})
	t.Run("tei", func(t *testing.T) {
		m := postJSON(t, base+"/rerank", `{"query":"q","texts":["alpha","beta","gamma","delta"],"return_text":true}`)
		items := m["list"].([]any)
		check(t, items, "index", "score", 4)
		for _, it := range items {
			if s := path(it, "score").(float64); s < 0 || s > 1 || path(it, "text") != passages[num(path(it, "index"))] {
				t.Errorf("item %v", it)
			}
		}
	})
	t.Run("cohere", func(t *testing.T) {
		m := postJSON(t, base+"/v2/rerank", `{"model":"r","query":"q","documents":["alpha",{"text":"beta"},"gamma","delta"],"top_n":2}`)
		check(t, m["results"].([]any), "index", "relevance_score", 2)
		if str(m["id"]) == "" || path(m, "meta.billed_units.search_units") == nil || num(path(m, "meta.tokens.input_tokens")) != fakeTok.Count("q")+fakeTok.Count("alpha")+fakeTok.Count("beta")+fakeTok.Count("gamma")+fakeTok.Count("delta") {
			t.Errorf("cohere envelope: %v", m)
		}
	})
	// The same pair scores the same across APIs (NIM logit, TEI sigmoid).
	n := postJSON(t, base+"/v1/ranking", `{"query":{"text":"q"},"passages":[{"text":"alpha"}]}`)
	r := postJSON(t, base+"/rerank", `{"query":"q","texts":["alpha"],"raw_scores":true}`)
	if path(n, "rankings.0.logit") != path(r, "list.0.score") {
		t.Errorf("NIM logit %v, TEI raw score %v", path(n, "rankings.0.logit"), path(r, "list.0.score"))
	}
}
