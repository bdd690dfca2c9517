package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/endpoint"
)

func TestSingleTurn(t *testing.T) {
	ds, err := loadFixture(t, "single_turn.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := fileEnv(t)
	if !ds.Timed || len(ds.Conversations) != 4 {
		t.Fatalf("timed %v, %d conversations", ds.Timed, len(ds.Conversations))
	}
	c := ds.Conversations
	if tr := c[0].Turns[0]; tr.OSL != 120 || tr.PromptTokens != tok.Count(tr.Prompt) || tr.TimestampNs != 0 {
		t.Errorf("line 1: %+v", tr)
	}
	if tr := c[1].Turns[0]; tr.Prompt != "First part of the prompt.\nSecond part of the prompt." || tr.TimestampNs != 1_500_000_000 {
		t.Errorf("line 2: %q at %d", tr.Prompt, tr.TimestampNs)
	}
	s1 := c[2]
	if s1.SessionID != "s1" || len(s1.Turns) != 2 || !s1.SelfContained {
		t.Fatalf("session s1: %+v", s1)
	}
	if s1.Turns[1].DelayNs != 250_500_000 || s1.Turns[1].TimestampNs != NoTime {
		t.Errorf("delay 250.5 ms → %d ns", s1.Turns[1].DelayNs)
	}
	if x := s1.Turns[0].Extra; string(x["temperature"].(json.RawMessage)) != "0.5" || string(x["top_p"].(json.RawMessage)) != "0.9" {
		t.Errorf("extra %v", x)
	}
	if tr := c[3].Turns[0]; tr.Query != "what is a lighthouse" || !slices.Equal(tr.Passages, []string{"A lighthouse is a tower.", "Lamps guide ships."}) || tr.Prompt != "" {
		t.Errorf("rankings line: %+v", tr)
	}
}

func TestSingleTurnRole(t *testing.T) {
	tok, c := fileEnv(t)
	ds, err := LoadFile(FileOptions{Path: writeTemp(t, "r.jsonl", `{"text": "You are helpful.", "role": "system"}`), Type: TypeSingleTurn, Tokenizer: tok, Corpus: c})
	if err != nil {
		t.Fatal(err)
	}
	if got := ds.Conversations[0].Turns[0].Messages; !slices.Equal(got, []endpoint.Message{{Role: "system", Content: "You are helpful."}}) {
		t.Errorf("messages %v", got)
	}
}

func TestMultiTurn(t *testing.T) {
	ds, err := loadFixture(t, "multi_turn.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Timed || len(ds.Conversations) != 2 {
		t.Fatalf("timed %v, %d conversations", ds.Timed, len(ds.Conversations))
	}
	c1 := ds.Conversations[0]
	if c1.SessionID != "chat-1" || c1.SelfContained || len(c1.Turns) != 2 {
		t.Fatalf("chat-1: %+v", c1)
	}
	t0, t1 := c1.Turns[0], c1.Turns[1]
	if t0.System != "Answer briefly." || t0.Prompt != "Hello there, who are you?" || t0.Reply != "I am a benchmark." || t0.TimestampNs != 0 {
		t.Errorf("chat-1 turn 1: %+v", t0)
	}
	if t1.Prompt != "What do you measure?" || t1.DelayNs != 1_000_000_000 || t1.OSL != 64 || t1.Reply != "" {
		t.Errorf("chat-1 turn 2: %+v", t1)
	}
	if c2 := ds.Conversations[1]; c2.Turns[0].TimestampNs != 500_000_000 || c2.Turns[1].DelayNs != 2_000_000_000 {
		t.Errorf("chat-2: %+v", c2)
	}
}

func TestRandomPool(t *testing.T) {
	load := func(strategy string, n int) *Dataset {
		ds, err := loadFixture(t, "random_pool", func(o *FileOptions) {
			o.SamplingStrategy = strategy
			o.NumConversations = n
		})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	queries := []string{"Who wrote Macbeth?", "When was the Globe built?", "What is iambic pentameter?"}
	passages := []string{"Macbeth is a tragedy by William Shakespeare.", "The Globe Theatre was built in 1599."}
	// Files are pools in name order (passages.jsonl, queries.jsonl); each conversation merges
	// one entry of each.
	seq := load(SamplingSequential, 7)
	for i, c := range seq.Conversations {
		tr := c.Turns[0]
		if tr.Query != queries[i%3] || !slices.Equal(tr.Passages, []string{passages[i%2]}) {
			t.Errorf("sequential %d: %q %v", i, tr.Query, tr.Passages)
		}
	}
	// Shuffle: every entry once per pass over the pool.
	sh := load(SamplingShuffle, 6)
	count := map[string]int{}
	for _, c := range sh.Conversations {
		count[c.Turns[0].Query]++
	}
	for _, q := range queries {
		if count[q] != 2 {
			t.Errorf("shuffle: %q drawn %d times in two passes", q, count[q])
		}
	}
	// Random (the default) with replacement: deterministic per seed, 100 by default.
	r1, r2 := load("", 0), load("", 0)
	if len(r1.Conversations) != DefaultPoolConversations {
		t.Fatalf("%d conversations by default", len(r1.Conversations))
	}
	for i := range r1.Conversations {
		if r1.Conversations[i].Turns[0].Query != r2.Conversations[i].Turns[0].Query {
			t.Fatal("random sampling differs between two loads with one seed")
		}
	}
	seen := map[string]bool{}
	for _, c := range r1.Conversations {
		seen[c.Turns[0].Query] = true
	}
	if len(seen) != 3 {
		t.Errorf("100 random draws saw %d of 3 queries", len(seen))
	}
}

func TestRawPayload(t *testing.T) {
	ds, err := loadFixture(t, "raw_payload.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Conversations) != 2 {
		t.Fatalf("%d conversations", len(ds.Conversations))
	}
	if got := string(ds.Conversations[1].Turns[0].Raw); got != `{"model":"m","prompt":"Once upon a time","max_tokens":32,"stream":true}` {
		t.Errorf("body %s", got)
	}
	if ds.Conversations[0].Turns[0].OSL != 16 || ds.Conversations[1].Turns[0].OSL != 32 {
		t.Errorf("OSL from max_tokens: %d %d", ds.Conversations[0].Turns[0].OSL, ds.Conversations[1].Turns[0].OSL)
	}
	dir, err := loadFixture(t, "raw_payload_dir", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dir.Conversations) != 2 || dir.Conversations[0].SessionID != "session-a" || len(dir.Conversations[0].Turns) != 2 ||
		!dir.Conversations[0].SelfContained || dir.Conversations[1].Turns[0].OSL != 8 {
		t.Errorf("folder: %+v", dir.Conversations)
	}
}

func TestCustomLineErrors(t *testing.T) {
	tests := []struct {
		typ, content, want string
	}{
		{TypeSingleTurn, `{"text": "a", "texts": ["b"]}`, "line 1: text and texts are mutually exclusive"},
		{TypeSingleTurn, `{"image_uuids": ["u"], "text": "x"}`, "line 1: image_uuids: not supported"},
		{TypeSingleTurn, `{"images": [1], "text": "x"}`, "line 1: images: want a path or URL"},
		{TypeSingleTurn, `{"audio": "", "text": "x"}`, "line 1: audio[0]: empty path"},
		{TypeSingleTurn, `{"text": "a", "timestamp": 1, "delay": 2}`, "line 1: timestamp and delay are mutually exclusive"},
		{TypeSingleTurn, `{"text": "a", "output_length": 0}`, "line 1: output_length 0: must be positive"},
		{TypeSingleTurn, `{"texts": [3]}`, "line 1: texts[0]: want a string or a {name, contents} object"},
		{TypeSingleTurn, "{\"text\": \"ok\"}\n{\"role\": \"user\"}", "line 2: no text"},
		{TypeMultiTurn, `{"session_id": "a", "turns": []}`, "line 1: turns: want at least one turn"},
		{TypeMultiTurn, `{"turns": [{"role": "assistant", "text": "x"}]}`, "line 1: turns[0]: an assistant turn must follow a user turn"},
		{TypeMultiTurn, `{"turns": [{"role": "tool", "text": "x"}]}`, `line 1: turns[0]: role "tool"`},
		{TypeMultiTurn, "{\"session_id\": \"a\", \"turns\": [{\"text\": \"x\"}]}\n{\"session_id\": \"a\", \"turns\": [{\"text\": \"y\"}]}", `line 2: session_id "a" is already the conversation of line 1`},
		{TypeRandomPool, `{"text": "x", "timestamp": 5}`, "line 1: timestamp and delay are not part of this format"},
		{TypeRandomPool, `{"text": "x", "session_id": "s"}`, "line 1: session_id is not part of this format"},
		{TypeRawPayload, "{\"a\": 1}\nnot json", "line 2: invalid JSON"},
		{TypeRawPayload, `{}`, "line 1: an empty request body"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.want, func(t *testing.T) {
			tok, c := fileEnv(t)
			_, err := LoadFile(FileOptions{Path: writeTemp(t, "in.jsonl", tc.content), Type: tc.typ, Tokenizer: tok, Corpus: c})
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a *LineError containing %q", err, tc.want)
			}
		})
	}
}

func TestRandomPoolFolderNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(`{"text": "fine"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("{\"text\": \"fine\"}\n{\"text\": 3}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, c := fileEnv(t)
	_, err := LoadFile(FileOptions{Path: dir, Tokenizer: tok, Corpus: c})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.jsonl")+" line 2") {
		t.Fatalf("error %v", err)
	}
}
