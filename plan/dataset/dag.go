package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
)

// dag_jsonl: AIPerf's branching conversations (docs/benchmark-modes/dag.md, "DAG Benchmarks:
// Branching Conversations"). One conversation per line: session_id, turns, optional
// pre_session_spawns and context_mode. A turn's forks start children that inherit its whole
// conversation, the server's actual reply included; its spawns start children with a fresh
// context, which a later turn of the parent waits for (the next one, or join_at). Every
// conversation that no other references is a root: one session each. docs/datasets.md has
// an example. Unknown members and bad values fail naming the file, line and turn.

var (
	dagConvMembers = []string{"session_id", "turns", "pre_session_spawns", "context_mode"}
	dagTurnMembers = []string{"messages", "model", "max_tokens", "tools", "extra", "forks", "spawns", "delay"}
	// AIPerf's orchestrator conversations (request-less drivers) are refused by name.
	dagOrchestrator = []string{"orchestrator", "rounds", "spawns", "think_time_ms", "think_time_sigma", "think_time_min_ms", "think_time_max_ms"}
)

// maxDAGRequests bounds the requests one root's tree expands to (a SPAWN template referenced
// from many turns is instantiated once per reference).
const maxDAGRequests = 1 << 20

type dagConv struct {
	line  int
	id    string
	turns []dagTurn
	pre   []string
	array bool // context_mode message_array_with_responses: each turn is its own payload
}

type dagTurn struct {
	msgs     []endpoint.Message
	raw      []json.RawMessage // the messages as written, compact
	verbatim bool              // they carry more than role and text
	system   bool
	osl      int
	extra    map[string]any
	forks    []dagFork
	spawns   []dagSpawn
	delayNs  int64
	tokens   int // of its own messages
}

type dagFork struct {
	child      string
	background bool
}

type dagSpawn struct {
	children []string
	joinAt   int // -1: the next turn
}

// parseDAGLine parses one conversation line. It needs no tokenizer (fuzzed).
func parseDAGLine(b []byte) (dagConv, error) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) == nil {
		for _, k := range dagOrchestrator {
			if _, ok := probe[k]; ok {
				return dagConv{}, fmt.Errorf("%s: orchestrator conversations (request-less fan-out drivers) are not supported; write the fan-out as a root conversation's spawns", k)
			}
		}
	}
	m, err := objectMembers(b, dagConvMembers...)
	if err != nil {
		return dagConv{}, err
	}
	c := dagConv{}
	if c.id, err = memberString(m, "session_id", true); err != nil {
		return c, err
	}
	if c.id == "" {
		return c, errors.New("session_id: want a non-empty string")
	}
	if c.pre, err = memberStrings(m, "pre_session_spawns", false); err != nil {
		return c, err
	}
	mode, err := memberString(m, "context_mode", false)
	if err != nil {
		return c, err
	}
	switch mode {
	case "", "deltas_without_responses":
	case "message_array_with_responses":
		c.array = true
	default:
		return c, fmt.Errorf("context_mode %q: want deltas_without_responses or message_array_with_responses", mode)
	}
	list, err := memberList(m, "turns", true)
	if err != nil {
		return c, err
	}
	if len(list) == 0 {
		return c, errors.New("turns: want at least one turn")
	}
	for i, raw := range list {
		t, err := parseDAGTurn(raw)
		if err != nil {
			return c, fmt.Errorf("turns[%d]: %w", i, err)
		}
		for _, s := range t.spawns {
			if s.joinAt >= 0 && (s.joinAt <= i || s.joinAt >= len(list)) {
				return c, fmt.Errorf("turns[%d].spawns: join_at %d: want a later turn of the conversation, in (%d, %d)", i, s.joinAt, i, len(list))
			}
		}
		for _, f := range t.forks {
			if !f.background && i != len(list)-1 {
				return c, fmt.Errorf("turns[%d].forks: %q is a terminal fork (the parent ends with it) but the turn is not the last; use {\"child\": %q, \"background\": true} to go on", i, f.child, f.child)
			}
		}
		c.turns = append(c.turns, t)
	}
	return c, nil
}

