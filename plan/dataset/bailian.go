package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// bailianRecord is one line of an Alibaba Bailian (Qwen) usage trace
// (github.com/alibaba-edu/qwen-bailian-usagetraces-anon).
type bailianRecord struct {
	ChatID       *int64       `json:"chat_id"`
	ParentChatID *int64       `json:"parent_chat_id"`
	Timestamp    *json.Number `json:"timestamp"`
	InputLength  *int64       `json:"input_length"`
	OutputLength *int64       `json:"output_length"`
	Type         string       `json:"type"`
	Turn         *int64       `json:"turn"`
	HashIDs      []int64      `json:"hash_ids"`
}

// bailianRow is a validated bailian record.
type bailianRow struct {
	traceRow
	chatID, parent int64
	turn           int64
}

// parseBailianLine parses and validates one bailian_trace record; bs is the hash block size.
// Its hash_ids may cover only a prefix of the input (the rest is then fresh text), but never
// more than the input.
func parseBailianLine(b []byte, bs int) (bailianRow, error) {
	var rec bailianRecord
	if err := decodeObject(b, &rec); err != nil {
		return bailianRow{}, err
	}
	r := bailianRow{traceRow: traceRow{ts: NoTime, delay: NoTime, mode: modeLength}, parent: -1, turn: 1}
	if rec.ChatID == nil {
		return r, errors.New("no chat_id")
	}
	r.chatID = *rec.ChatID
	if rec.ParentChatID != nil {
		r.parent = *rec.ParentChatID
	}
	if rec.Turn != nil {
		r.turn = *rec.Turn
	}
	if rec.Timestamp == nil {
		return r, errors.New("no timestamp")
	}
	var err error
	if r.ts, err = secToNs("timestamp", *rec.Timestamp); err != nil {
		return r, err
	}
	if rec.InputLength == nil {
		return r, errors.New("no input_length")
	}
	if r.inputLen, err = checkLength("input_length", *rec.InputLength); err != nil {
		return r, err
	}
	if rec.OutputLength == nil {
		return r, errors.New("no output_length")
	}
	if r.osl, err = checkLength("output_length", *rec.OutputLength); err != nil {
		return r, err
	}
	if len(rec.HashIDs) > 0 {
		r.hashIDs = rec.HashIDs
		if len(rec.HashIDs) > MaxPromptTokens/bs+1 {
			return r, fmt.Errorf("%d hash_ids: at most %d blocks of %d tokens", len(rec.HashIDs), MaxPromptTokens/bs+1, bs)
		}
		if lo := (len(rec.HashIDs)-1)*bs + 1; r.inputLen < lo {
			return r, fmt.Errorf("hash_ids imply at least %d tokens, input_length is %d", lo, r.inputLen)
		}
		if r.inputLen <= len(rec.HashIDs)*bs {
			r.last = r.inputLen - (len(rec.HashIDs)-1)*bs
		}
	}
	r.selfContained = true
	return r, nil
}

// bailian reads a Bailian trace. Each row is a whole request (its input_length and hash_ids
// include the history the service kept), so sessions, rebuilt by following parent_chat_id to
// the root and ordered by turn, replay each row as given, as AIPerf does.
func (l *loader) bailian() (*Dataset, error) {
	bs, err := l.blockSize(DefaultBailianBlockSize)
	if err != nil {
		return nil, err
	}
	f := l.in.files[0]
	var rows []bailianRow
	byChat := make(map[int64]int)
	err = forEachLine(f.data, func(line int, b []byte) error {
		r, err := parseBailianLine(b, bs)
		if err != nil {
			return l.lineErr(f.path, line, err)
		}
		if prev, dup := byChat[r.chatID]; dup {
			return l.lineErrf(f.path, line, "chat_id %d is already the request of line %d", r.chatID, rows[prev].line)
		}
		r.line = line
		byChat[r.chatID] = len(rows)
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no records"))
	}
	// Each row's root: follow parent links while the parent is in the file; a cycle or a
	// parent outside the file ends the walk, as AIPerf's does.
	root := make([]int, len(rows))
	for i := range root {
		root[i] = -1
	}
	var path []int
	for i := range rows {
		path = path[:0]
		cur := i
		onPath := make(map[int]bool)
		for root[cur] < 0 {
			onPath[cur] = true
			path = append(path, cur)
			p, ok := byChat[rows[cur].parent]
			if rows[cur].parent == -1 || !ok || onPath[p] {
				break
			}
			cur = p
		}
		r := cur
		if root[cur] >= 0 {
			r = root[cur]
		}
		for _, j := range path {
			root[j] = r
		}
	}
	// Sessions in order of their first row; rows of a session by turn, then file order.
	groups := make(map[int][]int)
	var order []int
	for i := range rows {
		if _, ok := groups[root[i]]; !ok {
			order = append(order, root[i])
		}
		groups[root[i]] = append(groups[root[i]], i)
	}
	sorted := make([]traceRow, 0, len(rows))
	for _, g := range order {
		members := groups[g]
		sort.SliceStable(members, func(a, b int) bool { return rows[members[a]].turn < rows[members[b]].turn })
		sid := strconv.FormatInt(rows[g].chatID, 10)
		for _, m := range members {
			tr := rows[m].traceRow
			tr.session = sid
			sorted = append(sorted, tr)
		}
	}
	return l.buildTrace(f.path, sorted, bs, true)
}
