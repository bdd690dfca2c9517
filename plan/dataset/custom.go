package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
)

// turnRecord is one single_turn line, one multi_turn turn, or one random_pool entry.
type turnRecord struct {
	Text         *string         `json:"text"`
	Texts        json.RawMessage `json:"texts"`
	Image        json.RawMessage `json:"image"`
	Images       json.RawMessage `json:"images"`
	ImageUUIDs   json.RawMessage `json:"image_uuids"`
	Audio        json.RawMessage `json:"audio"`
	Audios       json.RawMessage `json:"audios"`
	Video        json.RawMessage `json:"video"`
	Videos       json.RawMessage `json:"videos"`
	Timestamp    *json.Number    `json:"timestamp"`
	Delay        *json.Number    `json:"delay"`
	Role         *string         `json:"role"`
	SessionID    json.RawMessage `json:"session_id"`
	OutputLength *int64          `json:"output_length"`
	Extra        json.RawMessage `json:"extra"`
}

// textPart is one named text of a "texts" list.
type textPart struct {
	Name     string   `json:"name"`
	Contents []string `json:"contents"`
}

// turnRow is a validated turnRecord.
type turnRow struct {
	line     int
	session  string
	role     string
	prompt   []string // unnamed (or otherwise named) texts, joined by newlines
	query    []string
	passages []string
	ts       int64
	delay    int64
	osl      int
	extra    map[string]any
	media    []MediaRef // Dir is filled in by loader.turn
}

// Which turnRecord members a format accepts.
const (
	allowTiming  = 1 << iota // timestamp, delay
	allowSession             // session_id
	allowTurn                // role, output_length, extra
)

// parseTurnRecord parses and validates one text record; allow says which optional members
// the format has.
func parseTurnRecord(b []byte, allow int) (turnRow, error) {
	var rec turnRecord
	if err := decodeObject(b, &rec); err != nil {
		return turnRow{}, err
	}
	return rec.row(allow)
}

func (rec *turnRecord) row(allow int) (turnRow, error) {
	r := turnRow{ts: NoTime, delay: NoTime}
	if !isNull(rec.ImageUUIDs) {
		return r, errors.New("image_uuids: not supported (name the images with image or images)")
	}
	var err error
	if r.media, err = mediaRefs(rec); err != nil {
		return r, err
	}
	if rec.Text != nil && !isNull(rec.Texts) {
		return r, errors.New("text and texts are mutually exclusive")
	}
	if rec.Text != nil {
		r.prompt = []string{*rec.Text}
	}
	if !isNull(rec.Texts) {
		var items []json.RawMessage
		if err := json.Unmarshal(rec.Texts, &items); err != nil {
			return r, errors.New("texts: want a list of strings or of {name, contents} objects")
		}
		for i, it := range items {
			var s string
			if json.Unmarshal(it, &s) == nil {
				r.prompt = append(r.prompt, s)
				continue
			}
			var p textPart
			if err := json.Unmarshal(it, &p); err != nil {
				return r, fmt.Errorf("texts[%d]: want a string or a {name, contents} object", i)
			}
			switch p.Name {
			case "query":
				r.query = append(r.query, p.Contents...)
			case "passages", "passage":
				r.passages = append(r.passages, p.Contents...)
			default:
				r.prompt = append(r.prompt, p.Contents...)
			}
		}
	}
	if len(r.prompt) == 0 && len(r.query) == 0 && len(r.passages) == 0 {
		return r, errors.New("no text: want text or texts")
	}
	if allow&allowTiming != 0 {
		if rec.Timestamp != nil && rec.Delay != nil {
			return r, errors.New("timestamp and delay are mutually exclusive")
		}
		if r.ts, err = optNs("timestamp", rec.Timestamp, msToNs); err != nil {
			return r, err
		}
		if r.delay, err = optNs("delay", rec.Delay, msToNs); err != nil {
			return r, err
		}
	} else if rec.Timestamp != nil || rec.Delay != nil {
		return r, errors.New("timestamp and delay are not part of this format")
	}
	if allow&allowSession != 0 {
		if r.session, err = sessionKey(rec.SessionID); err != nil {
			return r, err
		}
	} else if !isNull(rec.SessionID) {
		return r, errors.New("session_id is not part of this format")
	}
	if allow&allowTurn != 0 {
		if rec.Role != nil {
			r.role = *rec.Role
		}
		if rec.OutputLength != nil {
			if *rec.OutputLength <= 0 {
				return r, fmt.Errorf("output_length %d: must be positive", *rec.OutputLength)
			}
			if r.osl, err = checkLength("output_length", *rec.OutputLength); err != nil {
				return r, err
			}
		}
		if r.extra, err = parseExtra(rec.Extra); err != nil {
			return r, err
		}
	} else if rec.Role != nil || rec.OutputLength != nil || !isNull(rec.Extra) {
		return r, errors.New("role, output_length and extra are not part of this format")
	}
	return r, nil
}