func parseDAGTurn(raw json.RawMessage) (dagTurn, error) {
	m, err := objectMembers(raw, dagTurnMembers...)
	if err != nil {
		return dagTurn{}, err
	}
	t := dagTurn{delayNs: NoTime}
	list, err := memberList(m, "messages", true)
	if err != nil {
		return t, err
	}
	if len(list) == 0 {
		return t, errors.New("messages: want at least one message")
	}
	msgs, verbatim, err := parseMessages(m["messages"])
	if err != nil {
		return t, err
	}
	t.msgs, t.verbatim = msgs, verbatim
	for _, r := range list {
		t.raw = append(t.raw, compactJSON(r))
	}
	for _, msg := range msgs {
		if msg.Role == "system" {
			t.system = true
		}
	}
	osl, err := memberCount(m, "max_tokens", 0, MaxPromptTokens, 0, false)
	if err != nil {
		return t, err
	}
	t.osl = int(osl)
	if t.extra, err = parseExtra(m["extra"]); err != nil {
		return t, err
	}
	if present(m, "model") {
		model, err := memberString(m, "model", true)
		if err != nil || model == "" {
			return t, errors.New("model: want a non-empty string")
		}
		t.extra = withExtra(t.extra, "model", compactJSON(m["model"]))
	}
	if present(m, "tools") {
		var tools []json.RawMessage
		if err := json.Unmarshal(m["tools"], &tools); err != nil || len(tools) == 0 {
			return t, errors.New("tools: want a non-empty list")
		}
		t.extra = withExtra(t.extra, "tools", compactJSON(m["tools"]))
	}
	if present(m, "delay") {
		var n json.Number
		if err := json.Unmarshal(m["delay"], &n); err != nil {
			return t, errors.New("delay: want a number of milliseconds")
		}
		if t.delayNs, err = msToNs("delay", n); err != nil {
			return t, err
		}
		if t.delayNs > maxTraceNs {
			return t, fmt.Errorf("delay %s: more than a year", n)
		}
	}
	forks, err := memberList(m, "forks", false)
	if err != nil {
		return t, err
	}
	for j, f := range forks {
		var s string
		if json.Unmarshal(f, &s) == nil {
			if s == "" {
				return t, fmt.Errorf("forks[%d]: want a session id", j)
			}
			t.forks = append(t.forks, dagFork{child: s})
			continue
		}
		fm, err := objectMembers(f, "child", "background")
		if err != nil {
			return t, fmt.Errorf("forks[%d]: want a session id or {\"child\", \"background\"}: %w", j, err)
		}
		child, err := memberString(fm, "child", true)
		if err != nil || child == "" {
			return t, fmt.Errorf("forks[%d].child: want a session id", j)
		}
		fk := dagFork{child: child}
		if present(fm, "background") && json.Unmarshal(fm["background"], &fk.background) != nil {
			return t, fmt.Errorf("forks[%d].background: want true or false", j)
		}
		t.forks = append(t.forks, fk)
	}
	spawns, err := memberList(m, "spawns", false)
	if err != nil {
		return t, err
	}
	for j, sp := range spawns {
		var s string
		if json.Unmarshal(sp, &s) == nil {
			if s == "" {
				return t, fmt.Errorf("spawns[%d]: want a session id", j)
			}
			t.spawns = append(t.spawns, dagSpawn{children: []string{s}, joinAt: -1})
			continue
		}
		sm, err := objectMembers(sp, "children", "join_at")
		if err != nil {
			return t, fmt.Errorf("spawns[%d]: want a session id or {\"children\", \"join_at\"}: %w", j, err)
		}
		children, err := memberStrings(sm, "children", true)
		if err != nil || len(children) == 0 || slices.Contains(children, "") {
			return t, fmt.Errorf("spawns[%d].children: want a non-empty list of session ids", j)
		}
		joinAt, err := memberCount(sm, "join_at", 0, 1<<30, -1, false)
		if err != nil {
			return t, fmt.Errorf("spawns[%d].%w", j, err)
		}
		t.spawns = append(t.spawns, dagSpawn{children: children, joinAt: int(joinAt)})
	}
	return t, nil
}

