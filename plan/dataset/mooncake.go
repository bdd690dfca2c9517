package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan/internal/parallel"
	"github.com/llmbench/llmbench/tokenizer"
)

// mooncakeRecord is one line of a mooncake_trace file as written.
type mooncakeRecord struct {
	Timestamp    *json.Number    `json:"timestamp"`
	Delay        *json.Number    `json:"delay"`
	SessionID    json.RawMessage `json:"session_id"`
	InputLength  *int64          `json:"input_length"`
	OutputLength *int64          `json:"output_length"`
	HashIDs      []int64         `json:"hash_ids"`
	TextInput    *string         `json:"text_input"`
	Messages     json.RawMessage `json:"messages"`
	Tools        json.RawMessage `json:"tools"`
	Payload      json.RawMessage `json:"payload"`
	Extra        json.RawMessage `json:"extra"`
	MessageMode  string          `json:"message_mode"`
	ContextMode  string          `json:"context_mode"`
}

// Input modes of a trace row.
const (
	modeLength   = iota + 1 // input_length (and hash_ids): a synthesized prompt
	modeText                // text_input
	modeMessages            // messages, sent as given
	modePayload             // payload, a whole body sent verbatim
)

// traceRow is one validated trace record, before its prompt is built.
type traceRow struct {
	line     int
	session  string
	ts       int64 // ns or NoTime
	delay    int64 // ns or NoTime
	mode     int
	inputLen int
	osl      int
	hashIDs  []int64
	last     int // tokens of the last hash block
	text     string
	messages []endpoint.Message
	system   string // delta messages: the system message
	payload  []byte
	extra    map[string]any
	// selfContained: the row carries its whole context (messages, payload, or a declared
	// message_array_with_responses context mode); "" context mode means undeclared.
	selfContained bool
	contextMode   string
}

// parseMooncakeLine parses and validates one mooncake_trace record; bs is the hash block
// size. It needs no tokenizer, so the fuzz target covers everything a line can contain.
func parseMooncakeLine(b []byte, bs int) (traceRow, error) {
	var rec mooncakeRecord
	if err := decodeObject(b, &rec); err != nil {
		return traceRow{}, err
	}
	r := traceRow{ts: NoTime, delay: NoTime}
	var err error
	if r.session, err = sessionKey(rec.SessionID); err != nil {
		return r, err
	}
	if r.ts, err = optNs("timestamp", rec.Timestamp, msToNs); err != nil {
		return r, err
	}
	if r.delay, err = optNs("delay", rec.Delay, msToNs); err != nil {
		return r, err
	}
	if rec.OutputLength != nil {
		if r.osl, err = checkLength("output_length", *rec.OutputLength); err != nil {
			return r, err
		}
	}
	var modes []string
	if rec.InputLength != nil {
		modes, r.mode = append(modes, "input_length"), modeLength
	}
	if rec.TextInput != nil {
		modes, r.mode = append(modes, "text_input"), modeText
	}
	if !isNull(rec.Messages) {
		modes, r.mode = append(modes, "messages"), modeMessages
	}
	if !isNull(rec.Payload) {
		modes, r.mode = append(modes, "payload"), modePayload
	}
	switch len(modes) {
	case 0:
		return r, errors.New("no input: want one of input_length, text_input, messages or payload")
	case 1:
	default:
		return r, fmt.Errorf("%s are mutually exclusive", strings.Join(modes, ", "))
	}
	if rec.HashIDs != nil && r.mode != modeLength {
		return r, fmt.Errorf("hash_ids need input_length, not %s", modes[0])
	}
	if !isNull(rec.Tools) && r.mode != modeMessages {
		return r, errors.New("tools need messages")
	}
	switch rec.MessageMode {
	case "", "history":
	case "delta":
		if r.mode != modeMessages {
			return r, errors.New("message_mode delta needs messages")
		}
	default:
		return r, fmt.Errorf("message_mode %q: want history or delta", rec.MessageMode)
	}
	switch rec.ContextMode {
	case "", "message_array_with_responses", "deltas_without_responses", "deltas_with_responses":
		r.contextMode = rec.ContextMode
	default:
		return r, fmt.Errorf("context_mode %q: want message_array_with_responses, deltas_without_responses or deltas_with_responses", rec.ContextMode)
	}
	if r.extra, err = parseExtra(rec.Extra); err != nil {
		return r, err
	}
	switch r.mode {
	case modeLength:
		if r.inputLen, err = checkLength("input_length", *rec.InputLength); err != nil {
			return r, err
		}
		if len(rec.HashIDs) > 0 {
			r.hashIDs = rec.HashIDs
			if r.last, err = hashRemainder(rec.HashIDs, r.inputLen, bs); err != nil {
				return r, err
			}
		}
		r.selfContained = r.contextMode == "message_array_with_responses"
	case modeText:
		r.text = *rec.TextInput
		r.selfContained = r.contextMode == "message_array_with_responses"
	case modeMessages:
		if rec.MessageMode == "delta" {
			if r.text, r.system, err = deltaMessages(rec.Messages); err != nil {
				return r, err
			}
			r.mode = modeText
			if r.contextMode == "message_array_with_responses" {
				return r, errors.New("message_mode delta contradicts context_mode message_array_with_responses")
			}
			break
		}
		var verbatim bool
		if r.messages, verbatim, err = parseMessages(rec.Messages); err != nil {
			return r, err
		}
		if verbatim {
			r.extra = withExtra(r.extra, "messages", compactJSON(rec.Messages))
		}
		if !isNull(rec.Tools) {
			var tools []json.RawMessage
			if err := json.Unmarshal(rec.Tools, &tools); err != nil || len(tools) == 0 {
				return r, errors.New("tools: want a non-empty list")
			}
			r.extra = withExtra(r.extra, "tools", compactJSON(rec.Tools))
		}
		r.selfContained = true
	case modePayload:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(rec.Payload, &obj); err != nil || len(obj) == 0 {
			return r, errors.New("payload: want a non-empty JSON object")
		}
		r.payload = compactJSON(rec.Payload)
		r.selfContained = true
	}
	if r.selfContained && r.contextMode != "" && r.contextMode != "message_array_with_responses" {
		return r, fmt.Errorf("context_mode %s: %s rows carry their whole context", r.contextMode, modes[0])
	}
	return r, nil
}

