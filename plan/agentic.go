package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

// Agentic workloads (graph inputs: weka_trace, dag_jsonl). Every session a plan sends of
// such an input is a play of one of its conversations: the whole graph of agents and
// requests, written to the plan's graph section so replay releases each request when what it
// waits for has ended. A play is the conversation itself, or, when it must differ from the
// input's, a derived conversation appended to the dataset: started at a trajectory point
// (--trajectory-start-*), or with its own cache-bust marker (--cache-bust).

// cacheBustTokens is the length of a play's cache-bust marker.
const cacheBustTokens = 8

// minRequestNs is what every request of a closed-loop plan sized by a duration is assumed to
// take at least (closedLoopPerSlot requests a second per slot).
const minRequestNs = int64(1e9 / closedLoopPerSlot)

// plays derives the conversations the sessions of a graph input send.
type plays struct {
	ds     *dataset.Dataset // the compiler's own copy, which plays append to
	corpus *dataset.Corpus
	bust   string // --cache-bust mode; "" when off
	// markers holds each derived conversation's cache-bust marker, by conversation index.
	markers map[int]string
	seed    uint64
	// trajectory starts: the first lanes profile sessions of a closed loop.
	minR, maxR float64
	lanesLeft  int
	traj       *rand.Rand
	// lanes are, in a closed loop sized by a duration, when each concurrency slot is free
	// at the earliest (every request taking minRequestNs, think times as recorded).
	lanes []int64
}

func newPlays(o *Options, ds *dataset.Dataset, corpus *dataset.Corpus, mode string) *plays {
	p := &plays{ds: ds, corpus: corpus, markers: map[int]string{}, seed: Stream(o.Seed, "plan.cache_bust").Uint64(),
		minR: o.TrajectoryStartMinRatio, maxR: o.TrajectoryStartMaxRatio, traj: Stream(o.Seed, "plan.trajectory_start")}
	if o.CacheBust != "none" {
		p.bust = o.CacheBust
	}
	if o.trajectory() && mode == ModeConcurrency {
		p.lanesLeft = max(o.Concurrency, 1)
	}
	return p
}

// play returns the conversation session sends for input conversation conv in phase.
func (p *plays) play(conv int, phase mmapds.Phase, session uint32) (int, error) {
	c := &p.ds.Conversations[conv]
	derived := false
	var out dataset.Conversation
	if phase == mmapds.PhaseProfile && p.lanesLeft > 0 {
		p.lanesLeft--
		r := p.minR + p.traj.Float64()*(p.maxR-p.minR)
		out = dataset.TrimGraph(c, int64(math.Round(r*float64(dataset.LastStartNs(c)))))
		derived = true
	}
	if p.bust != "" {
		if !derived {
			out = *c
		}
		derived = true
	}
	if !derived {
		return conv, nil
	}
	p.ds.Conversations = append(p.ds.Conversations, out)
	idx := len(p.ds.Conversations) - 1
	if p.bust != "" {
		m, err := dataset.CacheBustMarker(p.corpus, rand.New(rand.NewPCG(p.seed, uint64(session))), cacheBustTokens)
		if err != nil {
			return 0, fmt.Errorf("plan: cache-bust marker: %w", err)
		}
		p.markers[idx] = m
	}
	return idx, nil
}

// laneFull takes a play of conversation conv into the lane free first, and reports whether
// every lane is then busy past durationNs: the closed loop has sessions enough.
func (p *plays) laneFull(conv int, durationNs int64) bool {
	i := 0
	for j := range p.lanes {
		if p.lanes[j] < p.lanes[i] {
			i = j
		}
	}
	p.lanes[i] += max(dataset.CriticalPathNs(&p.ds.Conversations[conv], minRequestNs), minRequestNs)
	for _, l := range p.lanes {
		if l < durationNs {
			return false
		}
	}
	return true
}

// graphRecords gives the records of a graph plan their graph nodes and the plan its agents,
// as the renderer writes them.
type graphRecords struct {
	agents    []mmapds.Agent
	first     int   // record index of the current session's first turn
	agentBase int   // plan-wide number of its first agent
	session   int64 // the current session, -1 before the first
}

