package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// weka_trace: agentic coding sessions (the Weka KV-Cache-Tester corpus, SemiAnalysis'
// AgentX traces), one JSON object per file. AIPerf's adapter
// (src/aiperf/dataset/graph/adapters/weka/trace_models.py) is the reference for the schema;
// docs/datasets.md documents it with an example. Every member is checked: an unknown one, or
// a bad value, fails naming the file and the entry (requests[3].requests[0]).

// TypeWeka and TypeDAG are the graph input types (--custom-dataset-type).
const (
	TypeWeka = "weka_trace"
	TypeDAG  = "dag_jsonl"
)

// wekaAsync is the subagent status whose parent goes on without waiting.
const wekaAsync = "async_launched"

var (
	wekaTraceMembers    = []string{"id", "models", "block_size", "hash_id_scope", "tool_tokens", "system_tokens", "requests", "totals"}
	wekaRequestMembers  = []string{"t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types", "stop", "api_time", "think_time", "ttft"}
	wekaSubagentMembers = []string{"t", "type", "agent_id", "subagent_type", "duration_ms", "total_tokens", "tool_use_count", "status", "requests", "models", "tool_tokens", "system_tokens"}
)

// wekaTrace is one parsed trace file.
type wekaTrace struct {
	path      string
	id        string
	blockSize int
	global    bool
	tool      int
	system    int
	entries   []wekaEntry
}

// wekaEntry is a request (sub == nil) or a subagent marker of a requests list.
type wekaEntry struct {
	where string // "requests[3].requests[0]"
	t     int64  // ns, as written
	// a request
	model   string
	in, out int
	hashIDs []int64
	apiNs   int64 // NoTime when absent
	thinkNs int64 // NoTime when absent
	// a subagent
	sub *wekaSub
}

type wekaSub struct {
	agentID, typ, status string
	tool, system         int
	entries              []wekaEntry
}

// parseWekaTrace parses and validates one trace file's bytes. It needs no tokenizer, so the
// fuzz target covers everything a file can hold.
func parseWekaTrace(path string, data []byte) (*wekaTrace, error) {
	m, err := objectMembers(data, wekaTraceMembers...)
	if err != nil {
		return nil, err
	}
	tr := &wekaTrace{path: path}
	if tr.id, err = memberString(m, "id", true); err != nil {
		return nil, err
	}
	if tr.id == "" {
		return nil, errors.New("id: want a non-empty string")
	}
	if _, err := memberStrings(m, "models", true); err != nil {
		return nil, err
	}
	bs, err := memberCount(m, "block_size", 1, MaxPromptTokens, 0, true)
	if err != nil {
		return nil, err
	}
	if bs < 2 {
		return nil, fmt.Errorf("block_size %d: prefix synthesis needs blocks of at least 2 tokens (a separator and content)", bs)
	}
	tr.blockSize = int(bs)
	scope, err := memberString(m, "hash_id_scope", true)
	if err != nil {
		return nil, err
	}
	switch scope {
	case "local":
	case "global":
		tr.global = true
	default:
		return nil, fmt.Errorf("hash_id_scope %q: want local (each trace its own hash ids) or global (one namespace across the input)", scope)
	}
	if tr.tool, tr.system, err = wekaPrefix(m); err != nil {
		return nil, err
	}
	if present(m, "totals") {
		var totals map[string]json.RawMessage // opaque, but an object
		if json.Unmarshal(m["totals"], &totals) != nil {
			return nil, errors.New("totals: want a JSON object")
		}
	}
	list, err := memberList(m, "requests", true)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{tr.id: true}
	if tr.entries, err = parseWekaEntries(list, "requests", seen); err != nil {
		return nil, err
	}
	if countWekaRequests(tr.entries) == 0 {
		return nil, errors.New("requests: no request (only subagent markers without requests)")
	}
	return tr, nil
}

