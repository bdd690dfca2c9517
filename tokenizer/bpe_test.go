package tokenizer

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// naiveBPE is the textbook algorithm, quadratic and obviously right: merge the adjacent
// pair of lowest rank (leftmost on ties) until none is left. It agrees with HuggingFace's
// queue-based merge whenever no two merges produce the same token.
func naiveBPE(m *bpeModel, word string) []int {
	var syms []int32
	for i := 0; i < len(word); i++ {
		syms = append(syms, m.byteIDs[word[i]]...)
	}
	for {
		best, bestRank, bestID := -1, int32(0), int32(0)
		for i := 0; i+1 < len(syms); i++ {
			if rank, id, ok := m.merges.get(syms[i], syms[i+1]); ok && (best < 0 || rank < bestRank) {
				best, bestRank, bestID = i, rank, id
			}
		}
		if best < 0 {
			break
		}
		syms = slices.Replace(syms, best, best+2, bestID)
	}
	out := make([]int, len(syms))
	for i, s := range syms {
		out[i] = int(s)
	}
	return out
}

func TestBPEMatchesNaive(t *testing.T) {
	tok := builtin(t)
	m := &tok.model
	// The naive model is only equivalent when every token has a single merge producing it.
	made := map[int32]bool{}
	for i, k := range m.merges.keys {
		if k == emptyKey {
			continue
		}
		id := int32(uint32(m.merges.vals[i]))
		if made[id] {
			t.Skip("Qwen3 has two merges producing one token; the naive model does not apply")
		}
		made[id] = true
	}
	rng := rand.New(rand.NewSource(3))
	words := strings.Fields(readCorpus(t, "go_source.txt"))[:1500]
	for range 1500 {
		b := make([]byte, 1+rng.Intn(40))
		for i := range b {
			b[i] = "aeiou tnsrlhdcm.,'\n\t€ü中"[rng.Intn(28)]
		}
		words = append(words, string(b))
	}
	var sc bpeScratch
	for _, w := range words {
		got := m.appendWord(nil, w, &sc)
		if want := naiveBPE(m, w); !slices.Equal(got, want) {
			t.Fatalf("%+q: got %v, want %v", w, got, want)
		}
	}
}

// TestLongWord guards against quadratic merging: on a 20 KB unbroken word the merge loop
// takes at most three heap entries per byte (the starting pairs plus two per merge; a
// rescan per merge would take ~n²/2), and the word round-trips. BenchmarkLongWord holds the
// time it takes.
func TestLongWord(t *testing.T) {
	tok := builtin(t)
	for _, w := range longWords() {
		var sc bpeScratch
		ids := tok.model.appendWord(nil, w, &sc)
		if sc.pops == 0 || sc.pops > 3*len(w) {
			t.Errorf("%.10q… (%d bytes): %d heap entries examined, want 1..%d", w, len(w), sc.pops, 3*len(w))
		}
		if got := tok.Decode(ids); got != w {
			t.Fatalf("%.10q… (%d bytes): appendWord does not round-trip", w, len(w))
		}
		if got := tok.Decode(tok.Encode(w)); got != w {
			t.Fatalf("%.10q… (%d bytes): Encode does not round-trip", w, len(w))
		}
	}
}

// longWords are 20 KB unbroken words, the case where naive BPE is quadratic: random
// letters, one repeated letter, and spaces.
func longWords() []string {
	rng := rand.New(rand.NewSource(4))
	b := make([]byte, 20000)
	for i := range b {
		b[i] = byte('a' + rng.Intn(26))
	}
	return []string{string(b), strings.Repeat("a", 20000), strings.Repeat(" ", 20000)}
}
