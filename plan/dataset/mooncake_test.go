package dataset

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan/internal/parallel"
)

var fullTrace = flag.Bool("dataset.full", false, "re-encode every prompt of the Mooncake conversation trace (145M tokens; about 25 s of CPU without -race)")

const conversationTrace = "mooncake_conversation_trace.jsonl"

// traceLine is a Mooncake record as the test reads it, independently of the loader.
type traceLine struct {
	Timestamp    int64   `json:"timestamp"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

func readTraceLines(t testing.TB, name string) []traceLine {
	t.Helper()
	f, err := os.Open(filepath.Join(fileTestdata, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []traceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

var conversationOnce struct {
	sync.Once
	ds  *Dataset
	err error
	dur time.Duration
}

// conversationDataset loads the whole Mooncake conversation trace once per test binary.
func conversationDataset(t testing.TB) *Dataset {
	t.Helper()
	tok, c := fileEnv(t)
	conversationOnce.Do(func() {
		start := time.Now()
		conversationOnce.ds, conversationOnce.err = LoadFile(FileOptions{
			Path: filepath.Join(fileTestdata, conversationTrace), Type: TypeMooncake, Tokenizer: tok, Corpus: c, Seed: 1,
		})
		conversationOnce.dur = time.Since(start)
	})
	if conversationOnce.err != nil {
		t.Fatal(conversationOnce.err)
	}
	return conversationOnce.ds
}

// TestConversationTrace checks the Done-when of the real 12,031-request trace: lengths,
// timestamps, and the block structure of every prompt; token counts and shared prefixes
// are re-encoded on a sample (TestConversationTraceAllTokens does all of them).
func TestConversationTrace(t *testing.T) {
	lines := readTraceLines(t, conversationTrace)
	ds := conversationDataset(t)
	t.Logf("loaded %d requests in %v", len(lines), conversationOnce.dur)
	if len(lines) != 12031 || len(ds.Conversations) != len(lines) {
		t.Fatalf("%d lines, %d conversations", len(lines), len(ds.Conversations))
	}
	if !ds.Timed || ds.BlockSize != 512 || ds.Name != TypeMooncake {
		t.Fatalf("Timed %v BlockSize %d Name %s", ds.Timed, ds.BlockSize, ds.Name)
	}
	total := 0
	full := map[int64]string{} // hash id → its full block's content text
	type partial struct {
		id   int64
		text string
	}
	var partials []partial
	for i, l := range lines {
		c := ds.Conversations[i]
		if len(c.Turns) != 1 {
			t.Fatalf("line %d: %d turns", i+1, len(c.Turns))
		}
		tr := c.Turns[0]
		total += l.InputLength
		if tr.TimestampNs != l.Timestamp*1_000_000 {
			t.Fatalf("line %d: TimestampNs %d, trace says %d ms", i+1, tr.TimestampNs, l.Timestamp)
		}
		if tr.PromptTokens != l.InputLength || tr.OSL != l.OutputLength || !slices.Equal(tr.HashIDs, l.HashIDs) {
			t.Fatalf("line %d: PromptTokens %d OSL %d HashIDs %v", i+1, tr.PromptTokens, tr.OSL, tr.HashIDs)
		}
		// Every block is a newline and content without newlines: split the prompt back
		// into blocks, one per hash id.
		blocks := strings.Split(tr.Prompt, "\n")
		if blocks[0] != "" || len(blocks)-1 != len(l.HashIDs) {
			t.Fatalf("line %d: %d blocks for %d hash ids", i+1, len(blocks)-1, len(l.HashIDs))
		}
		for j, h := range l.HashIDs {
			text := blocks[j+1]
			if j == len(l.HashIDs)-1 && l.InputLength < len(l.HashIDs)*512 {
				partials = append(partials, partial{h, text})
				continue
			}
			if prev, ok := full[h]; ok && prev != text {
				t.Fatalf("line %d: hash id %d has two different contents", i+1, h)
			}
			full[h] = text
		}
	}
	if total != 144_793_823 {
		t.Errorf("trace holds %d input tokens", total)
	}
	byText := make(map[string]int64, len(full))
	for h, text := range full {
		if prev, dup := byText[text]; dup {
			t.Fatalf("hash ids %d and %d have the same content", prev, h)
		}
		byText[text] = h
	}
	for _, p := range partials {
		if f, ok := full[p.id]; ok && !strings.HasPrefix(f, p.text) {
			t.Fatalf("partial block of hash id %d is not a prefix of its full block", p.id)
		}
	}

	// Re-encode a sample: exact length, and the shared-prefix property on pairs.
	tok, _ := fileEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	short := []int{}
	for i, l := range lines {
		if l.InputLength <= 12_000 {
			short = append(short, i)
		}
	}
	enc := func(i int) []int {
		ids := tok.Encode(ds.Conversations[i].Turns[0].Prompt)
		if len(ids) != lines[i].InputLength {
			t.Fatalf("line %d: prompt encodes to %d tokens, input_length is %d", i+1, len(ids), lines[i].InputLength)
		}
		return ids
	}
	for range 20 {
		enc(short[rng.IntN(len(short))])
	}
	// The longest request too.
	longest := 0
	for i, l := range lines {
		if l.InputLength > lines[longest].InputLength {
			longest = i
		}
	}
	enc(longest)

	pairs := 0
	for tries := 0; pairs < 25 && tries < 100_000; tries++ {
		a, b := short[rng.IntN(len(short))], short[rng.IntN(len(short))]
		ha, hb := lines[a].HashIDs, lines[b].HashIDs
		k := 0
		for k < len(ha) && k < len(hb) && ha[k] == hb[k] {
			k++
		}
		if k == 0 || k == len(ha) || k == len(hb) {
			continue // want pairs that share a prefix and then diverge
		}
		pairs++
		ea, eb := enc(a), enc(b)
		if !slices.Equal(ea[:k*512], eb[:k*512]) {
			t.Fatalf("lines %d and %d share %d hash ids but not the first %d tokens", a+1, b+1, k, k*512)
		}
		endA, endB := min(len(ea), (k+1)*512), min(len(eb), (k+1)*512)
		if slices.Equal(ea[k*512:endA], eb[k*512:endB]) {
			t.Fatalf("lines %d and %d differ in hash id %d but not in block %d", a+1, b+1, k+1, k+1)
		}
	}
	if pairs < 25 {
		t.Fatalf("found only %d diverging pairs", pairs)
	}
}

// TestConversationTraceAllTokens re-encodes every prompt of the trace (-dataset.full).
func TestConversationTraceAllTokens(t *testing.T) {
	if !*fullTrace {
		t.Skip("needs -dataset.full (re-encodes 145M tokens)")
	}
	lines := readTraceLines(t, conversationTrace)
	ds := conversationDataset(t)
	tok, _ := fileEnv(t)
	start := time.Now()
	var bad atomic.Int64
	var tokens atomic.Int64
	_ = parallel.Indexed(len(lines), 0, func(i int) error {
		ids := tok.AppendEncode(make([]int, 0, lines[i].InputLength), ds.Conversations[i].Turns[0].Prompt)
		tokens.Add(int64(len(ids)))
		if len(ids) != lines[i].InputLength {
			bad.Add(1)
		}
		return nil
	})
	t.Logf("re-encoded %d tokens in %v on %d CPUs", tokens.Load(), time.Since(start), runtime.GOMAXPROCS(0))
	if bad.Load() > 0 {
		t.Fatalf("%d prompts do not encode to their input_length", bad.Load())
	}
}

// BenchmarkLoadConversationTrace is the Speed figure: LoadFile on the whole Mooncake
// conversation trace (12,031 requests, 145M input tokens), against reading the file and
// copying the same number of bytes as a baseline.
func BenchmarkLoadConversationTrace(b *testing.B) {
	tok, c := fileEnv(b)
	path := filepath.Join(fileTestdata, conversationTrace)
	opts := FileOptions{Path: path, Type: TypeMooncake, Tokenizer: tok, Corpus: c, Seed: 1}
	if _, err := LoadFile(opts); err != nil { // builds the synthesizer once
		b.Fatal(err)
	}
	var promptBytes int
	b.Run("LoadFile", func(b *testing.B) {
		for b.Loop() {
			ds, err := LoadFile(opts)
			if err != nil {
				b.Fatal(err)
			}
			promptBytes = 0
			for _, cv := range ds.Conversations {
				promptBytes += len(cv.Turns[0].Prompt)
			}
		}
		b.ReportMetric(144_793_823/(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9)/1e6, "Mtokens/s")
	})
	b.Run("baseline-copy", func(b *testing.B) {
		src := make([]byte, 1<<20)
		for b.Loop() {
			out := make([][]byte, 0, promptBytes>>20+1)
			for n := 0; n < promptBytes; n += len(src) {
				out = append(out, append([]byte(nil), src...))
			}
			_ = out
		}
	})
}

func TestMooncakeSmall(t *testing.T) {
	ds, err := loadFixture(t, "mooncake_small.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := fileEnv(t)
	if !ds.Timed || len(ds.Conversations) != 6 {
		t.Fatalf("Timed %v, %d conversations", ds.Timed, len(ds.Conversations))
	}
	c := ds.Conversations
	// Lines 1-3 share hash id 0 (and 1 for the first two): identical leading blocks.
	p1, p2, p3 := c[0].Turns[0].Prompt, c[1].Turns[0].Prompt, c[2].Turns[0].Prompt
	e1, e2, e3 := tok.Encode(p1), tok.Encode(p2), tok.Encode(p3)
	if len(e1) != 1030 || len(e2) != 1024 || len(e3) != 600 {
		t.Fatalf("token counts %d %d %d", len(e1), len(e2), len(e3))
	}
	if !slices.Equal(e1[:1024], e2) {
		t.Error("line 2 (hash_ids [0 1], 1024 tokens) is not the first 1024 tokens of line 1 ([0 1 2])")
	}
	if !slices.Equal(e1[:512], e3[:512]) || slices.Equal(e1[512:600], e3[512:600]) {
		t.Error("line 3 ([0 3]) shares block 0 with line 1 and not block 1")
	}
	if got := c[1].Turns[0].TimestampNs; got != 10_500_000 {
		t.Errorf("timestamp 10.5 ms → %d ns", got)
	}
	if c[3].Turns[0].PromptTokens != 77 || tok.Count(c[3].Turns[0].Prompt) != 77 || c[3].Turns[0].HashIDs != nil {
		t.Errorf("line 5 (input_length 77, no hash_ids): %d tokens", tok.Count(c[3].Turns[0].Prompt))
	}
	if c[4].Turns[0].Prompt != "A literal prompt." || c[4].Turns[0].PromptTokens != tok.Count("A literal prompt.") || c[4].Turns[0].OSL != 9 {
		t.Errorf("text_input turn: %+v", c[4].Turns[0])
	}
	s := c[5]
	if s.SessionID != "s" || len(s.Turns) != 2 || s.SelfContained {
		t.Fatalf("session s: %q, %d turns, self-contained %v", s.SessionID, len(s.Turns), s.SelfContained)
	}
	if s.Turns[0].TimestampNs != 40_000_000 || s.Turns[1].TimestampNs != NoTime || s.Turns[1].DelayNs != 1_500_000_000 || s.Turns[0].DelayNs != NoTime {
		t.Errorf("session s timing: %+v / %+v", s.Turns[0], s.Turns[1])
	}
	if got := s.Turns[1].Extra["temperature"]; string(got.(json.RawMessage)) != "0" {
		t.Errorf("extra: %v", s.Turns[1].Extra)
	}
	for i, cv := range c {
		if cv.SessionID == "" {
			t.Errorf("conversation %d has no session id", i)
		}
	}
}

func TestMooncakeDeterministic(t *testing.T) {
	load := func(seed uint64) *Dataset {
		ds, err := loadFixture(t, "mooncake_small.jsonl", func(o *FileOptions) { o.Seed = seed })
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	a, b, other := load(3), load(3), load(4)
	for i := range a.Conversations {
		for j := range a.Conversations[i].Turns {
			if a.Conversations[i].Turns[j].Prompt != b.Conversations[i].Turns[j].Prompt {
				t.Fatalf("conversation %d turn %d differs between two loads with one seed", i, j)
			}
		}
	}
	if a.Conversations[0].Turns[0].Prompt == other.Conversations[0].Turns[0].Prompt {
		t.Error("another seed gives the same prompt")
	}
}

func TestMooncakeModes(t *testing.T) {
	tok, c := fileEnv(t)
	trace := strings.Join([]string{
		`{"session_id": "m", "timestamp": 0, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "output_length": 5}`,
		`{"session_id": "m", "delay": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": "http://x"}}]}], "tools": [{"type": "function", "function": {"name": "f"}}]}`,
		`{"session_id": 7, "timestamp": 5, "payload": {"model": "x", "prompt": "Once upon", "max_tokens": 12}}`,
		`{"session_id": "d", "timestamp": 6, "message_mode": "delta", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q1"}]}`,
	}, "\n")
	ds, err := LoadFile(FileOptions{Path: writeTemp(t, "modes.jsonl", trace), Tokenizer: tok, Corpus: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Conversations) != 3 {
		t.Fatalf("%d conversations", len(ds.Conversations))
	}
	m := ds.Conversations[0]
	if !m.SelfContained || len(m.Turns) != 2 {
		t.Fatalf("messages session: self-contained %v, %d turns", m.SelfContained, len(m.Turns))
	}
	want := []endpoint.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}
	if !slices.Equal(m.Turns[0].Messages, want) || m.Turns[0].Extra != nil || m.Turns[0].OSL != 5 {
		t.Errorf("plain messages: %+v extra %v", m.Turns[0].Messages, m.Turns[0].Extra)
	}
	if got := m.Turns[0].PromptTokens; got != tok.Count("Be brief.")+tok.Count("Hi") {
		t.Errorf("messages PromptTokens %d", got)
	}
	// Content parts beyond text travel verbatim in Extra.
	x := m.Turns[1].Extra
	if string(x["messages"].(json.RawMessage)) != `[{"role":"user","content":[{"type":"text","text":"Look"},{"type":"image_url","image_url":{"url":"http://x"}}]}]` ||
		string(x["tools"].(json.RawMessage)) != `[{"type":"function","function":{"name":"f"}}]` {
		t.Errorf("verbatim extra: %s / %s", x["messages"], x["tools"])
	}
	if m.Turns[1].Messages[0].Content != "Look" || m.Turns[1].DelayNs != 10_000_000 {
		t.Errorf("parts turn: %+v", m.Turns[1])
	}
	p := ds.Conversations[1]
	if p.SessionID != "7" || string(p.Turns[0].Raw) != `{"model":"x","prompt":"Once upon","max_tokens":12}` || p.Turns[0].OSL != 12 {
		t.Errorf("payload: %q %s OSL %d", p.SessionID, p.Turns[0].Raw, p.Turns[0].OSL)
	}
	d := ds.Conversations[2].Turns[0]
	if d.Prompt != "Q1" || d.System != "S" || ds.Conversations[2].SelfContained {
		t.Errorf("delta: %+v", d)
	}
}

func TestMooncakeLineErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"too short for hash_ids", `{"timestamp": 0, "input_length": 10, "hash_ids": [1, 2]}`, "line 2: hash_ids imply at least 513 tokens, input_length is 10"},
		{"too long for hash_ids", `{"input_length": 1025, "hash_ids": [1, 2]}`, "line 2: hash_ids imply at most 1024 tokens (2 blocks of 512), input_length is 1025"},
		{"malformed json", `{"input_length": 5,,}`, "line 2: invalid JSON"},
		{"not an object", `[1, 2]`, "line 2: want a JSON object"},
		{"wrong type", `{"input_length": "many"}`, "line 2: input_length: got a JSON string, want a whole number"},
		{"float length", `{"input_length": 1e3}`, "line 2: input_length: got a JSON number 1e3, want a whole number"},
		{"no input", `{"timestamp": 3}`, "line 2: no input"},
		{"two inputs", `{"input_length": 3, "text_input": "x"}`, "line 2: input_length, text_input are mutually exclusive"},
		{"hash_ids with text", `{"text_input": "x", "hash_ids": [1]}`, "line 2: hash_ids need input_length"},
		{"negative length", `{"input_length": -1}`, "line 2: input_length -1: must not be negative"},
		{"huge length", `{"input_length": 1000000000000}`, "line 2: input_length 1000000000000: at most"},
		{"negative timestamp", `{"input_length": 3, "timestamp": -5}`, "line 2: timestamp -5: must not be negative"},
		{"bad session id", `{"input_length": 3, "session_id": [1]}`, "line 2: session_id: want a string or a number"},
		{"empty payload", `{"payload": {}}`, "line 2: payload: want a non-empty JSON object"},
		{"bad messages", `{"messages": [{"content": "x"}]}`, `line 2: messages[0]: want a "role" string`},
		{"tools without messages", `{"input_length": 3, "tools": [{}]}`, "line 2: tools need messages"},
		{"bad extra", `{"input_length": 3, "extra": [1]}`, "line 2: extra: want a JSON object"},
		{"missing first timestamp", `{"input_length": 3}`, "line 2: no timestamp, but other records have one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, c := fileEnv(t)
			path := writeTemp(t, "bad.jsonl", `{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}`+"\n"+tc.line+"\n")
			_, err := LoadFile(FileOptions{Path: path, Type: TypeMooncake, Tokenizer: tok, Corpus: c})
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q, want it to name %s and contain %q", err, path, tc.want)
			}
		})
	}
}