func wekaPrefix(m map[string]json.RawMessage) (tool, system int, err error) {
	t, err := memberCount(m, "tool_tokens", 0, MaxPromptTokens, 0, false)
	if err != nil {
		return 0, 0, err
	}
	s, err := memberCount(m, "system_tokens", 0, MaxPromptTokens, 0, false)
	if err != nil {
		return 0, 0, err
	}
	return int(t), int(s), nil
}

func countWekaRequests(es []wekaEntry) int {
	n := 0
	for _, e := range es {
		if e.sub != nil {
			n += countWekaRequests(e.sub.entries)
		} else {
			n++
		}
	}
	return n
}

// wekaEntryError is a bad entry named by its path in the trace ("requests[3].requests[0]").
type wekaEntryError struct {
	where string
	err   error
}

func (e *wekaEntryError) Error() string { return e.where + ": " + e.err.Error() }
func (e *wekaEntryError) Unwrap() error { return e.err }

// parseWekaEntries parses a requests list; where names it, seen holds the agent ids so far.
func parseWekaEntries(list []json.RawMessage, where string, seen map[string]bool) ([]wekaEntry, error) {
	out := make([]wekaEntry, 0, len(list))
	for i, raw := range list {
		w := fmt.Sprintf("%s[%d]", where, i)
		e, err := parseWekaEntry(raw, w, seen)
		if err != nil {
			var named *wekaEntryError
			if errors.As(err, &named) {
				return nil, err // an entry of a subagent's list, named by its whole path
			}
			return nil, &wekaEntryError{where: w, err: err}
		}
		out = append(out, e)
	}
	return out, nil
}

func parseWekaEntry(raw json.RawMessage, where string, seen map[string]bool) (wekaEntry, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		if _, err := objectMembers(raw); err != nil {
			return wekaEntry{}, err
		}
		return wekaEntry{}, errors.New("type: want a string")
	}
	if head.Type == nil {
		return wekaEntry{}, errors.New(`type: required ("n", "s" or "subagent")`)
	}
	e := wekaEntry{where: where, apiNs: NoTime, thinkNs: NoTime}
	switch *head.Type {
	case "n", "s":
		allowed := wekaRequestMembers
		if *head.Type == "n" {
			allowed = wekaRequestMembers[:len(wekaRequestMembers)-1] // ttft is a streaming call's
		}
		m, err := objectMembers(raw, allowed...)
		if err != nil {
			return e, err
		}
		if e.t, err = memberSeconds(m, "t", true); err != nil {
			return e, err
		}
		if e.model, err = memberString(m, "model", true); err != nil {
			return e, err
		}
		in, err := memberCount(m, "in", 0, MaxPromptTokens, 0, true)
		if err != nil {
			return e, err
		}
		out, err := memberCount(m, "out", 0, MaxPromptTokens, 0, true)
		if err != nil {
			return e, err
		}
		e.in, e.out = int(in), int(out)
		if present(m, "hash_ids") {
			if err := json.Unmarshal(m["hash_ids"], &e.hashIDs); err != nil {
				return e, errors.New("hash_ids: want a list of whole numbers")
			}
			for j, h := range e.hashIDs {
				if h < 0 {
					return e, fmt.Errorf("hash_ids[%d] %d: must not be negative", j, h)
				}
			}
		}
		for _, k := range []string{"input_types", "output_types"} {
			if _, err := memberStrings(m, k, false); err != nil {
				return e, err
			}
		}
		if _, err := memberString(m, "stop", false); err != nil {
			return e, err
		}
		if e.apiNs, err = memberSeconds(m, "api_time", false); err != nil {
			return e, err
		}
		if e.thinkNs, err = memberSeconds(m, "think_time", false); err != nil {
			return e, err
		}
		if _, err := memberSeconds(m, "ttft", false); err != nil {
			return e, err
		}
		return e, nil
	case "subagent":
		m, err := objectMembers(raw, wekaSubagentMembers...)
		if err != nil {
			return e, err
		}
		if e.t, err = memberSeconds(m, "t", true); err != nil {
			return e, err
		}
		s := &wekaSub{}
		if s.agentID, err = memberString(m, "agent_id", true); err != nil {
			return e, err
		}
		if s.agentID == "" {
			return e, errors.New("agent_id: want a non-empty string")
		}
		if seen[s.agentID] {
			return e, fmt.Errorf("agent_id %q: used twice in the trace (or equal to its id)", s.agentID)
		}
		seen[s.agentID] = true
		if s.typ, err = memberString(m, "subagent_type", true); err != nil {
			return e, err
		}
		if s.status, err = memberString(m, "status", true); err != nil {
			return e, err
		}
		for _, k := range []string{"duration_ms", "total_tokens", "tool_use_count"} {
			if _, err := memberCount(m, k, 0, math.MaxInt64, 0, false); err != nil {
				return e, err
			}
		}
		if _, err := memberStrings(m, "models", true); err != nil {
			return e, err
		}
		if s.tool, s.system, err = wekaPrefix(m); err != nil {
			return e, err
		}
		list, err := memberList(m, "requests", true)
		if err != nil {
			return e, err
		}
		if s.entries, err = parseWekaEntries(list, where+".requests", seen); err != nil {
			return e, err
		}
		e.sub = s
		return e, nil
	}
	return e, fmt.Errorf(`type %q: want "n", "s" or "subagent"`, *head.Type)
}

