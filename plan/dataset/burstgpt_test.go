package dataset

import (
	"errors"
	"strings"
	"testing"
)

func TestBurstGPT(t *testing.T) {
	ds, err := loadFixture(t, "burstgpt_small.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := fileEnv(t)
	if !ds.Timed || len(ds.Conversations) != 3 {
		t.Fatalf("timed %v, %d conversations", ds.Timed, len(ds.Conversations))
	}
	want := []struct {
		ts       int64
		in, osl  int
		sessions string
	}{{5_000_000_000, 472, 18, "line-2"}, {45_000_000_000, 1087, 0, "line-3"}, {118_500_000_000, 417, 50, "line-4"}}
	for i, w := range want {
		c := ds.Conversations[i]
		tr := c.Turns[0]
		if tr.TimestampNs != w.ts || tr.OSL != w.osl || tr.PromptTokens != w.in || c.SessionID != w.sessions {
			t.Errorf("row %d: ts %d OSL %d PromptTokens %d session %q", i, tr.TimestampNs, tr.OSL, tr.PromptTokens, c.SessionID)
		}
		if got := tok.Count(tr.Prompt); got != w.in {
			t.Errorf("row %d: prompt has %d tokens, want %d", i, got, w.in)
		}
	}
	if p0, p2 := ds.Conversations[0].Turns[0].Prompt, ds.Conversations[2].Turns[0].Prompt; p0[:100] == p2[:100] {
		t.Error("two rows start with the same prompt text")
	}
}

func TestBurstGPTErrors(t *testing.T) {
	header := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	tests := []struct {
		content, want string
	}{
		{"Timestamp,Model,Response tokens\n1,a,2\n", `line 1: no "Request tokens" column`},
		{header + "1,ChatGPT,10,5,15,Conversation log\nsoon,ChatGPT,10,5,15,x\n", `line 3: Timestamp "soon": want a number`},
		{header + "1,ChatGPT,ten,5,15,x\n", `line 2: Request tokens "ten": want a whole number`},
		{header + "1,ChatGPT,10.5,5,15,x\n", `line 2: Request tokens "10.5": want a whole number`},
		{header + "1,ChatGPT,-4,5,15,x\n", "line 2: Request tokens -4: must not be negative"},
		{header + "1,ChatGPT\n", "line 2: 2 fields, the header has 6"},
		{header + "1,\"Chat,10,5\n", "line 2:"},
		{header, "no records"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			tok, c := fileEnv(t)
			_, err := LoadFile(FileOptions{Path: writeTemp(t, "b.csv", tc.content), Type: TypeBurstGPT, Tokenizer: tok, Corpus: c})
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a *LineError containing %q", err, tc.want)
			}
		})
	}
}