func TestMooncakeSessionMixing(t *testing.T) {
	tok, c := fileEnv(t)
	trace := `{"session_id": "a", "input_length": 5}` + "\n" + `{"session_id": "a", "messages": [{"role": "user", "content": "x"}]}` + "\n"
	_, err := LoadFile(FileOptions{Path: writeTemp(t, "mix.jsonl", trace), Type: TypeMooncake, Tokenizer: tok, Corpus: c})
	if err == nil || !strings.Contains(err.Error(), "line 2: session \"a\" mixes") {
		t.Fatalf("error %v", err)
	}
}

func TestMooncakeBlockSizeOption(t *testing.T) {
	tok, c := fileEnv(t)
	trace := `{"input_length": 40, "hash_ids": [1, 2, 3]}` + "\n" + `{"input_length": 36, "hash_ids": [1, 2, 4]}` + "\n"
	ds, err := LoadFile(FileOptions{Path: writeTemp(t, "bs.jsonl", trace), Tokenizer: tok, Corpus: c, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	a := tok.Encode(ds.Conversations[0].Turns[0].Prompt)
	b := tok.Encode(ds.Conversations[1].Turns[0].Prompt)
	// Blocks of 16: the first two are shared, the third starts with the separator in both
	// and then differs.
	if len(a) != 40 || len(b) != 36 || !slices.Equal(a[:32], b[:32]) || a[32] != b[32] || slices.Equal(a[32:36], b[32:36]) || ds.BlockSize != 16 {
		t.Fatalf("lengths %d %d, block size %d", len(a), len(b), ds.BlockSize)
	}
}
