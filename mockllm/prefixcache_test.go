package mockllm

import (
	"io"
	"strings"
	"testing"
)

// The simulated prefix cache hits a prompt's leading blocks whose whole prefix was sent
// before, only full blocks, and forgets the least recently used past its capacity.
func TestPrefixCache(t *testing.T) {
	seq := func(from, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = from + i
		}
		return out
	}
	c := newPrefixCache(4 * PrefixBlockTokens)
	if hit := c.add(seq(0, 40)); hit != 0 { // 2 full blocks cached, 8 tokens of tail not
		t.Fatalf("cold prompt hit %d", hit)
	}
	if hit := c.add(seq(0, 70)); hit != 32 { // its first 2 blocks hit, then 2 new ones
		t.Fatalf("extended prompt hit %d, want 32", hit)
	}
	// Same tokens after a different first block: no hit (the prefix differs).
	p := append(seq(1000, 16), seq(16, 32)...)
	if hit := c.add(p); hit != 0 {
		t.Fatalf("a different prefix hit %d", hit)
	}
	// Capacity 4 blocks: the first prompt's blocks were evicted by now (2 + 2 + 3 added).
	if hit := c.add(seq(0, 16)); hit != 0 {
		t.Fatalf("an evicted block hit %d", hit)
	}
	if q, h := c.queries.Load(), c.hits.Load(); q != 40+70+48+16 || h != 32 {
		t.Fatalf("queries %d hits %d", q, h)
	}
}

// The server's /metrics has vLLM's prefix-cache counters: two chat requests sharing a long
// prefix, the second hits it.
func TestPrefixCacheMetrics(t *testing.T) {
	s, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveOn(t, s)
	shared := strings.Repeat("alpha beta gamma delta ", 40)
	for _, tail := range []string{"first question", "second question"} {
		resp := post(t, url+"/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": shared + tail}}, "max_tokens": 2})
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	m := scrapeVLLM(t, url)
	q, h := m["vllm:prefix_cache_queries_total"], m["vllm:prefix_cache_hits_total"]
	n := float64(fakeTok.Count(shared))
	if q < 2*n || h < n-2*PrefixBlockTokens || h > n+PrefixBlockTokens {
		t.Fatalf("queries %v hits %v, shared prefix %v tokens", q, h, n)
	}
}
