package dataset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// edges writes a node's parents compactly: "1:turn 4:join".
func edges(n *Node) string {
	kinds := map[EdgeKind]string{EdgeTurn: "turn", EdgeSpawn: "spawn", EdgeFork: "fork", EdgeJoin: "join"}
	var s []string
	for _, e := range n.Parents {
		s = append(s, fmt.Sprintf("%d:%s", e.Turn, kinds[e.Kind]))
	}
	return strings.Join(s, " ")
}

// The example folder: trace_a nests subagents (one async inside another, two run in
// parallel, the parent's next request joins the non-async ones), trace_b is a plain chain.
// Every node has the parents, agent, think time and recorded start the trace says; every
// prompt has exactly its tokens, its system part exactly tool_tokens + system_tokens.
func TestWekaGraph(t *testing.T) {
	tok, _ := fileEnv(t)
	ds, err := loadFixture(t, "weka", func(o *FileOptions) { o.Type = TypeWeka })
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Graph || !ds.Timed || len(ds.Conversations) != 2 {
		t.Fatalf("graph %v timed %v, %d conversations", ds.Graph, ds.Timed, len(ds.Conversations))
	}
	c := ds.Conversations[0]
	const s = int64(1e9)
	want := []struct {
		agent, agentTurn int
		parents          string
		startMs, thinkMs int64
		in, system       int
	}{
		{0, 0, "", 0, -1, 100, 64},
		{0, 1, "0:turn", 2000, 1000, 140, 64},
		{1, 0, "1:spawn", 3700, 200, 80, 32},
		{2, 0, "2:spawn", 4400, 200, 40, 0},
		{1, 1, "2:turn", 4500, 300, 110, 32},
		{3, 0, "1:spawn", 3800, 300, 50, 0},
		{0, 2, "1:turn 4:join 5:join", 6000, 500, 180, 64}, // think_time given: 0.5 s
		{0, 3, "6:turn", 9000, 1000, 200, 64},
	}
	if len(c.Turns) != len(want) {
		t.Fatalf("%d turns, want %d", len(c.Turns), len(want))
	}
	for i, w := range want {
		tt := &c.Turns[i]
		n := tt.Node
		think := tt.DelayNs
		if think >= 0 {
			think /= 1e6
		}
		if n.Agent != w.agent || n.AgentTurn != w.agentTurn || edges(n) != w.parents || n.StartNs != w.startMs*s/1000 ||
			think != w.thinkMs || tt.PromptTokens != w.in || tt.Blocks.System != w.system {
			t.Errorf("turn %d: agent %d/%d parents %q start %d think %d in %d system %d; want %+v",
				i, n.Agent, n.AgentTurn, edges(n), n.StartNs, think, tt.PromptTokens, tt.Blocks.System, w)
		}
		sys, user, err := tt.Blocks.Texts()
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(sys); got != w.system {
			t.Errorf("turn %d: system part %d tokens, want %d", i, got, w.system)
		}
		if got := tok.Count(sys) + tok.Count(user); got != w.in {
			t.Errorf("turn %d: prompt %d tokens, want %d", i, got, w.in)
		}
		if got := tok.Count(sys + user); got != w.in {
			t.Errorf("turn %d: joined prompt %d tokens, want %d", i, got, w.in)
		}
	}
	agents := []Agent{
		{Name: "trace_a", Kind: "root", Parent: -1},
		{Name: "agent_1", Type: "Explore", Kind: "subagent", Parent: 0, Depth: 1},
		{Name: "agent_2", Type: "general-purpose", Kind: "subagent", Parent: 1, Depth: 2, Background: true},
		{Name: "agent_3", Type: "Explore", Kind: "subagent", Parent: 0, Depth: 1},
	}
	if !slices.Equal(c.Agents, agents) {
		t.Fatalf("agents %+v", c.Agents)
	}
	// The main model ranks first; the subagents' model second.
	if c.Turns[0].ModelRank != 1 || c.Turns[2].ModelRank != 2 {
		t.Fatalf("model ranks %d %d", c.Turns[0].ModelRank, c.Turns[2].ModelRank)
	}
	// Requests sharing leading hash ids share byte-identical prefixes: turn 0's whole
	// prompt (ids 1-7, the last block partial) is a prefix of turn 1's (ids 1-9).
	text := func(i int) string {
		sys, user, _ := c.Turns[i].Blocks.Texts()
		return sys + user
	}
	if a, b := text(0), text(1); !strings.HasPrefix(b, a) {
		t.Fatal("turn 0's prompt is not a prefix of turn 1's")
	}
	if a, b := text(2), text(4); !strings.HasPrefix(b, a) {
		t.Fatal("the subagent's first prompt is not a prefix of its second")
	}
	// Deterministic.
	ds2, _ := loadFixture(t, "weka", func(o *FileOptions) { o.Type = TypeWeka })
	for i := range c.Turns {
		if a, b := text(i), func() string { s, u, _ := ds2.Conversations[0].Turns[i].Blocks.Texts(); return s + u }(); a != b {
			t.Fatalf("turn %d differs between two loads", i)
		}
	}
}

