package dataset

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestBailian(t *testing.T) {
	ds, err := loadFixture(t, "bailian_small.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := fileEnv(t)
	if !ds.Timed || ds.BlockSize != DefaultBailianBlockSize || len(ds.Conversations) != 2 {
		t.Fatalf("timed %v, block size %d, %d conversations", ds.Timed, ds.BlockSize, len(ds.Conversations))
	}
	// Chat 159 is the root of 161 and 162 (through 161); 160 is its own session.
	s := ds.Conversations[0]
	if s.SessionID != "159" || len(s.Turns) != 3 || !s.SelfContained {
		t.Fatalf("session 159: %q, %d turns, self-contained %v", s.SessionID, len(s.Turns), s.SelfContained)
	}
	if got := ds.Conversations[1].SessionID; got != "160" {
		t.Errorf("second session %q", got)
	}
	wantTs := []int64{61_114_000_000, 75_250_000_000, 90_000_000_000}
	wantLen := []int{70, 150, 20}
	var enc [][]int
	for i, tr := range s.Turns {
		if tr.TimestampNs != wantTs[i] {
			t.Errorf("turn %d at %d ns, want %d (seconds in the trace)", i, tr.TimestampNs, wantTs[i])
		}
		e := tok.Encode(tr.Prompt)
		if len(e) != wantLen[i] || tr.PromptTokens != wantLen[i] {
			t.Errorf("turn %d: %d tokens (PromptTokens %d), want %d", i, len(e), tr.PromptTokens, wantLen[i])
		}
		enc = append(enc, e)
	}
	// Turn 2 repeats turn 1's five 16-token blocks in full, then two more blocks, then 38
	// fresh tokens (its hash_ids cover only 112 of its 150 tokens).
	if !slices.Equal(enc[0][:64], enc[1][:64]) {
		t.Error("turn 2 does not share turn 1's first four blocks")
	}
	if !slices.Equal(enc[0][64:70], enc[1][64:70]) {
		t.Error("turn 1's partial fifth block is not a prefix of turn 2's full fifth block")
	}
	// Session 160 shares blocks 1089 and 1090 with 159.
	if e := tok.Encode(ds.Conversations[1].Turns[0].Prompt); len(e) != 33 || !slices.Equal(e[:32], enc[0][:32]) {
		t.Errorf("chat 160: %d tokens, shares first two blocks: %v", len(e), len(e) >= 32 && slices.Equal(e[:32], enc[0][:32]))
	}
}

func TestBailianErrors(t *testing.T) {
	tests := []struct {
		content, want string
	}{
		{`{"parent_chat_id": -1, "timestamp": 1, "input_length": 5, "output_length": 1}`, "line 1: no chat_id"},
		{`{"chat_id": 1, "input_length": 5, "output_length": 1}`, "line 1: no timestamp"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [1, 2]}`, "line 1: hash_ids imply at least 17 tokens, input_length is 5"},
		{"{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 5, \"output_length\": 1}\n{\"chat_id\": 1, \"timestamp\": 2, \"input_length\": 5, \"output_length\": 1}", "line 2: chat_id 1 is already the request of line 1"},
		{`{"chat_id": 1, "timestamp": "soon", "input_length": 5, "output_length": 1}`, "line 1: invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			tok, c := fileEnv(t)
			_, err := LoadFile(FileOptions{Path: writeTemp(t, "b.jsonl", tc.content), Type: TypeBailian, Tokenizer: tok, Corpus: c})
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a *LineError containing %q", err, tc.want)
			}
		})
	}
}

func TestBailianParentCycle(t *testing.T) {
	// A cycle (1 → 2 → 1) and a parent outside the file end the walk instead of looping.
	trace := strings.Join([]string{
		`{"chat_id": 1, "parent_chat_id": 2, "timestamp": 1, "input_length": 5, "output_length": 1, "turn": 2}`,
		`{"chat_id": 2, "parent_chat_id": 1, "timestamp": 2, "input_length": 5, "output_length": 1, "turn": 1}`,
		`{"chat_id": 3, "parent_chat_id": 99, "timestamp": 3, "input_length": 5, "output_length": 1}`,
	}, "\n")
	tok, c := fileEnv(t)
	ds, err := LoadFile(FileOptions{Path: writeTemp(t, "c.jsonl", trace), Type: TypeBailian, Tokenizer: tok, Corpus: c})
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, cv := range ds.Conversations {
		turns += len(cv.Turns)
	}
	if turns != 3 {
		t.Fatalf("%d turns in %d conversations", turns, len(ds.Conversations))
	}
}
