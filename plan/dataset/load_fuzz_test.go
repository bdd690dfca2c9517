package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/plan/media"
)

// addFixtureLines seeds a fuzz corpus with the lines of fixture files.
func addFixtureLines(f *testing.F, names ...string) {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(fileTestdata, name))
		if err != nil {
			f.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if i >= 50 {
				break
			}
			f.Add(line)
		}
	}
}

func FuzzMooncakeLine(f *testing.F) {
	addFixtureLines(f, "mooncake_small.jsonl", "mooncake_conversation_trace.jsonl")
	f.Add([]byte(`{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "tools": [{}], "extra": {"a": 1}}`))
	f.Add([]byte(`{"payload": {"prompt": "x"}, "session_id": 3, "delay": 1.5e3}`))
	f.Add([]byte(`{"message_mode": "delta", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, bs := range []int{16, 512} {
			r, err := parseMooncakeLine(line, bs)
			if err != nil {
				continue
			}
			if r.mode < modeLength || r.mode > modePayload {
				t.Fatalf("accepted a line with no input mode: %q", line)
			}
			if len(r.hashIDs) > 0 && (r.last < 1 || r.last > bs || (len(r.hashIDs)-1)*bs+r.last != r.inputLen) {
				t.Fatalf("block size %d: accepted %d hash ids for %d tokens (last %d)", bs, len(r.hashIDs), r.inputLen, r.last)
			}
			if r.inputLen < 0 || r.inputLen > MaxPromptTokens || r.osl < 0 {
				t.Fatalf("accepted lengths %d/%d", r.inputLen, r.osl)
			}
		}
	})
}

func FuzzBailianLine(f *testing.F) {
	addFixtureLines(f, "bailian_small.jsonl")
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseBailianLine(line, 16)
		if err != nil {
			return
		}
		if len(r.hashIDs) > 0 && r.inputLen < (len(r.hashIDs)-1)*16+1 {
			t.Fatalf("accepted %d hash ids for %d tokens", len(r.hashIDs), r.inputLen)
		}
	})
}

func FuzzShareGPT(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(fileTestdata, "sharegpt_small.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`[{"conversations": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := parseShareGPT(data, DefaultMaxLineBytes)
		if err != nil {
			return
		}
		for _, c := range convs {
			if len(c.pairs) == 0 || c.line < 1 {
				t.Fatalf("conversation without pairs or line: %+v", c)
			}
		}
	})
}

func FuzzCustomJSONL(f *testing.F) {
	addFixtureLines(f, "single_turn.jsonl", "multi_turn.jsonl", "random_pool_single.jsonl", "raw_payload.jsonl")
	f.Add([]byte(`{"text": "x", "image": "a.png", "images": ["b.jpg", "https://x/c.png"], "audio": "d.wav", "videos": "e.webm"}`))
	f.Add([]byte(`{"session_id": "s", "turns": [{"text": "x", "audios": ["a.wav"]}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if r, err := parseTurnRecord(line, allowTiming|allowSession|allowTurn); err == nil {
			if len(r.prompt)+len(r.query)+len(r.passages) == 0 {
				t.Fatalf("accepted a record without text: %q", line)
			}
			if len(r.media) > maxMediaPerTurn {
				t.Fatalf("accepted %d media", len(r.media))
			}
			for _, m := range r.media {
				if m.Kind < media.Image || m.Kind > media.Video || strings.TrimSpace(m.Ref) == "" {
					t.Fatalf("bad media ref %+v from %q", m, line)
				}
			}
		}
		_, _ = parseTurnRecord(line, 0)
		if _, rows, err := parseMultiTurnLine(line); err == nil && len(rows) == 0 {
			t.Fatalf("accepted a conversation without turns: %q", line)
		}
		if body, err := parseRawPayloadLine(line); err == nil && len(body) == 0 {
			t.Fatalf("accepted an empty body: %q", line)
		}
	})
}

func FuzzBurstGPT(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(fileTestdata, "burstgpt_small.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n1e3,1.0,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseBurstGPT(data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.ts < 0 || r.inputLen < 0 || r.inputLen > MaxPromptTokens || r.osl < 0 {
				t.Fatalf("accepted row %+v", r)
			}
		}
	})
}

func FuzzDetectType(f *testing.F) {
	for _, name := range []string{"mooncake_small.jsonl", "sharegpt_small.json", "single_turn.jsonl", "multi_turn.jsonl", "raw_payload.jsonl", "bailian_small.jsonl", "burstgpt_small.csv"} {
		data, err := os.ReadFile(filepath.Join(fileTestdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = detectFile(inputFileData{path: "fuzz", data: data}, DefaultMaxLineBytes)
	})
}

// FuzzBlocks checks the prompt arithmetic of prefix synthesis for arbitrary block sizes,
// hash ids and lengths: the prompt's token ids number exactly the input length and its text
// is exactly the predicted bytes.
func FuzzBlocks(f *testing.F) {
	f.Add(uint16(512), uint16(1030), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23})
	f.Add(uint16(2), uint16(3), []byte{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, size, n uint16, idBytes []byte) {
		s := testSynth(t)
		bs := 2 + int(size)%600
		var ids []int64
		for len(idBytes) >= 8 && len(ids) < 8 {
			ids = append(ids, int64(binary.LittleEndian.Uint64(idBytes)))
			idBytes = idBytes[8:]
		}
		if len(ids) == 0 {
			return
		}
		bl := mustBlocks(t, s, bs, uint64(size)*7+uint64(n))
		text, err := bl.hashPrompt(ids, int(n), false, nil)
		last, rerr := hashRemainder(ids, int(n), bs)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("hashPrompt error %v, hashRemainder error %v", err, rerr)
		}
		if err != nil {
			return
		}
		if got := len(bl.promptIDs(nil, ids, last)); got != int(n) {
			t.Fatalf("size %d ids %v: %d tokens, want %d", bs, ids, got, n)
		}
		if len(text) != bl.promptLen(ids, last) {
			t.Fatalf("text %d bytes, predicted %d", len(text), bl.promptLen(ids, last))
		}
	})
}

// FuzzWekaTrace: any file's bytes; an accepted trace has requests, sane lengths and agent
// ids used once.
func FuzzWekaTrace(f *testing.F) {
	for _, name := range []string{"weka/trace_a.json", "weka/trace_b.json", "weka_global/g1.json"} {
		data, err := os.ReadFile(filepath.Join(fileTestdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := parseWekaTrace("f.json", data)
		if err != nil {
			return
		}
		if tr.blockSize < 2 || countWekaRequests(tr.entries) == 0 {
			t.Fatalf("accepted block size %d with %d requests", tr.blockSize, countWekaRequests(tr.entries))
		}
		var walk func(es []wekaEntry)
		walk = func(es []wekaEntry) {
			for _, e := range es {
				if e.sub != nil {
					walk(e.sub.entries)
					continue
				}
				if e.in < 0 || e.in > MaxPromptTokens || e.out < 0 || e.t < 0 {
					t.Fatalf("accepted %+v", e)
				}
			}
		}
		walk(tr.entries)
	})
}

// FuzzDAGLine: any line; an accepted conversation has turns with messages and joins on
// later turns.
func FuzzDAGLine(f *testing.F) {
	addFixtureLines(f, "dag_branching.jsonl")
	f.Add([]byte(`{"session_id": "r", "pre_session_spawns": ["s"], "turns": [{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "spawns": [{"children": ["w"], "join_at": 1}], "forks": [{"child": "b", "background": true}]}, {"messages": [{"role": "user", "content": "y"}], "delay": 3}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := parseDAGLine(line)
		if err != nil {
			return
		}
		if c.id == "" || len(c.turns) == 0 {
			t.Fatalf("accepted %q", line)
		}
		for i, tt := range c.turns {
			if len(tt.msgs) == 0 || tt.osl < 0 {
				t.Fatalf("turn %d accepted without messages: %q", i, line)
			}
			for _, s := range tt.spawns {
				if s.joinAt >= 0 && (s.joinAt <= i || s.joinAt >= len(c.turns)) {
					t.Fatalf("join_at %d on turn %d of %d accepted", s.joinAt, i, len(c.turns))
				}
			}
		}
	})
}