// wekaRelative reports whether the input's subagent requests are timed from their marker
// (raw kv-cache-tester traces) rather than from the session start (SemiAnalysis' AgentX
// traces): some subagent holds an entry recorded before the marker itself. One convention
// holds for the whole input, as AIPerf resolves it.
func wekaRelative(traces []*wekaTrace) bool {
	var rel func(es []wekaEntry) bool
	rel = func(es []wekaEntry) bool {
		for _, e := range es {
			if e.sub == nil {
				continue
			}
			for _, in := range e.sub.entries {
				if in.t < e.t {
					return true
				}
			}
			if rel(e.sub.entries) {
				return true
			}
		}
		return false
	}
	for _, tr := range traces {
		if rel(tr.entries) {
			return true
		}
	}
	return false
}

// wekaBuild turns one trace into a graph conversation.
type wekaBuild struct {
	tr       *wekaTrace
	relative bool
	conv     Conversation
	models   []string // first-appearance order, the main model first
	prefix   []int    // per agent: its tool_tokens + system_tokens
	starts   []int64  // per turn: its absolute recorded start, before the idle-gap cap
	apis     []int64
	where    []string
}

// add appends a request turn of agent with parents; it returns its turn index.
func (b *wekaBuild) add(e *wekaEntry, agent, agentTurn int, abs int64, parents []Edge) int {
	n := &Node{Agent: agent, AgentTurn: agentTurn, Parents: parents, RecordedThinkNs: e.thinkNs}
	b.conv.Turns = append(b.conv.Turns, Turn{TimestampNs: NoTime, DelayNs: NoTime, OSL: max(e.out, 1),
		PromptTokens: e.in, HashIDs: e.hashIDs, Node: n, ModelRank: b.rank(e.model)})
	b.starts = append(b.starts, abs)
	b.apis = append(b.apis, max(e.apiNs, 0))
	b.where = append(b.where, e.where)
	return len(b.conv.Turns) - 1
}

func (b *wekaBuild) rank(model string) int {
	if model == "" {
		return 0
	}
	if i := slices.Index(b.models, model); i >= 0 {
		return i + 1
	}
	b.models = append(b.models, model)
	return len(b.models)
}