func (l *loader) dag() (*Dataset, error) {
	f := l.in.files[0]
	var convs []dagConv
	byID := map[string]int{}
	err := forEachLine(f.data, func(line int, b []byte) error {
		c, err := parseDAGLine(b)
		if err != nil {
			return l.lineErr(f.path, line, err)
		}
		if j, dup := byID[c.id]; dup {
			return l.lineErrf(f.path, line, "duplicate session_id %q (line %d)", c.id, convs[j].line)
		}
		c.line = line
		byID[c.id] = len(convs)
		convs = append(convs, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(convs) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no conversations"))
	}
	if err := l.checkDAG(f.path, convs, byID); err != nil {
		return nil, err
	}
	tok, err := l.tok()
	if err != nil {
		return nil, err
	}
	for i := range convs {
		for k := range convs[i].turns {
			t := &convs[i].turns[k]
			t.tokens = messagesTokens(tok, t.msgs) // its own messages: what the input insight counts
		}
	}
	ds := &Dataset{Graph: true, LiveReplies: true}
	for i := range convs {
		if !l.dagRoot(convs, i) {
			continue
		}
		x := &dagExpand{convs: convs, byID: byID, instances: map[string]int{}, names: map[string]bool{}}
		x.conv = Conversation{SessionID: convs[i].id, SelfContained: true}
		x.conv.Agents = []Agent{{Name: convs[i].id, Kind: "root", Parent: -1}}
		x.instances[convs[i].id] = 1
		x.names[convs[i].id] = true
		if _, err := x.expand(i, 0, nil, nil); err != nil {
			return nil, l.lineErr(f.path, convs[i].line, err)
		}
		deriveThink(&x.conv)
		if err := checkGraph(&x.conv); err != nil {
			return nil, l.lineErr(f.path, convs[i].line, err)
		}
		ds.Conversations = append(ds.Conversations, x.conv)
	}
	if len(ds.Conversations) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no root conversation: every session is some turn's fork or spawn"))
	}
	return ds, nil
}

// dagRoot reports whether conversation i is referenced by no other.
func (l *loader) dagRoot(convs []dagConv, i int) bool {
	id := convs[i].id
	for _, c := range convs {
		if slices.Contains(c.pre, id) {
			return false
		}
		for _, t := range c.turns {
			for _, f := range t.forks {
				if f.child == id {
					return false
				}
			}
			for _, s := range t.spawns {
				if slices.Contains(s.children, id) {
					return false
				}
			}
		}
	}
	return true
}

// checkDAG checks what spans conversations: targets are declared, a FORK target has one
// parent and is no pre-session spawn, system messages seed conversations only, no cycles.
func (l *loader) checkDAG(path string, convs []dagConv, byID map[string]int) error {
	forkedBy := map[string]string{}
	pre := map[string]bool{}
	for _, c := range convs {
		for _, p := range c.pre {
			if _, ok := byID[p]; !ok {
				return l.lineErrf(path, c.line, "pre_session_spawns: session %q is not declared", p)
			}
			pre[p] = true
		}
		for k, t := range c.turns {
			for _, f := range t.forks {
				if _, ok := byID[f.child]; !ok {
					return l.lineErrf(path, c.line, "turns[%d].forks: session %q is not declared", k, f.child)
				}
				where := fmt.Sprintf("%q turn %d", c.id, k)
				if prev, dup := forkedBy[f.child]; dup {
					return l.lineErrf(path, c.line, "session %q is forked by both %s and %s; a FORK child has one parent", f.child, prev, where)
				}
				forkedBy[f.child] = where
			}
			for _, s := range t.spawns {
				for _, ch := range s.children {
					if _, ok := byID[ch]; !ok {
						return l.lineErrf(path, c.line, "turns[%d].spawns: session %q is not declared", k, ch)
					}
				}
			}
		}
	}
	for _, c := range convs {
		if pre[c.id] && forkedBy[c.id] != "" {
			return l.lineErrf(path, c.line, "session %q is a pre_session_spawns target and forked by %s; pre-session children start fresh", c.id, forkedBy[c.id])
		}
		if c.array {
			continue
		}
		for k, t := range c.turns {
			if t.system && (k > 0 || forkedBy[c.id] != "") {
				return l.lineErrf(path, c.line, "turns[%d]: a system message only seeds a conversation (a root's or a spawned child's first turn); after the history it inherits, chat templates drop it", k)
			}
		}
	}
	// Cycles: a depth-first walk over the references.
	state := make([]uint8, len(convs)) // 0 new, 1 on the path, 2 done
	var path2 []string
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = 1
		path2 = append(path2, convs[i].id)
		refs := append([]string(nil), convs[i].pre...)
		for _, t := range convs[i].turns {
			for _, f := range t.forks {
				refs = append(refs, f.child)
			}
			for _, s := range t.spawns {
				refs = append(refs, s.children...)
			}
		}
		for _, r := range refs {
			j := byID[r]
			switch state[j] {
			case 1:
				return l.lineErrf(path, convs[j].line, "cycle: %s -> %s", strings.Join(path2, " -> "), r)
			case 0:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		path2 = path2[:len(path2)-1]
		state[i] = 2
		return nil
	}
	for i := range convs {
		if state[i] == 0 {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// dagExpand instantiates one root's tree into a graph conversation.
type dagExpand struct {
	convs     []dagConv
	byID      map[string]int
	conv      Conversation
	instances map[string]int  // template id → instances made
	names     map[string]bool // every agent name given in the conversation
}

// expand adds the turns of conversation ci as agent, its first turn waiting for seed
// (and carrying lineage's conversation as history); it returns the last turn's index.
func (x *dagExpand) expand(ci, agent int, seed []Edge, lineage []int) (int, error) {
	c := &x.convs[ci]
	prev := -1
	var prevSources []int
	joins := map[int][]int{}
	for k := range c.turns {
		t := &c.turns[k]
		if len(x.conv.Turns) >= maxDAGRequests {
			return 0, fmt.Errorf("the tree of root %q expands to more than %d requests", x.conv.SessionID, maxDAGRequests)
		}
		n := &Node{Agent: agent, AgentTurn: k, StartNs: NoTime, EndNs: NoTime, RecordedThinkNs: t.delayNs}
		switch {
		case k == 0:
			n.Parents = slices.Clone(seed)
			if !c.array {
				n.Sources = slices.Clone(lineage)
			}
			if len(seed) == 0 {
				if t.delayNs > 0 {
					return 0, fmt.Errorf("session %q turns[0].delay: a root's first turn waits for nothing, so it has no delay", c.id)
				}
				n.RecordedThinkNs = NoTime
			} else if t.delayNs == NoTime {
				n.RecordedThinkNs = 0
			}
		default:
			n.Parents = []Edge{{Turn: prev, Kind: EdgeTurn}}
			for _, j := range joins[k] {
				n.Parents = append(n.Parents, Edge{Turn: j, Kind: EdgeJoin})
			}
			if !c.array {
				n.Sources = append(slices.Clone(prevSources), prev)
			}
			if t.delayNs == NoTime {
				n.RecordedThinkNs = 0
			}
		}
		turn := Turn{TimestampNs: NoTime, DelayNs: NoTime, OSL: t.osl, Extra: t.extra, Messages: t.msgs, Node: n, PromptTokens: t.tokens}
		if t.verbatim {
			n.Verbatim = t.raw
		}
		x.conv.Turns = append(x.conv.Turns, turn)
		me := len(x.conv.Turns) - 1
		prev, prevSources = me, n.Sources
		if k == 0 {
			for _, p := range c.pre {
				a := x.agent(p, agent, "spawn", true)
				if _, err := x.expand(x.byID[p], a, seed, nil); err != nil {
					return 0, err
				}
			}
		}
		for _, f := range t.forks {
			a := x.agent(f.child, agent, "fork", f.background)
			if _, err := x.expand(x.byID[f.child], a, []Edge{{Turn: me, Kind: EdgeFork}}, append(slices.Clone(n.Sources), me)); err != nil {
				return 0, err
			}
		}
		for _, s := range t.spawns {
			at := s.joinAt
			if at < 0 {
				at = k + 1
			}
			background := at >= len(c.turns)
			for _, ch := range s.children {
				a := x.agent(ch, agent, "spawn", background)
				leaf, err := x.expand(x.byID[ch], a, []Edge{{Turn: me, Kind: EdgeSpawn}}, nil)
				if err != nil {
					return 0, err
				}
				if !background {
					joins[at] = append(joins[at], leaf)
				}
			}
		}
	}
	return prev, nil
}

// agent adds an instance of template id as a child agent of parent. The first instance is
// named id, a later one id#N: N counts the instances, skipping any name that a session of
// the input declares (a session may be named "C#2") or that an agent of the conversation
// already has, so that every agent name of a conversation is unique.
func (x *dagExpand) agent(id string, parent int, kind string, background bool) int {
	x.instances[id]++
	name := id
	for x.instances[id] > 1 || x.names[name] {
		name = fmt.Sprintf("%s#%d", id, x.instances[id])
		if _, declared := x.byID[name]; !declared && !x.names[name] {
			break
		}
		x.instances[id]++
	}
	x.names[name] = true
	x.conv.Agents = append(x.conv.Agents, Agent{Name: name, Kind: kind, Parent: parent,
		Depth: x.conv.Agents[parent].Depth + 1, Background: background})
	return len(x.conv.Agents) - 1
}