// checkLength validates a token count from a file.
func checkLength(field string, n int64) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("%s %d: must not be negative", field, n)
	}
	if n > MaxPromptTokens {
		return 0, fmt.Errorf("%s %d: at most %d", field, n, MaxPromptTokens)
	}
	return int(n), nil
}

// hashRemainder checks that n tokens fill len(ids) blocks of bs, the last one partly, and
// returns the last block's token count.
func hashRemainder(ids []int64, n, bs int) (int, error) {
	if len(ids) > MaxPromptTokens/bs+1 {
		return 0, fmt.Errorf("%d hash_ids: at most %d blocks of %d tokens", len(ids), MaxPromptTokens/bs+1, bs)
	}
	lo := (len(ids)-1)*bs + 1
	hi := len(ids) * bs
	if n < lo {
		return 0, fmt.Errorf("hash_ids imply at least %d tokens, input_length is %d", lo, n)
	}
	if n > hi {
		return 0, fmt.Errorf("hash_ids imply at most %d tokens (%d blocks of %d), input_length is %d", hi, len(ids), bs, n)
	}
	return n - lo + 1, nil
}

// parseExtra validates a per-turn extra object and returns its members as compact raw JSON.
func parseExtra(raw json.RawMessage) (map[string]any, error) {
	if isNull(raw) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("extra: want a JSON object")
	}
	if len(obj) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = json.RawMessage(compactJSON(v))
	}
	return out, nil
}

func withExtra(m map[string]any, key string, raw []byte) map[string]any {
	if m == nil {
		m = make(map[string]any)
	}
	if _, ok := m[key]; !ok { // the row's own extra wins, as it is merged last
		m[key] = json.RawMessage(raw)
	}
	return m
}

// compactJSON returns raw (valid JSON) without insignificant space, so bodies are stable.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append([]byte(nil), bytes.TrimSpace(raw)...)
	}
	return b.Bytes()
}

// chatMessage is an OpenAI chat message as a trace writes it.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parseMessages converts an OpenAI message list into role/text messages. verbatim is true
// when that loses something (content parts other than text, tool calls, names): the list is
// then also sent as given.
func parseMessages(raw json.RawMessage) (msgs []endpoint.Message, verbatim bool, err error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, errors.New("messages: want a list of objects")
	}
	if len(list) == 0 {
		return nil, false, errors.New("messages: want at least one message")
	}
	msgs = make([]endpoint.Message, 0, len(list))
	for i, m := range list {
		var role string
		if err := json.Unmarshal(m["role"], &role); err != nil || role == "" {
			return nil, false, fmt.Errorf("messages[%d]: want a \"role\" string", i)
		}
		text, plain, err := messageContent(m["content"])
		if err != nil {
			return nil, false, fmt.Errorf("messages[%d].%w", i, err)
		}
		for k := range m {
			if k != "role" && k != "content" {
				plain = false
			}
		}
		verbatim = verbatim || !plain
		msgs = append(msgs, endpoint.Message{Role: role, Content: text})
	}
	return msgs, verbatim, nil
}

