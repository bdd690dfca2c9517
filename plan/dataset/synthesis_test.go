package dataset

import (
	"slices"
	"strings"
	"testing"
)

func TestSynthesis(t *testing.T) {
	// Rows 1 and 2 share block 7 (block size 4); row 3 has no hash_ids; row 4 is a literal text.
	trace := `{"timestamp": 0, "input_length": 10, "output_length": 8, "hash_ids": [7, 1, 2]}
{"timestamp": 1, "input_length": 6, "output_length": 3, "hash_ids": [7, 3]}
{"timestamp": 2, "input_length": 20, "output_length": 5}
{"timestamp": 3, "text_input": "a literal prompt", "output_length": 40}
`
	type row struct {
		isl, osl int
		ids      []int64
	}
	cases := []struct {
		name string
		s    Synthesis
		want []row
	}{
		{"none", Synthesis{}, []row{{10, 8, []int64{7, 1, 2}}, {6, 3, []int64{7, 3}}, {20, 5, nil}, {-1, 40, nil}}},
		{"prompt x2: shared block kept, leaf doubled, fresh ids", Synthesis{PromptLenMultiplier: 2},
			[]row{{4 + 12, 8, []int64{7, 1, 2, 8}}, {4 + 4, 3, []int64{7, 3}}, {40, 5, nil}, {-1, 40, nil}}},
		{"prompt x0.5", Synthesis{PromptLenMultiplier: 0.5}, []row{{4 + 3, 8, []int64{7, 1}}, {4 + 1, 3, []int64{7, 3}}, {10, 5, nil}, {-1, 40, nil}}},
		{"output x1.5, max osl 10", Synthesis{OutputLenMultiplier: 1.5, MaxOSL: 10}, []row{{10, 10, []int64{7, 1, 2}}, {6, 5, []int64{7, 3}}, {20, 8, nil}, {-1, 10, nil}}},
		{"max isl 10 drops row 3", Synthesis{MaxISL: 10}, []row{{10, 8, []int64{7, 1, 2}}, {6, 3, []int64{7, 3}}, {-1, 40, nil}}},
		{"prefix x2: the shared block becomes two shared fresh ones", Synthesis{PrefixLenMultiplier: 2},
			[]row{{8 + 6, 8, []int64{8, 9, 1, 2}}, {8 + 2, 3, []int64{8, 9, 3}}, {20, 5, nil}, {-1, 40, nil}}},
		{"prefix x2 and prompt x0.5", Synthesis{PrefixLenMultiplier: 2, PromptLenMultiplier: 0.5},
			[]row{{8 + 3, 8, []int64{8, 9, 1}}, {8 + 1, 3, []int64{8, 9, 3}}, {10, 5, nil}, {-1, 40, nil}}},
	}
	path := writeTemp(t, "trace.jsonl", trace)
	tok, c := fileEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadFile(FileOptions{Path: path, Type: TypeMooncake, BlockSize: 4, Tokenizer: tok, Corpus: c, Synthesis: tc.s})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds.Conversations) != len(tc.want) {
				t.Fatalf("%d conversations, want %d", len(ds.Conversations), len(tc.want))
			}
			for i, w := range tc.want {
				turn := ds.Conversations[i].Turns[0]
				if w.isl >= 0 && (turn.PromptTokens != w.isl || tok.Count(turn.Prompt) != w.isl) {
					t.Errorf("row %d: %d tokens (counted %d), want %d", i, turn.PromptTokens, tok.Count(turn.Prompt), w.isl)
				}
				if turn.OSL != w.osl || !slices.Equal(turn.HashIDs, w.ids) {
					t.Errorf("row %d: osl %d hash_ids %v, want %d %v", i, turn.OSL, turn.HashIDs, w.osl, w.ids)
				}
			}
			// The shared block stays byte-identical between the two rows that share it.
			p0, p1 := tok.Encode(ds.Conversations[0].Turns[0].Prompt), tok.Encode(ds.Conversations[1].Turns[0].Prompt)
			if !slices.Equal(p0[:4], p1[:4]) {
				t.Errorf("the shared block differs: %v / %v", p0[:4], p1[:4])
			}
		})
	}
	bad := []struct {
		typ  string
		s    Synthesis
		want string
	}{
		{TypeMooncake, Synthesis{PromptLenMultiplier: -1}, "--synthesis-prompt-len-multiplier must be in (0,1e6]"},
		{TypeMooncake, Synthesis{MaxOSL: -2}, "--synthesis-max-isl and --synthesis-max-osl must be in [0,16777216]"},
		{TypeMooncake, Synthesis{PrefixRootMultiplier: -1}, "--synthesis-prefix-root-multiplier must be in [1,"},
		{TypeMooncake, Synthesis{MaxISL: 1}, "no row is at most --synthesis-max-isl 1 tokens long"},
		{TypeSingleTurn, Synthesis{MaxISL: 5}, "apply to mooncake_trace and bailian_trace (got single_turn)"},
	}
	single := writeTemp(t, "single.jsonl", `{"text": "hello"}`+"\n")
	for _, b := range bad {
		p := path
		if b.typ == TypeSingleTurn {
			p = single
		}
		_, err := LoadFile(FileOptions{Path: p, Type: b.typ, BlockSize: 4, Tokenizer: tok, Corpus: c, Synthesis: b.s})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: got %v, want %q", b.s, err, b.want)
		}
	}
}