// turn converts the row into a Turn, counting its prompt's tokens.
func (l *loader) turn(r turnRow) Turn {
	t := Turn{
		TimestampNs: r.ts,
		DelayNs:     r.delay,
		Prompt:      strings.Join(r.prompt, "\n"),
		OSL:         r.osl,
		Extra:       r.extra,
		Passages:    r.passages,
		Media:       r.media,
	}
	for i := range t.Media {
		t.Media[i].Dir = l.mediaDir()
	}
	if len(r.query) > 0 {
		t.Query = strings.Join(r.query, "\n")
	}
	if tok := l.opts.Tokenizer; tok != nil {
		ids := tok.Encode(t.Prompt) // counted once: the renderer takes the keys from here
		t.PromptTokens, t.PromptKeys = len(ids), AppendPromptKeys(nil, ids)
	}
	return t
}

func (l *loader) singleTurn() (*Dataset, error) {
	if _, err := l.tok(); err != nil {
		return nil, err
	}
	f := l.in.files[0]
	var ss sessionSet
	err := forEachLine(f.data, func(line int, b []byte) error {
		r, err := parseTurnRecord(b, allowTiming|allowSession|allowTurn)
		if err != nil {
			return l.lineErr(f.path, line, err)
		}
		t := l.turn(r)
		if r.role != "" && r.role != "user" {
			t.Messages = []endpoint.Message{{Role: r.role, Content: t.Prompt}}
		}
		ss.add(r.session, line, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ss.convs) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no records"))
	}
	// AIPerf: entries sharing a session_id are sent in order, each one on its own.
	for i := range ss.convs {
		ss.convs[i].SelfContained = true
	}
	timed, err := l.checkTimed(f.path, &ss)
	if err != nil {
		return nil, err
	}
	return &Dataset{Conversations: ss.convs, Timed: timed}, nil
}

// multiTurnRecord is one multi_turn line: a whole conversation.
type multiTurnRecord struct {
	SessionID json.RawMessage `json:"session_id"`
	Turns     []turnRecord    `json:"turns"`
}

// parseMultiTurnLine parses one multi_turn line into its session id and conversation: user
// turns in order, a system turn becoming the next turn's system prompt and an assistant turn
// the previous turn's recorded reply.
func parseMultiTurnLine(b []byte) (string, []turnRow, error) {
	var rec multiTurnRecord
	if err := decodeObject(b, &rec); err != nil {
		return "", nil, err
	}
	id, err := sessionKey(rec.SessionID)
	if err != nil {
		return "", nil, err
	}
	if len(rec.Turns) == 0 {
		return "", nil, errors.New("turns: want at least one turn")
	}
	rows := make([]turnRow, 0, len(rec.Turns))
	for i := range rec.Turns {
		r, err := rec.Turns[i].row(allowTiming | allowTurn)
		if err != nil {
			return "", nil, fmt.Errorf("turns[%d]: %w", i, err)
		}
		rows = append(rows, r)
	}
	return id, rows, nil
}

func (l *loader) multiTurn() (*Dataset, error) {
	if _, err := l.tok(); err != nil {
		return nil, err
	}
	f := l.in.files[0]
	var convs []Conversation
	var lines []int
	seen := make(map[string]int)
	err := forEachLine(f.data, func(line int, b []byte) error {
		id, rows, err := parseMultiTurnLine(b)
		if err != nil {
			return l.lineErr(f.path, line, err)
		}
		if id != "" {
			if prev, dup := seen[id]; dup {
				return l.lineErrf(f.path, line, "session_id %q is already the conversation of line %d", id, prev)
			}
			seen[id] = line
		} else {
			id = fmt.Sprintf("line-%d", line)
		}
		c := Conversation{SessionID: id}
		system := ""
		for i, r := range rows {
			switch r.role {
			case "", "user":
				t := l.turn(r)
				t.System = system
				system = ""
				c.Turns = append(c.Turns, t)
			case "assistant":
				if len(c.Turns) == 0 || c.Turns[len(c.Turns)-1].Reply != "" {
					return l.lineErrf(f.path, line, "turns[%d]: an assistant turn must follow a user turn", i)
				}
				c.Turns[len(c.Turns)-1].Reply = strings.Join(r.prompt, "\n")
			case "system", "developer":
				if len(c.Turns) > 0 {
					return l.lineErrf(f.path, line, "turns[%d]: a system turn must come first", i)
				}
				system = strings.Join(r.prompt, "\n")
			default:
				return l.lineErrf(f.path, line, "turns[%d]: role %q: want user, assistant or system", i, r.role)
			}
		}
		if len(c.Turns) == 0 {
			return l.lineErrf(f.path, line, "turns: no user turn")
		}
		convs = append(convs, c)
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(convs) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no records"))
	}
	uniqueSessionIDs(convs)
	ss := sessionSet{convs: convs}
	for _, ln := range lines {
		ss.lines = append(ss.lines, []int{ln})
	}
	timed, err := l.checkTimed(f.path, &ss)
	if err != nil {
		return nil, err
	}
	return &Dataset{Conversations: convs, Timed: timed}, nil
}

// randomPool draws NumConversations single-turn conversations from the input's pools (one
// per file): each conversation takes one entry of every pool, merged.
func (l *loader) randomPool() (*Dataset, error) {
	if _, err := l.tok(); err != nil {
		return nil, err
	}
	type pool struct {
		name string
		rows []turnRow
	}
	var pools []pool
	for _, f := range l.in.files {
		p := pool{name: filepath.Base(f.path)}
		err := forEachLine(f.data, func(line int, b []byte) error {
			r, err := parseTurnRecord(b, 0)
			if err != nil {
				return l.lineErr(f.path, line, err)
			}
			r.line = line
			p.rows = append(p.rows, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(p.rows) == 0 {
			return nil, l.lineErr(f.path, 0, errors.New("no records"))
		}
		pools = append(pools, p)
	}
	n := l.opts.NumConversations
	if n == 0 {
		n = DefaultPoolConversations
	}
	strategy := l.opts.SamplingStrategy
	if strategy == "" {
		strategy = SamplingRandom
	}
	picks := make([][]int, len(pools))
	for pi, p := range pools {
		picks[pi] = drawIndexes(strategy, len(p.rows), n, l.rng("random_pool/"+p.name, uint64(pi)))
	}
	convs := make([]Conversation, n)
	for i := range convs {
		var merged turnRow
		for pi, p := range pools {
			r := p.rows[picks[pi][i]]
			merged.prompt = append(merged.prompt, r.prompt...)
			merged.query = append(merged.query, r.query...)
			merged.passages = append(merged.passages, r.passages...)
		}
		merged.ts, merged.delay = NoTime, NoTime
		convs[i] = Conversation{SessionID: fmt.Sprintf("pool-%d", i), Turns: []Turn{l.turn(merged)}}
	}
	return &Dataset{Conversations: convs}, nil
}

// sample returns n indexes into a pool of size entries under a sampling strategy.
func drawIndexes(strategy string, size, n int, rng *rand.Rand) []int {
	out := make([]int, n)
	switch strategy {
	case SamplingSequential:
		for i := range out {
			out[i] = i % size
		}
	case SamplingShuffle:
		var perm []int
		for i := range out {
			if i%size == 0 {
				perm = rng.Perm(size)
			}
			out[i] = perm[i%size]
		}
	default:
		for i := range out {
			out[i] = rng.IntN(size)
		}
	}
	return out
}

// parseRawPayloadLine checks that a raw_payload line is a JSON object and returns it compact.
func parseRawPayloadLine(b []byte) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := decodeObject(b, &obj); err != nil {
		return nil, err
	}
	if len(obj) == 0 {
		return nil, errors.New("an empty request body")
	}
	return compactJSON(b), nil
}

// rawPayload reads request bodies to send verbatim: one single-turn conversation per line
// of a file, or one conversation per .jsonl file of a folder (its lines the turns).
func (l *loader) rawPayload() (*Dataset, error) {
	tok := l.opts.Tokenizer
	var convs []Conversation
	for _, f := range l.in.files {
		if l.in.dir && !strings.EqualFold(filepath.Ext(f.path), ".jsonl") {
			continue
		}
		var turns []Turn
		err := forEachLine(f.data, func(line int, b []byte) error {
			body, err := parseRawPayloadLine(b)
			if err != nil {
				return l.lineErr(f.path, line, err)
			}
			t := Turn{TimestampNs: NoTime, DelayNs: NoTime, Raw: body, OSL: payloadOSL(body)}
			if tok != nil {
				t.PromptTokens = payloadTokens(tok, body)
			}
			if l.in.dir {
				turns = append(turns, t)
			} else {
				convs = append(convs, Conversation{SessionID: fmt.Sprintf("line-%d", line), Turns: []Turn{t}, SelfContained: true})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if l.in.dir && len(turns) > 0 {
			name := filepath.Base(f.path)
			convs = append(convs, Conversation{SessionID: strings.TrimSuffix(name, filepath.Ext(name)), Turns: turns, SelfContained: true})
		}
	}
	if len(convs) == 0 {
		return nil, l.lineErr(l.in.path, 0, errors.New("no request bodies (a folder needs .jsonl files)"))
	}
	return &Dataset{Conversations: convs}, nil
}
