package plan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

const agenticTestdata = "../testdata/dataset"

// agenticOptions compile an input of the shared test data with the builtin tokenizer.
func agenticOptions(t testing.TB, input, typ string) Options {
	t.Helper()
	o := testOptions(t)
	o.Dataset = loadAgentic(t, input, typ)
	return o
}

// loadAgentic loads an input of the shared test data.
func loadAgentic(t testing.TB, input, typ string) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.LoadFile(dataset.FileOptions{Path: filepath.Join(agenticTestdata, input), Type: typ, Tokenizer: testTokenizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// bodyMessages returns a body's chat messages.
func bodyMessages(t testing.TB, body []byte) []struct{ Role, Content string } {
	t.Helper()
	var b struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Messages
}

// A folder of Weka traces with nested subagents compiles to the same bytes every time and
// at any GOMAXPROCS, and every record is the trace's node: session, agent, turn, parents
// (previous turn, spawn point, joins), ISL and OSL as written, exact under the tokenizer;
// markers are agents, not requests.
func TestWekaPlanDeterministicAndExact(t *testing.T) {
	var hashes []string
	for _, procs := range []int{1, 4, 1} {
		prev := runtime.GOMAXPROCS(procs)
		o := agenticOptions(t, "weka", dataset.TypeWeka)
		p, _ := compileOpen(t, o)
		runtime.GOMAXPROCS(prev)
		hashes = append(hashes, p.HashHex())
	}
	if hashes[0] != hashes[1] || hashes[1] != hashes[2] {
		t.Fatalf("hashes differ: %v", hashes)
	}
	o := agenticOptions(t, "weka", dataset.TypeWeka)
	p, res := compileOpen(t, o)
	if res.Mode != ModeFixedSchedule || p.Len() != 10 || !p.HasGraph() || len(p.Meta().Agents) != 5 {
		t.Fatalf("mode %s, %d records, graph %v, %d agents", res.Mode, p.Len(), p.HasGraph(), len(p.Meta().Agents))
	}
	want := []struct {
		session, agent, turn uint32
		parents              string
		isl, osl             uint32
		at                   int64
	}{
		{0, 0, 0, "", 100, 20, 0},
		{0, 0, 1, "0:turn", 140, 30, 2e9},
		{0, 1, 0, "1:spawn", 80, 10, 3.7e9},
		{0, 2, 0, "2:spawn", 40, 5, 4.4e9},
		{0, 1, 1, "2:turn", 110, 12, 4.5e9},
		{0, 3, 0, "1:spawn", 50, 8, 3.8e9},
		{0, 0, 2, "1:turn 4:join 5:join", 180, 40, 6e9},
		{0, 0, 3, "6:turn", 200, 16, 9e9},
		{1, 4, 0, "", 70, 10, 0},
		{1, 4, 1, "8:turn", 96, 10, 1e9},
	}
	tk := o.Tokenizer
	for i, w := range want {
		r, body, err := p.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		n := p.GraphNode(i)
		ps, _ := p.Edges(nil, n)
		var got []string
		for _, e := range ps {
			got = append(got, fmt.Sprintf("%d:%s", e.Record, e.Kind))
		}
		if r.Session != w.session || n.Agent != w.agent || r.Turn != w.turn || strings.Join(got, " ") != w.parents ||
			r.ISL != w.isl || r.OSL != w.osl || r.SendOffsetNs != w.at || n.Flags != mmapds.NodeStrict {
			t.Errorf("record %d: session %d agent %d turn %d parents %q isl %d osl %d at %d flags %d; want %+v",
				i, r.Session, n.Agent, r.Turn, strings.Join(got, " "), r.ISL, r.OSL, r.SendOffsetNs, n.Flags, w)
		}
		count := 0
		for _, m := range bodyMessages(t, body) {
			count += tk.Count(m.Content)
		}
		if count != int(w.isl) {
			t.Errorf("record %d: its body's messages hold %d tokens, want %d", i, count, w.isl)
		}
	}
	if a := p.Meta().Agents[2]; a.Name != "agent_2" || a.Parent != 1 || a.Depth != 2 || !a.Background {
		t.Fatalf("agent 2: %+v", a)
	}
}

// Requests sharing leading hash ids share byte-identical prompt prefixes in their bodies;
// local scope keeps traces apart, global joins them; a cache-bust marker gives every session
// its own first user text (shared by its requests), and a play of the same trace without
// one shares every body.
func TestWekaPlanPrefixes(t *testing.T) {
	user := func(p *mmapds.Plan, i int) string {
		_, body, _ := p.Record(i)
		ms := bodyMessages(t, body)
		return ms[len(ms)-1].Content
	}
	full := func(p *mmapds.Plan, i int) string {
		_, body, _ := p.Record(i)
		var b strings.Builder
		for _, m := range bodyMessages(t, body) {
			b.WriteString(m.Content)
		}
		return b.String()
	}
	g, _ := compileOpen(t, agenticOptions(t, "weka_global", ""))
	tk := testTokenizer(t)
	a, b := tk.Encode(full(g, 0)), tk.Encode(full(g, 2)) // g1 [7 8 9 10], g2 [7 8 9 12]
	if !slices.Equal(a[:48], b[:48]) || slices.Equal(a[48:64], b[48:64]) {
		t.Fatal("global scope: the shared leading blocks differ or the distinct one is shared")
	}
	if !strings.HasPrefix(full(g, 1), full(g, 0)) {
		t.Fatal("a trace's request is not a byte prefix of the next one extending its ids")
	}
	// Local: trace_a and trace_b both start with ids 1-5; their first user texts differ.
	l, _ := compileOpen(t, agenticOptions(t, "weka", dataset.TypeWeka))
	if full(l, 0)[:40] == full(l, 8)[:40] {
		t.Fatal("local scope: two traces' equal ids gave equal blocks")
	}
	// Cache-bust: two closed-loop plays of trace_b get different markers; within a play the
	// requests share it.
	o := agenticOptions(t, "weka", dataset.TypeWeka)
	o.NoFixedSchedule, o.Concurrency, o.NumSessions, o.CacheBust = true, 1, 4, "first_turn_prefix"
	o.SamplingStrategy = "sequential"
	cb, _ := compileOpen(t, o)
	var firsts []int
	for i := 0; i < cb.Len(); i++ {
		if r, _, _ := cb.Record(i); i == 0 || r.Turn == 0 && cb.GraphNode(i).Agent != cb.GraphNode(i-1).Agent && r.Session != recSession(cb, i-1) {
			firsts = append(firsts, i)
		}
	}
	if len(firsts) != 4 {
		t.Fatalf("%d sessions, want 4", len(firsts))
	}
	s1, s3 := firsts[1], firsts[3] // trace_b, played twice
	m1, m3 := user(cb, s1)[:30], user(cb, s3)[:30]
	if m1 == m3 {
		t.Fatal("two plays of one trace share their cache-bust marker")
	}
	if !strings.HasPrefix(user(cb, s1+1), m1) {
		t.Fatal("a play's second request does not carry its marker")
	}
	if r, _, _ := cb.Record(s1); r.ISL != 70+cacheBustTokens {
		t.Fatalf("ISL with a marker %d, want %d", r.ISL, 70+cacheBustTokens)
	}
	o.CacheBust = "none"
	o.Output = filepath.Join(t.TempDir(), "nb.plan")
	nb, _ := compileOpen(t, o)
	_, b1, _ := nb.Record(firsts[1])
	_, b3, _ := nb.Record(firsts[3])
	if string(b1) != string(b3) {
		t.Fatal("without cache-bust two plays of a trace differ")
	}
	// The second play sends what the first sent: offered reuse is its 70 tokens' whole
	// 16-token blocks (dataset.ReuseBlockTokens).
	if n := nb.GraphNode(firsts[3]); n.Reuse != 64 {
		t.Fatalf("second play's first request: offered reuse %d, want 64 (its whole blocks, sent before)", n.Reuse)
	}
	if n := cb.GraphNode(firsts[3]); n.Reuse != 32 { // the tool prefix (2 blocks) only
		t.Fatalf("with cache-bust: expected reuse %d, want 32", n.Reuse)
	}
}

func recSession(p *mmapds.Plan, i int) uint32 {
	r, _, _ := p.Record(i)
	return r.Session
}

// AgentX's shape: sessions in a closed loop for a duration, the first --concurrency of them
// started at a random point of their trace (what the trace recorded before it left out, the
// requests left without parents released with the first), the plan sized so that the slots
// cannot run dry before the duration at a millisecond a request.
func TestWekaTrajectoryClosedLoop(t *testing.T) {
	o := agenticOptions(t, "weka", dataset.TypeWeka)
	o.Concurrency, o.BenchmarkDuration = 2, 30
	o.TrajectoryStartMinRatio, o.TrajectoryStartMaxRatio = 0.4, 0.6
	o.CacheBust = "first_turn_prefix"
	p, res := compileOpen(t, o)
	if res.Mode != ModeConcurrency || p.Meta().DurationNs != 30e9 {
		t.Fatalf("mode %s, duration %d", res.Mode, p.Meta().DurationNs)
	}
	// Sessions: consecutive records; the first two are trimmed (fewer than their trace's).
	type sess struct{ first, n int }
	var ss []sess
	for i := 0; i < p.Len(); i++ {
		if i == 0 || recSession(p, i) != recSession(p, i-1) {
			ss = append(ss, sess{first: i})
		}
		ss[len(ss)-1].n++
	}
	if ss[0].n >= 8 || ss[1].n != 1 {
		t.Fatalf("the first sessions are not trimmed: %d and %d records", ss[0].n, ss[1].n)
	}
	// Enough sessions for 2 slots over 30 s: a whole play lasts at least its critical path
	// (think times and a millisecond a request); the two trimmed ones at most as long.
	cpA := dataset.CriticalPathNs(&o.Dataset.Conversations[0], minRequestNs)
	cpB := dataset.CriticalPathNs(&o.Dataset.Conversations[1], minRequestNs)
	planned := cpA + cpB
	for _, s := range ss[2:] {
		switch s.n {
		case 8:
			planned += cpA
		case 2:
			planned += cpB
		default:
			t.Fatalf("a later session has %d records", s.n)
		}
	}
	if planned < 2*30e9 || planned > 2*30e9+2*cpA+2*cpB {
		t.Fatalf("%d sessions planned, %d ms of lower-bound replay for 2 slots of 30 s", len(ss), planned/1e6)
	}
	// Every record is a closed-loop one (no instant), the first of each session an entry.
	for _, s := range ss {
		r, _, _ := p.Record(s.first)
		if r.SendOffsetNs != mmapds.NoSendOffset || r.DelayNs != -1 || p.GraphNode(s.first).Parents != 0 {
			t.Fatalf("session at %d: %+v", s.first, r)
		}
	}
}

// dag_jsonl compiles with live history: a FORK child's body holds its inherited
// conversation with a marker per reply, in order, and names the records whose replies fill
// them; a SPAWN child starts fresh.
func TestDAGPlanLiveForks(t *testing.T) {
	o := agenticOptions(t, "dag_branching.jsonl", "")
	if err := o.graphChecks(o.Dataset); err == nil {
		t.Fatal("dag_jsonl with compiled history was accepted")
	}
	o.ConversationHistory = "live"
	p, _ := compileOpen(t, o)
	if m := p.Meta(); m.LiveHistoryMarker != LiveHistoryMarker || m.Reproducible {
		t.Fatalf("meta %+v", m)
	}
	// Record 3 forks after 2: history = turn 0 of the planner, its reply, turn 1, its reply.
	r, body, _ := p.Record(3)
	_, sources := p.Edges(nil, p.GraphNode(3))
	if r.Flags&mmapds.FlagLiveHistory == 0 || len(sources) != 2 || sources[0].Record != 0 || sources[1].Record != 2 {
		t.Fatalf("fork record: flags %d sources %v", r.Flags, sources)
	}
	var roles []string
	for _, m := range bodyMessages(t, body) {
		c := m.Content
		if c == LiveHistoryMarker {
			c = "<reply>"
		}
		roles = append(roles, m.Role+":"+c)
	}
	want := []string{"system:You plan refactors.", "user:Plan the refactor of the config parser.", "assistant:<reply>",
		"user:Revise the plan with the critique.", "assistant:<reply>", "user:Write step one."}
	if !slices.Equal(roles, want) {
		t.Fatalf("fork body\n%s\nwant\n%s", strings.Join(roles, "\n"), strings.Join(want, "\n"))
	}
	r1, body1, _ := p.Record(1) // the spawned critic: fresh
	if r1.Flags&mmapds.FlagLiveHistory != 0 || len(bodyMessages(t, body1)) != 2 {
		t.Fatalf("spawned child: flags %d, %s", r1.Flags, body1)
	}
}

// Misuse of the agentic flags is a usage error naming the flag.
func TestAgenticOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *Options)
		want string
	}{
		{"suffix", func(o *Options) { o.CacheBust = "first_turn_suffix" }, "--cache-bust first_turn_suffix is not supported"},
		{"bad bust", func(o *Options) { o.CacheBust = "x" }, "--cache-bust must be"},
		{"ratios", func(o *Options) { o.TrajectoryStartMinRatio, o.TrajectoryStartMaxRatio = 0.5, 0.2 }, "--trajectory-start-min-ratio 0.5 is more than"},
		{"ratio range", func(o *Options) { o.TrajectoryStartMaxRatio = 1.5 }, "--trajectory-start-max-ratio 1.5"},
		{"with rate", func(o *Options) { o.TrajectoryStartMaxRatio, o.RequestRate = 1, 5 }, "exclude --request-rate"},
		{"with fixed", func(o *Options) { o.TrajectoryStartMaxRatio, o.FixedSchedule = 1, true }, "exclude --fixed-schedule"},
		{"gap cap", func(o *Options) { o.TraceIdleGapCapSeconds = -1 }, "--trace-idle-gap-cap-seconds -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := agenticOptions(t, "weka", dataset.TypeWeka)
			tc.set(&o)
			if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want %q", err, tc.want)
			}
		})
	}
	// On inputs without a graph, or without timestamps.
	o := testOptions(t)
	o.CacheBust = "first_turn_prefix"
	if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), "apply to agentic inputs") {
		t.Fatalf("cache-bust on synthetic data: %v", err)
	}
	o = agenticOptions(t, "dag_branching.jsonl", "")
	o.ConversationHistory, o.TrajectoryStartMaxRatio = "live", 1
	if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), "need a timed agentic input") {
		t.Fatalf("trajectory starts on dag_jsonl: %v", err)
	}
	o = agenticOptions(t, "weka", dataset.TypeWeka)
	o.UserCentricRate, o.NumUsers = 1, 2
	if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), "--user-centric-rate") {
		t.Fatalf("user-centric weka: %v", err)
	}
}