func TestSynthesisPrefixRoots(t *testing.T) {
	// Rows 1 and 2 share block 7; row 3 (session s, two turns) shares block 7 too.
	trace := `{"timestamp": 0, "input_length": 10, "hash_ids": [7, 1, 2]}
{"timestamp": 1, "input_length": 6, "hash_ids": [7, 3]}
{"timestamp": 2, "session_id": "s", "input_length": 6, "hash_ids": [7, 4]}
{"session_id": "s", "delay": 5, "input_length": 10, "hash_ids": [7, 4, 5]}
`
	path := writeTemp(t, "trace.jsonl", trace)
	tok, c := fileEnv(t)
	load := func(seed uint64) *Dataset {
		ds, err := LoadFile(FileOptions{Path: path, Type: TypeMooncake, BlockSize: 4, Tokenizer: tok, Corpus: c, Seed: seed,
			Synthesis: Synthesis{PrefixRootMultiplier: 3}})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	split, together := false, false
	for seed := range uint64(40) {
		ds := load(seed)
		if b := load(seed); !slices.Equal(b.Conversations[0].Turns[0].HashIDs, ds.Conversations[0].Turns[0].HashIDs) {
			t.Fatalf("seed %d: two loads differ", seed)
		}
		a, b := ds.Conversations[0].Turns[0], ds.Conversations[1].Turns[0]
		s0, s1 := ds.Conversations[2].Turns[0], ds.Conversations[2].Turns[1]
		if s0.HashIDs[0] != s1.HashIDs[0] || s0.HashIDs[1] != s1.HashIDs[1] {
			t.Fatalf("seed %d: the turns of one session are on different trees: %v %v", seed, s0.HashIDs, s1.HashIDs)
		}
		if len(a.HashIDs) != 3 || len(b.HashIDs) != 2 || a.PromptTokens != 10 || b.PromptTokens != 6 {
			t.Fatalf("seed %d: lengths changed: %+v %+v", seed, a, b)
		}
		ea, eb := tok.Encode(a.Prompt), tok.Encode(b.Prompt)
		if a.HashIDs[0] == b.HashIDs[0] {
			together = true
			if !slices.Equal(ea[:4], eb[:4]) {
				t.Fatalf("seed %d: same tree, shared block differs", seed)
			}
		} else {
			split = true
			if slices.Equal(ea[:4], eb[:4]) {
				t.Fatalf("seed %d: different trees, yet the first block is the same", seed)
			}
		}
	}
	if !split || !together {
		t.Errorf("over 40 seeds: rows on different trees %v, on one tree %v; want both", split, together)
	}
}

func TestSynthesisPrefixStretch(t *testing.T) {
	// Row 1's core is two shared blocks (7, 1); rows 2 and 3 have one (7).
	trace := `{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [7, 1, 2]}
{"timestamp": 1, "input_length": 8, "output_length": 1, "hash_ids": [7, 1]}
{"timestamp": 2, "input_length": 6, "output_length": 1, "hash_ids": [7, 3]}
`
	path := writeTemp(t, "trace.jsonl", trace)
	tok, c := fileEnv(t)
	ds, err := LoadFile(FileOptions{Path: path, Type: TypeMooncake, BlockSize: 4, Tokenizer: tok, Corpus: c, Synthesis: Synthesis{PrefixLenMultiplier: 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		isl int
		ids []int64
	}{{14, []int64{8, 9, 10, 2}}, {12, []int64{8, 9, 1}}, {10, []int64{8, 9, 3}}}
	var enc [][]int
	for i, w := range want {
		turn := ds.Conversations[i].Turns[0]
		if turn.PromptTokens != w.isl || tok.Count(turn.Prompt) != w.isl || !slices.Equal(turn.HashIDs, w.ids) {
			t.Errorf("row %d: %d tokens (counted %d), hash_ids %v; want %d %v", i, turn.PromptTokens, tok.Count(turn.Prompt), turn.HashIDs, w.isl, w.ids)
		}
		enc = append(enc, tok.Encode(turn.Prompt))
	}
	if !slices.Equal(enc[0][:8], enc[1][:8]) || !slices.Equal(enc[0][:8], enc[2][:8]) {
		t.Error("the stretched shared prefix (blocks 8, 9) differs between rows")
	}
}