// walk adds the requests of one list of agent's, spawned after turn spawner (-1: at the
// session's start); base is the list's time origin (the marker's start when subagent times
// are relative). It returns the list's tails: the turns whoever joins the agent waits for
// (its last request, and the subagents it started after it and does not leave running).
func (b *wekaBuild) walk(es []wekaEntry, agent, spawner int, base int64) []int {
	prev, agentTurn := -1, 0
	var joins []int
	for i := range es {
		e := &es[i]
		abs := e.t
		if b.relative {
			abs += base
		}
		if e.sub == nil {
			var parents []Edge
			switch {
			case prev >= 0:
				parents = append(parents, Edge{Turn: prev, Kind: EdgeTurn})
			case spawner >= 0:
				parents = append(parents, Edge{Turn: spawner, Kind: EdgeSpawn})
			}
			for _, j := range joins {
				parents = append(parents, Edge{Turn: j, Kind: EdgeJoin})
			}
			joins = nil
			prev = b.add(e, agent, agentTurn, abs, parents)
			agentTurn++
			continue
		}
		s := e.sub
		sp := prev
		if sp < 0 {
			sp = spawner
		}
		a := b.conv.Agents[agent]
		b.conv.Agents = append(b.conv.Agents, Agent{Name: s.agentID, Type: s.typ, Kind: "subagent",
			Parent: agent, Depth: a.Depth + 1, Background: s.status == wekaAsync})
		child := len(b.conv.Agents) - 1
		b.prefix = append(b.prefix, s.tool+s.system)
		tails := b.walk(s.entries, child, sp, abs)
		if s.status != wekaAsync {
			joins = append(joins, tails...)
		}
	}
	if prev >= 0 {
		return append([]int{prev}, joins...)
	}
	return joins
}

// idleWarp maps recorded starts to the capped timeline: a gap between consecutive request
// starts of the trace longer than capNs shrinks to capNs, and everything after it moves
// earlier by the difference (AgentX's trace idle-gap rule). capNs 0 keeps the timeline.
func idleWarp(starts []int64, capNs int64) []int64 {
	out := slices.Clone(starts)
	if capNs <= 0 || len(starts) < 2 {
		return out
	}
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, c int) bool { return starts[order[a]] < starts[order[c]] })
	shift := int64(0)
	for k := 1; k < len(order); k++ {
		if gap := starts[order[k]] - starts[order[k-1]]; gap > capNs {
			shift += gap - capNs
		}
		out[order[k]] = starts[order[k]] - shift
	}
	return out
}

func (l *loader) weka() (*Dataset, error) {
	if l.opts.BlockSize != 0 {
		return nil, fmt.Errorf("dataset: --isl-block-size: weka_trace files give their own block_size")
	}
	syn, err := l.synth()
	if err != nil {
		return nil, err
	}
	var traces []*wekaTrace
	ids := map[string]string{} // trace id → its file: session names are unique
	for _, f := range l.in.files {
		if l.in.dir && !strings.EqualFold(filepath.Ext(f.path), ".json") {
			continue // a trace folder holds its traces as .json files, next to anything else
		}
		tr, err := parseWekaTrace(f.path, trimBOM(f.data))
		if err != nil {
			return nil, l.lineErr(f.path, 0, err)
		}
		if other, dup := ids[tr.id]; dup {
			return nil, l.lineErrf(f.path, 0, "id %q: %s has the same id (each trace is a session of its own name)", tr.id, other)
		}
		ids[tr.id] = f.path
		traces = append(traces, tr)
	}
	if len(traces) == 0 {
		return nil, l.lineErrf(l.in.path, 0, "the folder holds no .json trace file")
	}
	if err := l.checkGlobalBlocks(traces); err != nil {
		return nil, err
	}
	relative := wekaRelative(traces)
	ds := &Dataset{Timed: true, Graph: true}
	for k, tr := range traces {
		b := &wekaBuild{tr: tr, relative: relative}
		b.conv.SessionID = tr.id
		b.conv.SelfContained = true
		b.conv.Agents = []Agent{{Name: tr.id, Kind: "root", Parent: -1}}
		b.prefix = []int{tr.tool + tr.system}
		b.walk(tr.entries, 0, -1, 0)
		// Main model first: the first request of the root agent's own, else the first at all.
		for i := range b.conv.Turns {
			if b.conv.Turns[i].Node.Agent == 0 {
				b.promote(i)
				break
			}
		}
		scope := fmt.Sprintf("local:%d", k)
		if tr.global {
			scope = "global"
		}
		bl, err := syn.blocks(tr.blockSize, scopeSeed(l.opts.Seed, scope))
		if err != nil {
			return nil, err
		}
		origin := slices.Min(b.starts)
		warped := idleWarp(b.starts, l.opts.IdleGapCapNs)
		for i := range b.conv.Turns {
			t := &b.conv.Turns[i]
			n := t.Node
			n.StartNs = warped[i] - origin
			n.EndNs = n.StartNs + b.apis[i]
			if len(t.HashIDs) > 0 {
				if n := (len(t.HashIDs)-1)*tr.blockSize + 1; t.PromptTokens < n {
					return nil, l.lineErrf(tr.path, 0, "%s: %d hash_ids of %d-token blocks imply at least %d tokens, in is %d", b.where[i], len(t.HashIDs), tr.blockSize, n, t.PromptTokens)
				}
			}
			t.Blocks = &BlockPrompt{bl: bl, IDs: t.HashIDs, Length: t.PromptTokens,
				System: min(b.prefix[n.Agent], t.PromptTokens), seed: l.opts.Seed, key: scopeSeed(uint64(k), b.where[i])}
			if !tr.global && len(t.HashIDs) > 0 {
				// The trace insight (expected prefix reuse) counts equal ids as one block:
				// in a local scope they are the trace's own.
				scoped := make([]int64, len(t.HashIDs))
				for j, h := range t.HashIDs {
					scoped[j] = int64(scopeSeed(uint64(h), scope) >> 1)
				}
				t.HashIDs = scoped
			}
		}
		deriveThink(&b.conv)
		if err := checkGraph(&b.conv); err != nil {
			return nil, l.lineErr(tr.path, 0, err)
		}
		ds.Conversations = append(ds.Conversations, b.conv)
		if ds.BlockSize == 0 {
			ds.BlockSize = tr.blockSize
		}
	}
	return ds, nil
}

