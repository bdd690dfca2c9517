package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/plan/internal/parallel"
)

// ShareGPT length filter, the one AIPerf (after vLLM's benchmark) applies: a conversation is
// dropped when any of its turns has a prompt or reply under shareGPTMinTokens, a prompt over
// shareGPTMaxPrompt, or prompt plus reply over shareGPTMaxTotal tokens.
const (
	shareGPTMinTokens = 4
	shareGPTMaxPrompt = 1024
	shareGPTMaxTotal  = 2048
)

// shareGPTEntry is one element of a ShareGPT JSON array. Messages are {from, value}
// (ShareGPT) or {role, content} (the OpenAI spelling some exports use).
type shareGPTEntry struct {
	ID            json.RawMessage   `json:"id"`
	Conversations []json.RawMessage `json:"conversations"`
}

type shareGPTMessage struct {
	From    *string `json:"from"`
	Role    *string `json:"role"`
	Value   *string `json:"value"`
	Content *string `json:"content"`
}

// shareGPTConv is one entry's human→gpt pairs.
type shareGPTConv struct {
	line  int
	id    string
	pairs [][2]string // prompt, reply
}

// looksShareGPT reports whether a JSON array's first element has "conversations".
func looksShareGPT(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	if !dec.More() {
		return false
	}
	var first map[string]json.RawMessage
	if dec.Decode(&first) != nil {
		return false
	}
	_, ok := first["conversations"]
	return ok
}

// posError is a parse error at a line of the input; LoadFile turns it into a *LineError.
type posError struct {
	line int
	err  error
}

func (e *posError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *posError) Unwrap() error { return e.err }

// parseShareGPT reads a ShareGPT JSON array into conversations of human→gpt pairs. Entries
// with fewer than two messages or no pair are skipped, as AIPerf skips them.
// maxValue bounds one message's JSON value, as the line limit bounds a line of the
// line-based formats.
func parseShareGPT(data []byte, maxValue int) ([]shareGPTConv, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	at := func() int {
		off := dec.InputOffset()
		for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
			off++
		}
		return lineOf(data, off)
	}
	t, err := dec.Token()
	if err != nil || t != json.Delim('[') {
		return nil, &posError{at(), errors.New("want a JSON array of conversations")}
	}
	var convs []shareGPTConv
	for n := 0; dec.More(); n++ {
		line := at()
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return nil, &posError{line, fmt.Errorf("entry %d: %w", n, jsonError(err))}
		}
		c := shareGPTConv{line: line}
		var s string
		if json.Unmarshal(e.ID, &s) == nil {
			c.id = s
		} else if !isNull(e.ID) {
			c.id = string(compactJSON(e.ID))
		}
		msgs := make([]shareGPTMessage, 0, len(e.Conversations))
		for i, raw := range e.Conversations {
			if len(raw) > maxValue {
				return nil, &posError{line, fmt.Errorf("entry %d: conversations[%d]: %w", n, i, errLongLine(len(raw), maxValue))}
			}
			var m shareGPTMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, &posError{line, fmt.Errorf("entry %d: conversations[%d]: %w", n, i, jsonError(err))}
			}
			msgs = append(msgs, m)
		}
		if c.pairs = shareGPTPairs(msgs); len(c.pairs) > 0 {
			convs = append(convs, c)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, &posError{at(), jsonError(err)}
	}
	if dec.More() {
		return nil, &posError{at(), errors.New("data after the array")}
	}
	return convs, nil
}

// shareGPTPairs pairs every human message with the gpt message right after it. A list
// without role names is one pair: its first two values.
func shareGPTPairs(msgs []shareGPTMessage) [][2]string {
	if len(msgs) < 2 {
		return nil
	}
	type msg struct {
		human bool
		text  string
	}
	var roled []msg
	for _, m := range msgs {
		role := m.From
		if role == nil {
			role = m.Role
		}
		text := m.Value
		if text == nil {
			text = m.Content
		}
		if role == nil || text == nil {
			continue
		}
		switch *role {
		case "human", "user":
			roled = append(roled, msg{true, *text})
		case "gpt", "assistant", "chatgpt", "bard", "bing":
			roled = append(roled, msg{false, *text})
		}
	}
	if len(roled) == 0 {
		v0, v1 := msgs[0].Value, msgs[1].Value
		if v0 == nil || v1 == nil || *v0 == "" || *v1 == "" {
			return nil
		}
		return [][2]string{{*v0, *v1}}
	}
	var pairs [][2]string
	for i := 0; i+1 < len(roled); {
		if roled[i].human && !roled[i+1].human {
			if roled[i].text != "" && roled[i+1].text != "" {
				pairs = append(pairs, [2]string{roled[i].text, roled[i+1].text})
			}
			i += 2
		} else {
			i++
		}
	}
	return pairs
}

func (l *loader) shareGPT() (*Dataset, error) {
	tok, err := l.tok()
	if err != nil {
		return nil, err
	}
	f := l.in.files[0]
	convs, err := parseShareGPT(f.data, l.opts.maxLine())
	if err != nil {
		var le *posError
		if errors.As(err, &le) {
			return nil, l.lineErr(f.path, le.line, le.err)
		}
		return nil, l.lineErr(f.path, 0, err)
	}
	// Count every prompt and reply once, in parallel: the public ShareGPT file holds about
	// a hundred million tokens.
	counts := make([][][2]int, len(convs))
	_ = parallel.Indexed(len(convs), 0, func(i int) error {
		c := make([][2]int, len(convs[i].pairs))
		for j, p := range convs[i].pairs {
			c[j] = [2]int{tok.Count(p[0]), tok.Count(p[1])}
		}
		counts[i] = c
		return nil
	})
	var out []Conversation
	for i, c := range convs {
		ok := true
		for _, n := range counts[i] {
			if n[0] < shareGPTMinTokens || n[1] < shareGPTMinTokens || n[0] > shareGPTMaxPrompt || n[0]+n[1] > shareGPTMaxTotal {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		conv := Conversation{SessionID: c.id}
		if conv.SessionID == "" {
			conv.SessionID = fmt.Sprintf("line-%d", c.line)
		}
		for j, p := range c.pairs {
			conv.Turns = append(conv.Turns, Turn{
				TimestampNs:  NoTime,
				DelayNs:      NoTime,
				Prompt:       p[0],
				PromptTokens: counts[i][j][0],
				OSL:          counts[i][j][1],
				Reply:        p[1],
			})
		}
		out = append(out, conv)
	}
	if len(out) == 0 {
		return nil, l.lineErr(f.path, 0, fmt.Errorf("no conversation has a human→gpt pair within the length filter (prompt and reply at least %d tokens, prompt at most %d, both at most %d)", shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotal))
	}
	uniqueSessionIDs(out)
	return &Dataset{Conversations: out}, nil
}

// uniqueSessionIDs makes repeated session ids unique by suffixing them, keeping order.
func uniqueSessionIDs(convs []Conversation) {
	seen := make(map[string]bool, len(convs))
	for i := range convs {
		id := convs[i].SessionID
		for seen[id] {
			id += "+"
		}
		seen[id] = true
		convs[i].SessionID = id
	}
}
