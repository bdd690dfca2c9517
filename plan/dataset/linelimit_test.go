package dataset

import (
	"errors"
	"strings"
	"testing"
)

// TestLineLimit: a line longer than the bound is refused naming the file and the line, in
// every line-based format, whether the format is given or detected (a long first line is
// refused before it is parsed), and a line at the bound loads.
func TestLineLimit(t *testing.T) {
	const max = 4096
	long := strings.Repeat("a", max)
	cases := []struct {
		typ, first, bad string
	}{
		{TypeSingleTurn, `{"text":"hello"}`, `{"text":"` + long + `"}`},
		{TypeMultiTurn, `{"session_id":"a","turns":[{"text":"hi"}]}`, `{"session_id":"b","turns":[{"text":"` + long + `"}]}`},
		{TypeRandomPool, `{"text":"hello"}`, `{"text":"` + long + `"}`},
		{TypeMooncake, `{"input_length":10,"output_length":5}`, `{"text_input":"` + long + `"}`},
		{TypeRawPayload, `{"messages":[{"role":"user","content":"hi"}],"model":"m"}`, `{"messages":[{"role":"user","content":"` + long + `"}],"model":"m"}`},
		{TypeBailian, `{"chat_id":1,"parent_chat_id":-1,"timestamp":0,"input_length":10,"output_length":5,"type":"text","turn":1,"hash_ids":[1]}`, `{"chat_id":2,"parent_chat_id":-1,"timestamp":1,"input_length":10,"output_length":5,"type":"text","turn":1,"hash_ids":[` + strings.Repeat("1,", max/2) + `1]}`},
		{TypeDAG, `{"session_id":"a","turns":[{"messages":[{"role":"user","content":"hi"}],"spawns":[]}]}`, `{"session_id":"b","turns":[{"messages":[{"role":"user","content":"` + long + `"}]}]}`},
		{TypeBurstGPT, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,m,10,5,15,Conversation log", "1,m," + strings.Repeat("1", max) + ",5,15,Conversation log"},
	}
	for _, c := range cases {
		for _, detect := range []bool{false, true} {
			name := c.typ
			if detect {
				name += "/detected"
			}
			t.Run(name, func(t *testing.T) {
				tok, corp := fileEnv(t)
				p := writeTemp(t, "in.jsonl", c.first+"\n"+c.bad+"\n")
				badLine := strings.Count(c.first, "\n") + 2
				opts := FileOptions{Path: p, Type: c.typ, Tokenizer: tok, Corpus: corp, MaxLineBytes: max}
				if detect {
					opts.Type = ""
				}
				_, err := LoadFile(opts)
				var le *LineError
				if !errors.As(err, &le) || le.Path != p || le.Line != badLine || !strings.Contains(err.Error(), "line limit") {
					if !detect || err == nil || !strings.Contains(err.Error(), "line limit") {
						t.Fatalf("got %v, want a *LineError at %s line %d over the line limit", err, p, badLine)
					}
				}
				// Alone on its first line, a long line is refused before detection parses it.
				p1 := writeTemp(t, "first.jsonl", c.bad+"\n")
				opts.Path = p1
				if _, err := LoadFile(opts); err == nil || !strings.Contains(err.Error(), p1+" line 1") || !strings.Contains(err.Error(), "line limit") {
					t.Fatalf("long first line: got %v", err)
				}
			})
		}
	}
}

// TestLineLimitDefault: the default bound holds without an option, and a line up to the
// bound loads.
func TestLineLimitDefault(t *testing.T) {
	if line, n := longLine([]byte("ab\ncdef\n"), 3); line != 2 || n != 4 {
		t.Fatalf("longLine = %d, %d; want line 2 of 4 bytes", line, n)
	}
	if line, _ := longLine([]byte("abc\ndef"), 3); line != 0 {
		t.Fatalf("longLine found line %d in lines at the bound", line)
	}
	tok, corp := fileEnv(t)
	text := strings.Repeat(" word", 200)
	p := writeTemp(t, "ok.jsonl", `{"text":"`+text+`"}`+"\n")
	ds, err := LoadFile(FileOptions{Path: p, Tokenizer: tok, Corpus: corp, MaxLineBytes: len(text) + 11})
	if err != nil || ds.TotalTurns() != 1 {
		t.Fatalf("a line at the bound: %v", err)
	}
	if _, err := LoadFile(FileOptions{Path: p, Tokenizer: tok, Corpus: corp, MaxLineBytes: -1}); err == nil {
		t.Fatal("a negative line limit was accepted")
	}
}

// TestShareGPTValueLimit: sharegpt is one JSON array, not read by line, so a message value
// longer than the line limit is refused naming the file and the entry.
func TestShareGPTValueLimit(t *testing.T) {
	tok, corp := fileEnv(t)
	long := strings.Repeat("a", 5000)
	ok := strings.Repeat(" word", 20)
	p := writeTemp(t, "sg.json", `[{"id": "a", "conversations": [{"from": "human", "value": "`+ok+`"}, {"from": "gpt", "value": "`+ok+`"}]},`+
		`{"id": "b", "conversations": [{"from": "human", "value": "`+long+`"}, {"from": "gpt", "value": "ho"}]}]`)
	_, err := LoadFile(FileOptions{Path: p, Tokenizer: tok, Corpus: corp, MaxLineBytes: 4096})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "entry 1: conversations[0]") || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadFile(FileOptions{Path: p, Tokenizer: tok, Corpus: corp}); err != nil {
		t.Fatalf("under the default limit: %v", err)
	}
}
