package dataset

import (
	"errors"
	"strings"
	"testing"
)

func TestShareGPT(t *testing.T) {
	ds, err := loadFixture(t, "sharegpt_small.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := fileEnv(t)
	// conv-a (2 pairs), conv-b (1 pair, system dropped as AIPerf drops it), gpt-first (the
	// human→gpt pair after the leading gpt message); too-short fails the length filter and
	// one-message has no pair.
	var ids []string
	for _, c := range ds.Conversations {
		ids = append(ids, c.SessionID)
	}
	if got := strings.Join(ids, ","); got != "conv-a,conv-b,gpt-first" {
		t.Fatalf("conversations %s", got)
	}
	a := ds.Conversations[0]
	if len(a.Turns) != 2 || a.SelfContained || ds.Timed {
		t.Fatalf("conv-a: %d turns, self-contained %v, timed %v", len(a.Turns), a.SelfContained, ds.Timed)
	}
	for _, tr := range a.Turns {
		if tr.PromptTokens != tok.Count(tr.Prompt) || tr.OSL != tok.Count(tr.Reply) || tr.Reply == "" {
			t.Errorf("turn %q: PromptTokens %d OSL %d", tr.Prompt, tr.PromptTokens, tr.OSL)
		}
		if tr.TimestampNs != NoTime || tr.DelayNs != NoTime {
			t.Errorf("untimed turn has timing %d %d", tr.TimestampNs, tr.DelayNs)
		}
	}
	if a.Turns[1].Prompt != "Name three museums there that a first-time visitor should see." ||
		a.Turns[1].Reply != "The Louvre, the Musée d'Orsay and the Centre Pompidou are the usual first three." {
		t.Errorf("conv-a turn 2: %+v", a.Turns[1])
	}
	if got := ds.Conversations[2].Turns[0].Prompt; got != "Then tell me a short story about a lighthouse keeper." {
		t.Errorf("gpt-first: %q", got)
	}
}

func TestShareGPTPairs(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		msgs []shareGPTMessage
		want int
	}{
		{"alternating", []shareGPTMessage{{From: s("human"), Value: s("a")}, {From: s("gpt"), Value: s("b")}, {From: s("human"), Value: s("c")}, {From: s("gpt"), Value: s("d")}}, 2},
		{"openai roles", []shareGPTMessage{{Role: s("user"), Content: s("a")}, {Role: s("assistant"), Content: s("b")}}, 1},
		{"two humans", []shareGPTMessage{{From: s("human"), Value: s("a")}, {From: s("human"), Value: s("b")}, {From: s("gpt"), Value: s("c")}}, 1},
		{"trailing human", []shareGPTMessage{{From: s("human"), Value: s("a")}, {From: s("gpt"), Value: s("b")}, {From: s("human"), Value: s("c")}}, 1},
		{"empty reply", []shareGPTMessage{{From: s("human"), Value: s("a")}, {From: s("gpt"), Value: s("")}}, 0},
		{"no roles", []shareGPTMessage{{Value: s("a")}, {Value: s("b")}, {Value: s("c")}}, 1},
		{"one message", []shareGPTMessage{{From: s("human"), Value: s("a")}}, 0},
	}
	for _, tc := range tests {
		if got := len(shareGPTPairs(tc.msgs)); got != tc.want {
			t.Errorf("%s: %d pairs, want %d", tc.name, got, tc.want)
		}
	}
}

func TestShareGPTErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"not an array", `{"conversations": []}`, "line 1: want a JSON array"},
		{"bad entry", "[\n  {\"conversations\": [{\"from\": \"human\", \"value\": \"a long enough prompt\"}]},\n  {\"conversations\": 5}\n]", "line 3: entry 1: conversations: got a JSON number, want a list"},
		{"bad message", "[\n{\"conversations\": [{\"from\": 1}]}]", "line 2: entry 0: conversations[0]: from: got a JSON number, want a string"},
		{"truncated", "[\n{\"conversations\": []},\n", "invalid JSON"},
		{"trailing data", "[]\n[]", "line 2: data after the array"},
		{"nothing usable", `[{"conversations": [{"from": "human", "value": "x"}]}]`, "no conversation has a human→gpt pair"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, c := fileEnv(t)
			_, err := LoadFile(FileOptions{Path: writeTemp(t, "sg.json", tc.content), Type: TypeShareGPT, Tokenizer: tok, Corpus: c})
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a *LineError containing %q", err, tc.want)
			}
		})
	}
}