// node is the graph node of the record of planned p (its session's turn p.turn), to be
// written right after it; rec is the record's index, reuse its offered prefix reuse
// (dataset.PrefixReuse over the rendered prompts).
func (g *graphRecords) node(c *dataset.Conversation, p *planned, rec, reuse int) mmapds.Node {
	if int64(p.session) != g.session || p.turn == 0 {
		g.session, g.first, g.agentBase = int64(p.session), rec, len(g.agents)
		for _, a := range c.Agents {
			parent := int64(-1)
			if a.Parent >= 0 {
				parent = int64(g.agentBase + a.Parent)
			}
			g.agents = append(g.agents, mmapds.Agent{Session: p.session, Parent: parent, Depth: a.Depth,
				Kind: a.Kind, Name: a.Name, Type: a.Type, Background: a.Background})
		}
	}
	t := &c.Turns[p.turn]
	n := t.Node
	out := mmapds.Node{Agent: uint32(g.agentBase + n.Agent), Flags: mmapds.NodeStrict, Reuse: uint32(reuse)}
	for _, e := range n.Parents {
		out.Parents = append(out.Parents, mmapds.Edge{Record: uint32(g.first + e.Turn), Kind: mmapds.EdgeKind(e.Kind)})
	}
	for _, s := range n.Sources {
		out.Sources = append(out.Sources, mmapds.Edge{Record: uint32(g.first + s), Kind: mmapds.EdgeReply})
	}
	return out
}

// graphBody sets req's messages for graph turn turn of conversation conv and returns its
// ISL and the tokens of its prompt as far as they are known (renderer.joined). A hash-id prompt (weka_trace) becomes a system message (its tool and system prefix)
// and a user message, its ISL exactly the prompt's tokens (each part re-encodes to its own
// tokens). A dag_jsonl turn's body is its history (each source's messages followed by its
// reply, a live-history marker) and then its own messages; messages that carry more than
// role and text go verbatim. A play's cache-bust marker goes before the first user text
// (first_turn_prefix) or the first message (system_prefix).
func (r *renderer) graphBody(conv, turn int, req *endpoint.Request) (int, []int, error) {
	c := &r.ds.Conversations[conv]
	t := &c.Turns[turn]
	marker := r.markers[conv]
	if t.Blocks != nil {
		sys, user, err := t.Blocks.Texts()
		if err != nil {
			return 0, nil, usagef("plan: session %q turn %d: %v", c.SessionID, turn, err)
		}
		// The prompt's tokens as its text is built (each part re-encodes to its own), the
		// marker's where it goes: the marker keeps every token boundary.
		ids := t.Blocks.AppendTokens(nil)
		if marker != "" {
			at := min(t.Blocks.System, len(ids))
			if r.opts.CacheBust == "system_prefix" && sys != "" {
				sys = marker + sys
				at = 0
			} else {
				user = marker + user
			}
			ids = slices.Insert(ids, at, r.tok.Encode(marker)...)
		}
		req.Messages = req.Messages[:0]
		if sys != "" {
			req.Messages = append(req.Messages, endpoint.Message{Role: "system", Content: sys})
		}
		req.Messages = append(req.Messages, endpoint.Message{Role: "user", Content: user})
		return len(ids), ids, nil
	}
	var msgs []endpoint.Message
	var raw []json.RawMessage
	verbatim := false
	own := func(k int) {
		n := c.Turns[k].Node
		msgs = append(msgs, c.Turns[k].Messages...)
		if n.Verbatim != nil {
			verbatim = true
			raw = append(raw, n.Verbatim...)
			return
		}
		for _, m := range c.Turns[k].Messages {
			b, _ := json.Marshal(map[string]string{"role": m.Role, "content": m.Content})
			raw = append(raw, b)
		}
	}
	reply := LiveHistoryMarker
	for _, s := range t.Node.Sources {
		own(s)
		msgs = append(msgs, endpoint.Message{Role: "assistant", Content: reply})
		raw = append(raw, json.RawMessage(`{"role":"assistant","content":"`+reply+`"}`))
	}
	own(turn)
	if marker != "" {
		at := 0 // system_prefix: the first message
		if r.opts.CacheBust == "first_turn_prefix" {
			for i, m := range msgs {
				if m.Role == "user" {
					at = i
					break
				}
			}
		}
		msgs[at].Content = marker + "\n" + msgs[at].Content
		if verbatim {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw[at], &obj) == nil {
				var text string
				if json.Unmarshal(obj["content"], &text) == nil {
					obj["content"], _ = json.Marshal(marker + "\n" + text)
				} else {
					var parts []json.RawMessage
					if json.Unmarshal(obj["content"], &parts) == nil {
						p, _ := json.Marshal(map[string]string{"type": "text", "text": marker})
						obj["content"], _ = json.Marshal(append([]json.RawMessage{p}, parts...))
					}
				}
				raw[at], _ = json.Marshal(obj)
			}
		}
	}
	req.Messages = msgs
	if verbatim {
		var b strings.Builder
		b.WriteByte('[')
		for i, m := range raw {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m)
		}
		b.WriteByte(']')
		extra := make(map[string]any, len(req.Extra)+1)
		for k, v := range req.Extra {
			extra[k] = v
		}
		extra["messages"] = json.RawMessage(b.String())
		req.Extra = extra
	}
	isl, ids := r.joined(msgs, LiveHistoryMarker)
	return isl, ids, nil
}