// checkGlobalBlocks refuses a hash id that the traces of the global scope give blocks of two
// sizes: its text differs with the size, so equal ids would not be equal prefixes.
func (l *loader) checkGlobalBlocks(traces []*wekaTrace) error {
	type use struct {
		size        int
		path, where string
	}
	seen := map[int64]use{}
	var walk func(tr *wekaTrace, es []wekaEntry) error
	walk = func(tr *wekaTrace, es []wekaEntry) error {
		for i := range es {
			e := &es[i]
			if e.sub != nil {
				if err := walk(tr, e.sub.entries); err != nil {
					return err
				}
				continue
			}
			for _, h := range e.hashIDs {
				u, ok := seen[h]
				if !ok {
					seen[h] = use{tr.blockSize, tr.path, e.where}
					continue
				}
				if u.size != tr.blockSize {
					return l.lineErrf(tr.path, 0, "%s: hash_id %d names a %d-token block here and a %d-token block in %s %s; in hash_id_scope global one id is one block, so the traces must share block_size or use distinct ids",
						e.where, h, tr.blockSize, u.size, u.path, u.where)
				}
			}
		}
		return nil
	}
	for _, tr := range traces {
		if !tr.global {
			continue
		}
		if err := walk(tr, tr.entries); err != nil {
			return err
		}
	}
	return nil
}

// promote makes the model of turn i rank 1 (the main model), shifting the others.
func (b *wekaBuild) promote(i int) {
	r := b.conv.Turns[i].ModelRank
	if r <= 1 {
		return
	}
	for j := range b.conv.Turns {
		t := &b.conv.Turns[j]
		switch {
		case t.ModelRank == r:
			t.ModelRank = 1
		case t.ModelRank > 0 && t.ModelRank < r:
			t.ModelRank++
		}
	}
}

// scopeSeed derives the seed of one hash-id scope (or one request's fresh tokens).
func scopeSeed(seed uint64, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return splitmix64(seed ^ h.Sum64())
}

// trimBOM drops a UTF-8 byte order mark.
func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}
