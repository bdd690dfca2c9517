package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func testSynth(t testing.TB) *promptSynth {
	t.Helper()
	tok, c := fileEnv(t)
	s, err := promptSynthFor(tok, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustBlocks(t testing.TB, s *promptSynth, size int, seed uint64) *blocks {
	t.Helper()
	bl, err := s.blocks(size, seed)
	if err != nil {
		t.Fatal(err)
	}
	return bl
}

// TestSynthStreamTokensStandAlone checks the filtered stream's invariants under Qwen3: every
// token is a word or a punctuation token that encodes to itself, punctuation only follows a
// word, and the separator is one token.
func TestSynthStreamTokensStandAlone(t *testing.T) {
	s := testSynth(t)
	tok := s.tok
	if got := tok.Encode("\n"); len(got) != 1 || got[0] != s.sepID {
		t.Fatalf("separator %v, newline encodes to %v", s.sepID, got)
	}
	if len(s.ids) < 100_000 {
		t.Fatalf("filtered stream has %d tokens; the Shakespeare corpus should give far more", len(s.ids))
	}
	checked := map[int32]bool{}
	for i, id := range s.ids {
		if i > 0 && s.kinds[i] == kindPunct && s.kinds[i-1] != kindWord {
			t.Fatalf("punctuation at %d follows a non-word", i)
		}
		if checked[id] {
			continue
		}
		checked[id] = true
		text := s.text[s.off[i]:s.off[i+1]]
		if enc := tok.Encode(text); len(enc) != 1 || enc[0] != int(id) {
			t.Fatalf("token %d %q re-encodes to %v", id, text, enc)
		}
	}
	if s.kinds[0] != kindWord {
		t.Fatal("stream does not start on a word (windows wrapping around would glue punctuation)")
	}
}

// TestSynthWindowsReencode checks, on random windows, that any window of the stream
// re-encodes to exactly its tokens, and so does any concatenation of blocks.
func TestSynthWindowsReencode(t *testing.T) {
	s := testSynth(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for range 200 {
		p := int(s.words[rng.IntN(len(s.words))])
		k := 1 + rng.IntN(300)
		var b strings.Builder
		s.appendWindow(&b, p, k)
		want := s.appendWindowIDs(nil, p, k)
		if got := s.tok.Encode(b.String()); !slices.Equal(got, want) {
			t.Fatalf("window %d+%d: %d tokens re-encode to %d", p, k, len(want), len(got))
		}
	}
	// Blocks of several sizes in random orders, random remainders: the separator keeps them
	// apart, so encode(concatenation) == concatenation of the blocks' tokens.
	for _, size := range []int{2, 5, 16, 64, 512} {
		bl := mustBlocks(t, s, size, rng.Uint64())
		for range 20 {
			ids := make([]int64, 1+rng.IntN(8))
			for i := range ids {
				ids[i] = int64(rng.IntN(50)) // small ids: repeats and shared blocks
			}
			last := 1 + rng.IntN(size)
			n := (len(ids)-1)*size + last
			text, err := bl.hashPrompt(ids, n, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := bl.promptIDs(nil, ids, last)
			got := s.tok.Encode(text)
			if !slices.Equal(got, want) || len(got) != n {
				t.Fatalf("size %d ids %v last %d: %d tokens, want %d", size, ids, last, len(got), n)
			}
		}
	}
}

// TestBlocksSharedPrefix is the Done-when property on made-up traces: prompts whose hash_ids
// agree on the first k ids agree on the first k·size tokens, and differ in block k+1.
func TestBlocksSharedPrefix(t *testing.T) {
	s := testSynth(t)
	for _, size := range []int{16, 512} {
		bl := mustBlocks(t, s, size, 42)
		a := []int64{7, 8, 9, 10}
		b := []int64{7, 8, 99, 100, 101}
		k := 2
		ta, err := bl.hashPrompt(a, 3*size+size/3, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := bl.hashPrompt(b, 5*size, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		ea, eb := s.tok.Encode(ta), s.tok.Encode(tb)
		if len(ea) != 3*size+size/3 || len(eb) != 5*size {
			t.Fatalf("lengths %d %d", len(ea), len(eb))
		}
		if !slices.Equal(ea[:k*size], eb[:k*size]) {
			t.Fatalf("size %d: first %d blocks differ", size, k)
		}
		if slices.Equal(ea[k*size:(k+1)*size], eb[k*size:(k+1)*size]) {
			t.Fatalf("size %d: block %d is the same for different ids", size, k+1)
		}
		// A partial last block is a token prefix of the same id's full block.
		full, err := bl.hashPrompt([]int64{5, 6}, 2*size, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		part, err := bl.hashPrompt([]int64{5, 6}, size+3, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(full, part) {
			t.Fatalf("size %d: a partial block is not a prefix of the full block", size)
		}
	}
}

// TestBlocksDistinctContents checks that distinct ids get distinct block contents and that
// the mapping depends on the seed.
func TestBlocksDistinctContents(t *testing.T) {
	s := testSynth(t)
	bl := mustBlocks(t, s, 512, 1)
	seen := make(map[[2]int]int64)
	for h := int64(0); h < 200_000; h++ {
		head, tail := bl.content(h)
		if prev, dup := seen[[2]int{head, tail}]; dup {
			t.Fatalf("ids %d and %d share a block", prev, h)
		}
		seen[[2]int{head, tail}] = h
	}
	other := mustBlocks(t, s, 512, 2)
	same := 0
	for h := int64(0); h < 1000; h++ {
		a1, b1 := bl.content(h)
		a2, b2 := other.content(h)
		if a1 == a2 && b1 == b2 {
			same++
		}
	}
	if same > 5 {
		t.Errorf("%d of 1000 blocks are the same under another seed", same)
	}
}

func TestFeistelIsAPermutation(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 7, 64, 100, 1000, 4097} {
		f := newFeistel(n, n*31)
		seen := make([]bool, n)
		for x := range n {
			y := f.apply(x)
			if y >= n || seen[y] {
				t.Fatalf("n=%d: %d maps to %d (repeat or out of range)", n, x, y)
			}
			seen[y] = true
		}
	}
}

func TestHashRemainder(t *testing.T) {
	tests := []struct {
		ids      int
		n, bs    int
		wantLast int
		wantErr  string
	}{
		{1, 1, 512, 1, ""},
		{1, 512, 512, 512, ""},
		{2, 513, 512, 1, ""},
		{2, 1024, 512, 512, ""},
		{14, 6758, 512, 102, ""},
		{2, 10, 512, 0, "hash_ids imply at least 513 tokens, input_length is 10"},
		{2, 1025, 512, 0, "hash_ids imply at most 1024 tokens (2 blocks of 512), input_length is 1025"},
		{1, 0, 16, 0, "hash_ids imply at least 1 tokens, input_length is 0"},
	}
	for _, tc := range tests {
		last, err := hashRemainder(make([]int64, tc.ids), tc.n, tc.bs)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%+v: error %v, want %q", tc, err, tc.wantErr)
			}
			continue
		}
		if err != nil || last != tc.wantLast {
			t.Errorf("%+v: got %d, %v", tc, last, err)
		}
	}
}

func TestFreshPromptsExactAndSeeded(t *testing.T) {
	s := testSynth(t)
	for _, n := range []int{0, 1, 2, 9, 513, 4000} {
		p := s.fresh(rand.New(rand.NewPCG(5, uint64(n))), n)
		if got := s.tok.Count(p); got != n {
			t.Errorf("fresh(%d) has %d tokens", n, got)
		}
		if q := s.fresh(rand.New(rand.NewPCG(5, uint64(n))), n); q != p {
			t.Errorf("fresh(%d) differs for the same stream", n)
		}
	}
}