// messageContent returns a message content's text: a string, or the text parts of a parts
// list joined by newlines. plain is false when the content is not a string.
func messageContent(raw json.RawMessage) (text string, plain bool, err error) {
	if isNull(raw) {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, true, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", false, errors.New("content: want a string or a list of parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), false, nil
}

// deltaMessages turns a delta-mode message list (only the turn's new messages) into the
// turn's user text and system prompt.
func deltaMessages(raw json.RawMessage) (user, system string, err error) {
	var list []chatMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return "", "", errors.New("messages: want a non-empty list of objects")
	}
	var users []string
	for i, m := range list {
		text, _, err := messageContent(m.Content)
		if err != nil {
			return "", "", fmt.Errorf("messages[%d].%w", i, err)
		}
		switch m.Role {
		case "user":
			users = append(users, text)
		case "system", "developer":
			system = text
		default:
			return "", "", fmt.Errorf("messages[%d]: role %q in message_mode delta: only user and system messages (replies come from the live conversation)", i, m.Role)
		}
	}
	if len(users) == 0 {
		return "", "", errors.New("messages: message_mode delta needs a user message")
	}
	return strings.Join(users, "\n"), system, nil
}

// messagesTokens counts the tokens of the messages' contents.
func messagesTokens(tok *tokenizer.Tokenizer, msgs []endpoint.Message) int {
	n := 0
	for _, m := range msgs {
		n += tok.Count(m.Content)
	}
	return n
}

// payloadTokens counts the prompt tokens of a request body: its messages' string contents
// and its prompt, when it has them.
func payloadTokens(tok *tokenizer.Tokenizer, body []byte) int {
	var p struct {
		Prompt   json.RawMessage `json:"prompt"`
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &p) != nil {
		return 0
	}
	n := 0
	var s string
	if json.Unmarshal(p.Prompt, &s) == nil {
		n += tok.Count(s)
	}
	if msgs, _, err := parseMessages(p.Messages); err == nil {
		n += messagesTokens(tok, msgs)
	}
	return n
}

// payloadOSL returns the output limit a request body asks for, or 0.
func payloadOSL(body []byte) int {
	var p struct {
		MaxTokens           *int64 `json:"max_tokens"`
		MaxCompletionTokens *int64 `json:"max_completion_tokens"`
		MaxNewTokens        *int64 `json:"max_new_tokens"`
		MaxOutputTokens     *int64 `json:"max_output_tokens"`
	}
	if json.Unmarshal(body, &p) != nil {
		return 0
	}
	for _, v := range []*int64{p.MaxCompletionTokens, p.MaxTokens, p.MaxNewTokens, p.MaxOutputTokens} {
		if v != nil && *v > 0 && *v <= MaxPromptTokens {
			return int(*v)
		}
	}
	return 0
}