// hash_id_scope local keeps equal ids of different traces apart; global joins them:
// byte-identical blocks for equal leading ids across traces, and different text after.
func TestWekaScopes(t *testing.T) {
	prompt := func(ds *Dataset, conv, turn int) string {
		s, u, err := ds.Conversations[conv].Turns[turn].Blocks.Texts()
		if err != nil {
			t.Fatal(err)
		}
		return s + u
	}
	tok, _ := fileEnv(t)
	tokens := func(s string) []int { return tok.Encode(s) }
	g, err := loadFixture(t, "weka_global", nil)
	if err != nil {
		t.Fatal(err)
	}
	// g1 turn 0 has ids 7 8 9 10, g2 turn 0 ids 7 8 9 12: 48 shared tokens, then not.
	a, b := tokens(prompt(g, 0, 0)), tokens(prompt(g, 1, 0))
	if !slices.Equal(a[:48], b[:48]) || slices.Equal(a[48:64], b[48:64]) {
		t.Fatal("global scope: the shared blocks differ, or the distinct one is shared")
	}
	if pa, pb := prompt(g, 0, 0), prompt(g, 1, 0); pa[:len(tok.Decode(a[:48]))] != pb[:len(tok.Decode(b[:48]))] {
		t.Fatal("global scope: shared blocks are not byte-identical")
	}
	// The same two traces declared local share nothing.
	dir := t.TempDir()
	for _, name := range []string{"g1.json", "g2.json"} {
		data, err := os.ReadFile(filepath.Join(fileTestdata, "weka_global", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(string(data), `"global"`, `"local"`, 1)), 0o644)
	}
	tok2, c := fileEnv(t)
	l, err := LoadFile(FileOptions{Path: dir, Tokenizer: tok2, Corpus: c, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	a, b = tokens(prompt(l, 0, 0)), tokens(prompt(l, 1, 0))
	if slices.Equal(a[:16], b[:16]) {
		t.Fatal("local scope: equal ids of two traces gave the same block")
	}
	// Within one local trace equal ids still share (turn 0 and 1 of g1).
	if !strings.HasPrefix(prompt(l, 0, 1), prompt(l, 0, 0)) {
		t.Fatal("local scope: a trace's own blocks are not shared")
	}
}

// Subagent times written relative to their marker (raw kv-cache-tester traces) are read as
// such when one of them lies before its marker; an idle gap longer than the cap shrinks to
// it and moves everything after it earlier.
func TestWekaTimesAndIdleGap(t *testing.T) {
	tok, c := fileEnv(t)
	dir := t.TempDir()
	trace := `{"id": "r", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [
	 {"t": 0, "type": "n", "model": "m", "in": 20, "out": 4, "api_time": 1},
	 {"t": 10, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": ["m"], "requests": [
	   {"t": 0.5, "type": "n", "model": "m", "in": 20, "out": 4, "api_time": 1}]},
	 {"t": 100, "type": "n", "model": "m", "in": 20, "out": 4}]}`
	os.WriteFile(filepath.Join(dir, "r.json"), []byte(trace), 0o644)
	load := func(capNs int64) *Conversation {
		ds, err := LoadFile(FileOptions{Path: dir, Type: TypeWeka, Tokenizer: tok, Corpus: c, IdleGapCapNs: capNs})
		if err != nil {
			t.Fatal(err)
		}
		return &ds.Conversations[0]
	}
	cv := load(0)
	if got := cv.Turns[1].Node.StartNs; got != 10.5e9 {
		t.Fatalf("relative subagent request starts at %d, want 10.5 s", got)
	}
	if got := cv.Turns[2].DelayNs; got != 100e9-11.5e9 {
		t.Fatalf("join think %d", got)
	}
	cv = load(2e9) // gaps 10.5 s and 89.5 s between starts, both capped to 2 s
	if a, b := cv.Turns[1].Node.StartNs, cv.Turns[2].Node.StartNs; a != 2e9 || b != 4e9 {
		t.Fatalf("capped starts %d %d, want 2 s and 4 s", a, b)
	}
	if got := cv.Turns[2].DelayNs; got != 1e9 { // 4 s − (2 s + 1 s api)
		t.Fatalf("capped join think %d", got)
	}
}

// Bad traces fail naming the file and the entry, for every kind of mistake.
func TestWekaErrors(t *testing.T) {
	tok, c := fileEnv(t)
	base := `{"id": "e", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [%s]}`
	req := `{"t": 0, "type": "n", "model": "m", "in": 20, "out": 4}`
	for _, tc := range []struct{ name, file, want string }{
		{"unknown top", `{"id": "e", "models": [], "block_size": 16, "hash_id_scope": "local", "requests": [], "colour": 1}`, `unknown field "colour"`},
		{"unknown in request", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "in": 1, "out": 1, "tokens": 3}`), `requests[0]: unknown field "tokens"`},
		{"unknown nested", fmt.Sprintf(base, req+`, {"t": 1, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": [], "requests": [{"t": 1, "type": "s", "model": "m", "in": 1, "out": 1, "xx": 0}]}`), `requests[1].requests[0]: unknown field "xx"`},
		{"unknown two deep", fmt.Sprintf(base, req+`, {"t": 1, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": [], "requests": [`+req+`, {"t": 1, "type": "subagent", "agent_id": "b", "subagent_type": "x", "status": "completed", "models": [], "requests": [{"t": 1, "type": "s", "model": "m", "in": 1, "out": 1, "xx": 0}]}]}`), `requests[1].requests[1].requests[0]: unknown field "xx"`},
		{"ttft on n", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "in": 1, "out": 1, "ttft": 0.1}`), `requests[0]: unknown field "ttft"`},
		{"bad type", fmt.Sprintf(base, `{"t": 0, "type": "x"}`), `requests[0]: type "x"`},
		{"negative t", fmt.Sprintf(base, `{"t": -1, "type": "n", "model": "m", "in": 1, "out": 1}`), `requests[0]: t -1: must not be negative`},
		{"nan in", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "in": 1.5, "out": 1}`), `requests[0]: in 1.5: want a whole number`},
		{"missing in", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "out": 1}`), `requests[0]: in: required`},
		{"negative hash", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "in": 20, "out": 1, "hash_ids": [1, -2]}`), `hash_ids[1] -2`},
		{"hash ids too many", fmt.Sprintf(base, `{"t": 0, "type": "n", "model": "m", "in": 20, "out": 1, "hash_ids": [1, 2, 3]}`), `requests[0]: 3 hash_ids of 16-token blocks imply at least 33 tokens, in is 20`},
		{"scope", strings.Replace(fmt.Sprintf(base, req), `"local"`, `"shared"`, 1), `hash_id_scope "shared"`},
		{"block size", strings.Replace(fmt.Sprintf(base, req), `16`, `1`, 1), `block_size 1`},
		{"duplicate agent", fmt.Sprintf(base, req+`, {"t": 1, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": [], "requests": [`+req+`]}, {"t": 2, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": [], "requests": [`+req+`]}`), `requests[2]: agent_id "a": used twice`},
		{"no requests", fmt.Sprintf(base, ``), `no request`},
		{"not json", `{"id": `, `invalid JSON`},
		{"missing status", fmt.Sprintf(base, req+`, {"t": 1, "type": "subagent", "agent_id": "a", "subagent_type": "x", "models": [], "requests": []}`), `requests[1]: status: required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "bad.json", tc.file)
			_, err := LoadFile(FileOptions{Path: p, Type: TypeWeka, Tokenizer: tok, Corpus: c})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("%v; want the file and %q", err, tc.want)
			}
			// An entry is named once, by its whole path, right after the file.
			if strings.HasPrefix(tc.want, "requests[") && !strings.Contains(err.Error(), p+": "+tc.want) {
				t.Fatalf("%v; want %q right after the file", err, tc.want)
			}
		})
	}
	if _, err := loadFixture(t, "weka", func(o *FileOptions) { o.Type = TypeWeka; o.BlockSize = 64 }); err == nil || !strings.Contains(err.Error(), "--isl-block-size") {
		t.Fatalf("--isl-block-size with weka_trace: %v", err)
	}
	if _, err := loadFixture(t, "mooncake_small.jsonl", func(o *FileOptions) { o.IdleGapCapNs = 1 }); err == nil || !strings.Contains(err.Error(), "--trace-idle-gap-cap-seconds") {
		t.Fatalf("idle-gap cap on mooncake: %v", err)
	}
}

// The example dag_jsonl: a planner spawns a critic that its next turn joins, then forks
// two implementers that inherit its conversation (sources: the turns whose replies they
// carry), one of them two turns long.
func TestDAGGraph(t *testing.T) {
	ds, err := loadFixture(t, "dag_branching.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Graph || !ds.LiveReplies || ds.Timed || len(ds.Conversations) != 1 {
		t.Fatalf("graph %v live %v timed %v, %d conversations", ds.Graph, ds.LiveReplies, ds.Timed, len(ds.Conversations))
	}
	c := ds.Conversations[0]
	want := []struct {
		agent   int
		parents string
		sources []int
		thinkMs int64
		first   string
	}{
		{0, "", nil, -1, "You plan refactors."},
		{1, "0:spawn", nil, 0, "You review plans."},
		{0, "0:turn 1:join", []int{0}, 50, "Revise the plan with the critique."},
		{2, "2:fork", []int{0, 2}, 0, "Write step one."},
		{2, "3:turn", []int{0, 2, 3}, 20, "Now step two."},
		{3, "2:fork", []int{0, 2}, 0, "Write the tests first."},
	}
	if len(c.Turns) != len(want) {
		t.Fatalf("%d turns", len(c.Turns))
	}
	for i, w := range want {
		tt := &c.Turns[i]
		think := tt.DelayNs
		if think > 0 {
			think /= 1e6
		}
		if tt.Node.Agent != w.agent || edges(tt.Node) != w.parents || !slices.Equal(tt.Node.Sources, w.sources) || think != w.thinkMs || tt.Messages[0].Content != w.first {
			t.Errorf("turn %d: agent %d parents %q sources %v think %d first %q; want %+v", i, tt.Node.Agent, edges(tt.Node), tt.Node.Sources, think, tt.Messages[0].Content, w)
		}
	}
	if a := c.Agents; len(a) != 4 || a[1].Kind != "spawn" || a[2].Kind != "fork" || a[2].Name != "impl-a" || a[3].Depth != 1 {
		t.Fatalf("agents %+v", a)
	}
	if raw, ok := c.Turns[5].Extra["temperature"].(json.RawMessage); !ok || string(raw) != "0" {
		t.Fatalf("extra %v", c.Turns[5].Extra)
	}
}

// A SPAWN template referenced twice is two instances; join_at gates a later turn; a
// background fork lets the parent go on; pre-session spawns start with the session.
func TestDAGShapes(t *testing.T) {
	tok, c := fileEnv(t)
	file := `{"session_id": "r", "pre_session_spawns": ["side"], "turns": [` +
		`{"messages": [{"role": "user", "content": "a"}], "spawns": [{"children": ["w"], "join_at": 2}], "forks": [{"child": "bg", "background": true}]}, ` +
		`{"messages": [{"role": "user", "content": "b"}], "spawns": ["w"]}, {"messages": [{"role": "user", "content": "c"}]}]}
{"session_id": "w", "turns": [{"messages": [{"role": "user", "content": "work"}]}]}
{"session_id": "bg", "turns": [{"messages": [{"role": "user", "content": "note"}]}]}
{"session_id": "side", "turns": [{"messages": [{"role": "user", "content": "side"}]}]}`
	ds, err := LoadFile(FileOptions{Path: writeTemp(t, "d.jsonl", file), Type: TypeDAG, Tokenizer: tok, Corpus: c})
	if err != nil {
		t.Fatal(err)
	}
	cv := ds.Conversations[0]
	var got []string
	for i, tt := range cv.Turns {
		got = append(got, fmt.Sprintf("%d %s [%s]", i, cv.Agents[tt.Node.Agent].Name, edges(tt.Node)))
	}
	want := []string{"0 r []", "1 side []", "2 bg [0:fork]", "3 w [0:spawn]", "4 r [0:turn]", "5 w#2 [4:spawn]", "6 r [4:turn 3:join 5:join]"}
	if !slices.Equal(got, want) {
		t.Fatalf("nodes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !cv.Agents[1].Background || !cv.Agents[2].Background || cv.Agents[3].Background {
		t.Fatalf("background flags %+v", cv.Agents)
	}
}

// Bad dag_jsonl files fail naming the file, the line and what is wrong.
func TestDAGErrors(t *testing.T) {
	tok, c := fileEnv(t)
	u := `{"role": "user", "content": "x"}`
	one := func(id, extra string) string {
		return fmt.Sprintf(`{"session_id": %q, "turns": [{"messages": [%s]%s}]}`, id, u, extra)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"unknown conversation member", `{"session_id": "a", "turns": [{"messages": [` + u + `]}], "colour": 1}`, `line 1: unknown field "colour"`},
		{"unknown turn member", one("a", `, "max_token": 3`), `line 1: turns[0]: unknown field "max_token"`},
		{"no messages", `{"session_id": "a", "turns": [{"max_tokens": 3}]}`, `turns[0]: messages: required`},
		{"undeclared", one("a", `, "forks": ["b"]`), `turns[0].forks: session "b" is not declared`},
		{"duplicate", one("a", "") + "\n" + one("a", ""), `line 2: duplicate session_id "a" (line 1)`},
		{"cycle", one("a", `, "spawns": ["b"]`) + "\n" + one("b", `, "spawns": ["a"]`) + "\n" + one("r", `, "spawns": ["a"]`), `cycle: a -> b -> a`},
		{"two fork parents", one("a", `, "forks": ["c"]`) + "\n" + one("b", `, "forks": ["c"]`) + "\n" + one("c", ""), `session "c" is forked by both`},
		{"terminal fork midway", `{"session_id": "a", "turns": [{"messages": [` + u + `], "forks": ["b"]}, {"messages": [` + u + `]}]}` + "\n" + one("b", ""), `turns[0].forks: "b" is a terminal fork`},
		{"join_at", `{"session_id": "a", "turns": [{"messages": [` + u + `], "spawns": [{"children": ["b"], "join_at": 0}]}]}` + "\n" + one("b", ""), `join_at 0`},
		{"system later", `{"session_id": "a", "turns": [{"messages": [` + u + `]}, {"messages": [{"role": "system", "content": "s"}]}]}`, `turns[1]: a system message only seeds`},
		{"orchestrator", `{"session_id": "o", "orchestrator": true, "spawns": ["a"]}`, `orchestrator conversations`},
		{"context mode", `{"session_id": "a", "context_mode": "x", "turns": [{"messages": [` + u + `]}]}`, `context_mode "x"`},
		{"negative delay", one("a", `, "delay": -1`), `delay -1: must not be negative`},
		{"root delay", one("a", `, "delay": 5`), `a root's first turn waits for nothing`},
		{"no role", `{"session_id": "a", "turns": [{"messages": [{"content": "x"}]}]}`, `messages[0]: want a "role" string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "bad.jsonl", tc.file)
			_, err := LoadFile(FileOptions{Path: p, Type: TypeDAG, Tokenizer: tok, Corpus: c})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("%v; want the file and %q", err, tc.want)
			}
			// An entry is named once, by its whole path, right after the file.
			if strings.HasPrefix(tc.want, "requests[") && !strings.Contains(err.Error(), p+": "+tc.want) {
				t.Fatalf("%v; want %q right after the file", err, tc.want)
			}
		})
	}
}

// TrimGraph starts a session midway: what the trace recorded before the instant is left
// out, requests left without parents become roots (the first-starting one first), think
// times are derived again; CriticalPathNs is the longest chain of think times and requests.
func TestTrimGraphAndCriticalPath(t *testing.T) {
	ds, err := loadFixture(t, "weka", func(o *FileOptions) { o.Type = TypeWeka })
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Conversations[0]
	tr := TrimGraph(c, 3.75e9) // after turn 2 (3.7 s) started, before turn 5 (3.8 s)
	var got []string
	for i, tt := range tr.Turns {
		got = append(got, fmt.Sprintf("%d a%d [%s] %d", i, tt.Node.Agent, edges(tt.Node), tt.DelayNs/1e6))
	}
	// Kept: 5 (3.8 s, becomes first), 3 (4.4 s, root), 4 (4.5 s, root), 6 (join of 4, 5), 7.
	want := []string{"0 a3 [] 0", "1 a2 [] 600", "2 a1 [] 700", "3 a0 [2:join 0:join] 500", "4 a0 [3:turn] 1000"}
	if !slices.Equal(got, want) {
		t.Fatalf("trimmed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := checkGraph(&tr); err != nil {
		t.Fatal(err)
	}
	if n := len(TrimGraph(c, 1e12).Turns); n != 1 {
		t.Fatalf("a start past the end keeps %d turns, want the last one", n)
	}
	// Think times along 0 -> 1 -> {2 -> 4, 5} -> 6 -> 7 with 1 ms a request: 1000 + 200 +
	// 300 (agent_1's chain is the longer) + 500 + 1000 ms, plus 6 requests on the path.
	if got, want := CriticalPathNs(c, 1e6), int64(3000e6+6e6); got != want {
		t.Fatalf("critical path %d, want %d", got, want)
	}
}

// The docs/datasets.md example: three requests, the subagent's after the first, the root's
// second after both, with the think times and shared prefix the page states.
func TestWekaDocExample(t *testing.T) {
	tok, _ := fileEnv(t)
	ds, err := loadFixture(t, "weka_example.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := ds.Conversations[0]
	if len(c.Turns) != 3 || edges(c.Turns[1].Node) != "0:spawn" || edges(c.Turns[2].Node) != "0:turn 1:join" ||
		c.Turns[1].DelayNs != 3.2e9 || c.Turns[2].DelayNs != 0.5e9 || c.Turns[0].Blocks.System != 32 {
		t.Fatalf("turns %+v %+v %+v", *c.Turns[0].Node, *c.Turns[1].Node, *c.Turns[2].Node)
	}
	text := func(i int) string { s, u, _ := c.Turns[i].Blocks.Texts(); return s + u }
	sys, _, _ := c.Turns[0].Blocks.Texts()
	if !strings.HasPrefix(text(2), text(0)) || tok.Count(sys) != 32 || tok.Count(text(2)) != 96 {
		t.Fatal("request 0's prompt is not a byte prefix of request 2's, or the lengths are off")
	}
}

// TestDAGInstanceNamesUnique: a template spawned several times gets numbered instance names
// that never meet a session the input declares under such a name ("C#2"), nor another
// instance's, in whatever order the instances are made.
func TestDAGInstanceNamesUnique(t *testing.T) {
	tok, c := fileEnv(t)
	leaf := func(id string) string {
		return `{"session_id": "` + id + `", "turns": [{"messages": [{"role": "user", "content": "` + id + `"}]}]}`
	}
	for _, order := range [][]string{{"C", "C", "C#2"}, {"C#2", "C", "C"}, {"C", "C#2", "C", "C#2", "C"}} {
		children := `"` + strings.Join(order, `", "`) + `"`
		file := `{"session_id": "r", "turns": [{"messages": [{"role": "user", "content": "go"}], "spawns": [{"children": [` + children + `]}]}, {"messages": [{"role": "user", "content": "end"}]}]}` +
			"\n" + leaf("C") + "\n" + leaf("C#2") + "\n" + leaf("C#3") + "\n"
		ds, err := LoadFile(FileOptions{Path: writeTemp(t, "d.jsonl", file), Type: TypeDAG, Tokenizer: tok, Corpus: c})
		if err != nil {
			t.Fatal(err)
		}
		var roots []string
		for _, conv := range ds.Conversations {
			roots = append(roots, conv.SessionID)
		}
		if !slices.Contains(roots, "r") {
			t.Fatalf("roots %v", roots)
		}
		conv := ds.Conversations[slices.Index(roots, "r")]
		seen := map[string]bool{}
		for _, a := range conv.Agents {
			if seen[a.Name] {
				t.Fatalf("spawn order %v: agent name %q given twice: %+v", order, a.Name, conv.Agents)
			}
			seen[a.Name] = true
		}
		if len(conv.Agents) != len(order)+1 || !seen["C"] || !seen["C#2"] {
			t.Fatalf("spawn order %v: agents %+v", order, conv.Agents)
		}
		// Each instance's first message is its template's: the name says which it is.
		for _, tt := range conv.Turns {
			a := conv.Agents[tt.Node.Agent]
			if a.Kind == "root" {
				continue
			}
			tmpl := tt.Messages[0].Content
			if a.Name != tmpl && !strings.HasPrefix(a.Name, tmpl+"#") {
				t.Errorf("spawn order %v: agent %q sends template %q's turn", order, a.Name, tmpl)
			}
		}
	}
}

// TestWekaFolderConflicts: in a trace folder, a hash id of the global scope that two traces
// give blocks of different sizes is refused naming the file and the entry (its text differs
// with the size, so equal ids would claim a prefix that no bytes share), and so is a trace id
// used twice; local scopes, or disjoint ids, may mix block sizes.
func TestWekaFolderConflicts(t *testing.T) {
	tok, c := fileEnv(t)
	trace := func(id string, bs int, scope, ids string) string {
		return fmt.Sprintf(`{"id": %q, "models": ["m"], "block_size": %d, "hash_id_scope": %q, "requests": [`+
			`{"t": 0, "type": "n", "model": "m", "in": 100, "out": 4, "hash_ids": [%s]}, `+
			`{"t": 1, "type": "subagent", "agent_id": "%s-sub", "subagent_type": "x", "status": "completed", "models": [], "requests": [`+
			`{"t": 1, "type": "s", "model": "m", "in": 100, "out": 4, "hash_ids": [%s]}]}]}`, id, bs, scope, ids, id, ids)
	}
	for _, tc := range []struct {
		name   string
		a, b   string
		want   string // "" loads
		inFile string
	}{
		{"global sizes differ", trace("a", 16, "global", "1, 2, 3"), trace("b", 32, "global", "1, 2, 3"), `requests[0]: hash_id 1 names a 32-token block here and a 16-token block in`, "b.json"},
		{"global sizes differ later", trace("a", 16, "global", "1, 2, 3"), trace("b", 32, "global", "5, 3"), `requests[0]: hash_id 3 names a 32-token block`, "b.json"},
		{"global disjoint ids", trace("a", 16, "global", "1, 2, 3"), trace("b", 32, "global", "4, 5, 6"), "", ""},
		{"local sizes differ", trace("a", 16, "local", "1, 2, 3"), trace("b", 32, "local", "1, 2, 3"), "", ""},
		{"one global one local", trace("a", 16, "global", "1, 2, 3"), trace("b", 32, "local", "1, 2, 3"), "", ""},
		{"same id", trace("a", 16, "global", "1"), trace("a", 16, "global", "1"), `id "a":`, "b.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range map[string]string{"a.json": tc.a, "b.json": tc.b} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadFile(FileOptions{Path: dir, Tokenizer: tok, Corpus: c})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(dir, tc.inFile)) {
				t.Fatalf("%v; want %s named and %q", err, tc.inFile, tc.want)
			}
		})
	}
}