func (l *loader) mooncake() (*Dataset, error) {
	bs, err := l.blockSize(DefaultBlockSize)
	if err != nil {
		return nil, err
	}
	f := l.in.files[0]
	var rows []traceRow
	err = forEachLine(f.data, func(line int, b []byte) error {
		r, err := parseMooncakeLine(b, bs)
		if err != nil {
			return l.lineErr(f.path, line, err)
		}
		r.line = line
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no records"))
	}
	return l.buildTrace(f.path, rows, bs, false)
}

// synthesisRoots returns the prefix-tree copy of each row for --synthesis-prefix-root-multiplier:
// one draw per session (keyed by its first row's line; a row without session_id is its own).
func (l *loader) synthesisRoots(rows []traceRow) func(i int) int {
	k := l.opts.Synthesis.PrefixRootMultiplier
	if k <= 1 {
		return func(int) int { return 0 }
	}
	bySession := make(map[string]int)
	out := make([]int, len(rows))
	for i, r := range rows {
		if c, ok := bySession[r.session]; ok && r.session != "" {
			out[i] = c
			continue
		}
		out[i] = l.rng("synthesis.root", uint64(r.line)).IntN(k)
		bySession[r.session] = out[i]
	}
	return func(i int) int { return out[i] }
}

// buildTrace turns validated trace rows into a Dataset: prompts built (synthesized for
// length rows, prefix-only layouts allowed when tail is true), turns grouped by session.
func (l *loader) buildTrace(path string, rows []traceRow, bs int, tail bool) (*Dataset, error) {
	tok, err := l.tok()
	if err != nil {
		return nil, err
	}
	if err := l.opts.Synthesis.apply(rows, bs, tail, l.synthesisRoots(rows)); err != nil {
		return nil, l.lineErr(path, 0, err)
	}
	var bl *blocks
	for _, r := range rows {
		if r.mode == modeLength {
			syn, err := l.synth()
			if err != nil {
				return nil, err
			}
			if bl, err = syn.blocks(bs, l.opts.Seed); err != nil {
				return nil, err
			}
			break
		}
	}
	// Build prompts and count tokens on every CPU: for synthesized rows the work is copying
	// (and faulting in) the prompts' bytes. Each result depends only on its row, so the
	// dataset does not depend on scheduling.
	prompts := make([]string, len(rows))
	counts := make([]int, len(rows))
	keys := make([][]uint64, len(rows))
	if err := parallel.Indexed(len(rows), 0, func(i int) error {
		r := &rows[i]
		switch r.mode {
		case modeLength:
			rng := l.rng(l.typ, uint64(r.line))
			if len(r.hashIDs) > 0 {
				var err error
				if prompts[i], err = bl.hashPrompt(r.hashIDs, r.inputLen, tail, rng); err != nil {
					return l.lineErr(path, r.line, err)
				}
				// The same prompt's tokens, built as its text was (a second rng of the row).
				keys[i] = AppendPromptKeys(nil, bl.hashPromptIDs(nil, r.hashIDs, r.inputLen, tail, l.rng(l.typ, uint64(r.line))))
			} else {
				prompts[i] = l.syn.fresh(rng, r.inputLen)
				keys[i] = AppendPromptKeys(nil, l.syn.appendWindowIDs(nil, l.syn.freshStart(l.rng(l.typ, uint64(r.line))), r.inputLen))
			}
			counts[i] = r.inputLen
		case modeText:
			ids := tok.Encode(r.text)
			counts[i], keys[i] = len(ids), AppendPromptKeys(nil, ids)
		case modeMessages:
			counts[i] = messagesTokens(tok, r.messages)
		case modePayload:
			counts[i] = payloadTokens(tok, r.payload)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var ss sessionSet
	for i := range rows {
		r := &rows[i]
		if lim := l.opts.Synthesis.MaxISL; lim > 0 && counts[i] > lim {
			continue // --synthesis-max-isl drops it
		}
		t := Turn{TimestampNs: r.ts, DelayNs: r.delay, OSL: r.osl, Extra: r.extra, System: r.system, PromptTokens: counts[i], PromptKeys: keys[i]}
		switch r.mode {
		case modeLength:
			t.Prompt, t.HashIDs = prompts[i], r.hashIDs
		case modeText:
			t.Prompt = r.text
		case modeMessages:
			t.Messages = r.messages
		case modePayload:
			t.Raw = r.payload
			if t.OSL == 0 {
				t.OSL = payloadOSL(r.payload)
			}
		}
		ss.add(r.session, r.line, t)
	}
	if len(ss.convs) == 0 {
		return nil, l.lineErrf(path, 0, "no row is at most --synthesis-max-isl %d tokens long", l.opts.Synthesis.MaxISL)
	}
	// A session replays either accumulating history or each row as given, never both.
	rowAt := make(map[int]*traceRow, len(rows))
	for i := range rows {
		rowAt[rows[i].line] = &rows[i]
	}
	for ci := range ss.convs {
		lines := ss.lines[ci]
		first := rowAt[lines[0]]
		for _, ln := range lines[1:] {
			r := rowAt[ln]
			if r.selfContained != first.selfContained {
				return nil, l.lineErrf(path, ln, "session %q mixes rows that carry their whole context (messages, payload) with rows that do not (line %d)", ss.convs[ci].SessionID, first.line)
			}
			if (r.mode == modePayload) != (first.mode == modePayload) && r.selfContained {
				return nil, l.lineErrf(path, ln, "session %q mixes messages and payload rows (line %d)", ss.convs[ci].SessionID, first.line)
			}
		}
		ss.convs[ci].SelfContained = first.selfContained
	}
	timed, err := l.checkTimed(path, &ss)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Conversations: ss.convs, Timed: timed}
	for _, r := range rows {
		if len(r.hashIDs) > 0 {
			ds.BlockSize = bs
			break
		}
	}
	return ds, nil
}
