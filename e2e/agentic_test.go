package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/endpoint"
)

// Agentic workloads end to end (issue 26): weka_trace folders and dag_jsonl files through
// plan, replay (both clients) and analyze against mockllm, every claim checked from what the
// commands wrote: the plan inspection, the per-request export, the raw logs and what the
// server received.

// agenticData is the shared example data (testdata/dataset at the module root).
func agenticData(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "dataset", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inspectNode is one node of `plan inspect --json`.
type inspectNode struct {
	Index     int    `json:"index"`
	Session   uint32 `json:"session"`
	Agent     uint32 `json:"agent"`
	AgentName string `json:"agent_name"`
	Turn      uint32 `json:"turn"`
	ISL       uint32 `json:"isl"`
	OSL       uint32 `json:"osl"`
	Parents   []struct {
		Record int    `json:"record"`
		Kind   string `json:"kind"`
	} `json:"parents"`
	Sources []int `json:"sources"`
}

func inspectNodes(t *testing.T, planPath string) []inspectNode {
	t.Helper()
	r := command(t, bin.plan, "inspect", "--json", planPath)
	if r.code != 0 {
		t.Fatalf("plan inspect: exit %d: %s", r.code, r.stderr)
	}
	var s struct {
		Nodes  []inspectNode `json:"nodes"`
		Agents []struct {
			Name string `json:"name"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	return s.Nodes
}

var shaRE = regexp.MustCompile(`sha256 ([0-9a-f]{64})`)

// agenticRecord is a line of profile_export.jsonl with the graph fields.
type agenticRecord struct {
	Metadata struct {
		RequestIndex int    `json:"request_index"`
		Start        int64  `json:"request_start_ns"`
		End          int64  `json:"request_end_ns"`
		Outcome      string `json:"outcome"`
		Agent        uint32 `json:"agent"`
		AgentDepth   int    `json:"agent_depth"`
		Parents      []struct {
			Index int    `json:"request_index"`
			Kind  string `json:"kind"`
		} `json:"parents"`
	} `json:"metadata"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func readAgenticRecords(t *testing.T, dir string) map[int]agenticRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]agenticRecord{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r agenticRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out[r.Metadata.RequestIndex] = r
	}
	return out
}

// checkCausal holds every completed request to its graph: it started only after each of
// its parents ended (previous turn, spawn point, the subagents it joins), so an agent's turns
// are in order and a parent's next request waits for its non-async subagents.
func checkCausal(t *testing.T, recs map[int]agenticRecord) (joins int) {
	t.Helper()
	for idx, r := range recs {
		if r.Metadata.Outcome != "completed" {
			continue
		}
		for _, p := range r.Metadata.Parents {
			pr, ok := recs[p.Index]
			if !ok || pr.Metadata.End <= 0 {
				t.Fatalf("request %d: parent %d has no end", idx, p.Index)
			}
			if r.Metadata.Start < pr.Metadata.End {
				t.Errorf("request %d (%s of %d) started at %d, before request %d ended at %d", idx, p.Kind, p.Index, r.Metadata.Start, p.Index, pr.Metadata.End)
			}
			if p.Kind == "join" {
				joins++
			}
		}
	}
	return joins
}

// The example Weka folder compiles deterministically; plan inspect shows every node as the
// traces say (markers are agents, not requests); replayed against mockllm by both clients,
// no request starts before what it waits for has ended, and the session metrics count the
// sessions, subagents and the parent's wait on them.
func TestAgenticWekaChain(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-m", "mock", "--streaming", "--input-file", agenticData(t, "weka"), "--custom-dataset-type", "weka_trace", "--synthesis-speedup-ratio", "20"}
	var hashes []string
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("p%d.plan", i))
		r := command(t, bin.plan, append(args, "-o", out)...)
		if r.code != 0 {
			t.Fatalf("plan: exit %d: %s", r.code, r.stderr)
		}
		hashes = append(hashes, shaRE.FindStringSubmatch(r.stdout)[1])
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("two compiles of one folder: %s and %s", hashes[0], hashes[1])
	}
	planPath := filepath.Join(dir, "p0.plan")
	nodes := inspectNodes(t, planPath)
	want := []string{
		"0 trace_a#0 [] 100/20", "0 trace_a#1 [0:turn] 140/30", "0 agent_1#0 [1:spawn] 80/10", "0 agent_2#0 [2:spawn] 40/5",
		"0 agent_1#1 [2:turn] 110/12", "0 agent_3#0 [1:spawn] 50/8", "0 trace_a#2 [1:turn 4:join 5:join] 180/40",
		"0 trace_a#3 [6:turn] 200/16", "1 trace_b#0 [] 70/10", "1 trace_b#1 [8:turn] 96/10",
	}
	var got []string
	for _, n := range nodes {
		var ps []string
		for _, p := range n.Parents {
			ps = append(ps, fmt.Sprintf("%d:%s", p.Record, p.Kind))
		}
		got = append(got, fmt.Sprintf("%d %s#%d [%s] %d/%d", n.Session, n.AgentName, n.Turn, strings.Join(ps, " "), n.ISL, n.OSL))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("plan inspect nodes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	clients := []string{"net"}
	if runtime.GOOS == "linux" {
		clients = append(clients, "loop")
	}
	srv := startMock(t, "--ttft", "15ms", "--itl", "2ms")
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			d := t.TempDir()
			run := replayInto(t, filepath.Join(d, "run"), planPath, []string{srv.URL}, "--client", client)
			out := filepath.Join(d, "out")
			if code := analyzeRun(t, run, out); code != 0 {
				t.Fatalf("analyze exit %d", code)
			}
			recs := readAgenticRecords(t, out)
			if len(recs) != 10 {
				t.Fatalf("%d records", len(recs))
			}
			if joins := checkCausal(t, recs); joins != 2 {
				t.Fatalf("%d join edges checked, want 2", joins)
			}
			if r := recs[3].Metadata; r.AgentDepth != 2 || r.Agent != 2 {
				t.Fatalf("the nested subagent's record: %+v", r)
			}
			s := readSummary(t, out)
			var own struct {
				Sessions struct {
					Count, Completed int
					Subagents        stat `json:"session_subagents"`
					Depth            stat `json:"session_subagent_depth"`
					Wait             stat `json:"parent_wait_on_children"`
				} `json:"sessions"`
			}
			json.Unmarshal(s["llmbench"], &own)
			var branch map[string]int
			json.Unmarshal(s["branch_stats"], &branch)
			ss := own.Sessions
			if ss.Count != 2 || ss.Completed != 2 || *ss.Subagents.Max != 3 || *ss.Depth.Max != 2 || ss.Wait.Count == nil || *ss.Wait.Count != 1 {
				t.Fatalf("sessions %+v", ss)
			}
			if branch["children_spawned"] != 3 || branch["children_completed"] != 3 {
				t.Fatalf("branch_stats %v", branch)
			}
		})
	}
}

// recorder is a reverse proxy in front of mockllm that keeps every request body.
type recorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, string(b))
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// chatMessages decodes a chat body's messages.
func chatMessages(t *testing.T, body string) []struct{ Role, Content string } {
	t.Helper()
	var b struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return b.Messages
}

// replyText is the content text of a streamed chat response, as the raw log holds it.
func replyText(t *testing.T, stream string) string {
	t.Helper()
	ep, err := endpoint.Lookup("chat")
	if err != nil {
		t.Fatal(err)
	}
	var sc endpoint.SSEScanner
	var d endpoint.Delta
	sc.Feed([]byte(stream), 0)
	for ev, ok := sc.Next(); ok; ev, ok = sc.Next() {
		ep.ParseEvent(ev.Data, &d)
	}
	return string(d.Content)
}

// dag_jsonl: a FORK child's body carries its parent's actual reply (what the server
// streamed, read from the raw log), a later turn its own conversation's, a SPAWN child starts
// fresh; the parent's next turn waits for the spawned child; both clients.
func TestAgenticDAGForks(t *testing.T) {
	dir := t.TempDir()
	planPath := compile(t, dir, "-m", "mock", "--streaming", "--input-file", agenticData(t, "dag_branching.jsonl"), "--custom-dataset-type", "dag_jsonl", "--concurrency", "1")
	srv := startMock(t, "--ttft", "5ms", "--itl", "1ms")
	clients := []string{"net"}
	if runtime.GOOS == "linux" {
		clients = append(clients, "loop")
	}
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			rec := newRecorder(t, srv.URL)
			d := t.TempDir()
			run := replayInto(t, filepath.Join(d, "run"), planPath, []string{rec.URL}, "--client", client)
			_, raws := readRaw(t, run, planPath)
			reply := map[uint32]string{}
			for _, r := range raws {
				reply[r.index] = replyText(t, r.body)
				if reply[r.index] == "" {
					t.Fatalf("request %d: no reply text in %q", r.index, r.body)
				}
			}
			sent := map[string][]struct{ Role, Content string }{} // by the body's last user text
			rec.mu.Lock()
			for _, b := range rec.bodies {
				if b == "" {
					continue // the readiness probe
				}
				ms := chatMessages(t, b)
				sent[ms[len(ms)-1].Content] = ms
			}
			rec.mu.Unlock()
			// Records: 0 planner turn 0, 1 critic (spawned), 2 planner turn 1, 3 impl-a 0,
			// 4 impl-a 1, 5 impl-b 0 (dag_branching.jsonl).
			check := func(last string, want []string) {
				t.Helper()
				ms, ok := sent[last]
				if !ok {
					t.Fatalf("no body ended with %q", last)
				}
				var got []string
				for _, m := range ms {
					got = append(got, m.Role+": "+m.Content)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("body ending with %q:\n%s\nwant\n%s", last, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			sys, u0, u1 := "system: You plan refactors.", "user: Plan the refactor of the config parser.", "user: Revise the plan with the critique."
			check("Revise the plan with the critique.", []string{sys, u0, "assistant: " + reply[0], u1})
			check("Write step one.", []string{sys, u0, "assistant: " + reply[0], u1, "assistant: " + reply[2], "user: Write step one."})
			check("Now step two.", []string{sys, u0, "assistant: " + reply[0], u1, "assistant: " + reply[2], "user: Write step one.", "assistant: " + reply[3], "user: Now step two."})
			check("Write the tests first.", []string{sys, u0, "assistant: " + reply[0], u1, "assistant: " + reply[2], "user: Write the tests first."})
			check("List three risks of a config parser refactor.", []string{"system: You review plans.", "user: List three risks of a config parser refactor."})
			out := filepath.Join(d, "out")
			if code := analyzeRun(t, run, out); code != 0 {
				t.Fatalf("analyze exit %d", code)
			}
			if joins := checkCausal(t, readAgenticRecords(t, out)); joins != 1 {
				t.Fatalf("%d joins", joins)
			}
		})
	}
}

// A failed request's descendants are not sent, each naming it, and counted as not sent (and
// as skipped in the session metrics), never as lost; the rest of the run goes on.
func TestAgenticFailedNodeSkipsDescendants(t *testing.T) {
	dir := t.TempDir()
	planPath := compile(t, dir, "-m", "mock", "--streaming", "--input-file", agenticData(t, "weka"), "--custom-dataset-type", "weka_trace",
		"--no-fixed-schedule", "--concurrency", "2", "--num-sessions", "6", "--dataset-sampling-strategy", "sequential")
	srv := startMock(t, "--ttft", "5ms", "--itl", "1ms", "--error-rate", "0.2", "--seed", "3")
	run := replayPlan(t, dir, planPath, []string{srv.URL})
	out := filepath.Join(dir, "out")
	if code := analyzeRun(t, run, out); code != 1 {
		t.Fatalf("analyze exit %d, want 1 (failed requests)", code)
	}
	recs := readAgenticRecords(t, out)
	nodes := inspectNodes(t, planPath)
	failed := map[int]bool{}
	for i, r := range recs {
		if r.Metadata.Outcome == "failed" || r.Metadata.Outcome == "completed" && r.Error != nil {
			failed[i] = true
		}
	}
	if len(failed) == 0 {
		t.Fatal("no request failed: the test proves nothing")
	}
	// Every request below a failed one (transitively) is not sent, naming a failed one.
	blocked := map[int]bool{}
	skipped := 0
	for _, n := range nodes {
		for _, p := range n.Parents {
			if failed[p.Record] || blocked[p.Record] {
				blocked[n.Index] = true
			}
		}
		r := recs[n.Index]
		if !blocked[n.Index] {
			if r.Metadata.Outcome == "not_sent" {
				t.Errorf("request %d not sent though nothing it depends on failed: %+v", n.Index, r.Error)
			}
			continue
		}
		skipped++
		m := regexp.MustCompile(`^not sent: request (\d+), which it depends on, did not complete$`).FindStringSubmatch(r.Error.Message)
		if r.Metadata.Outcome != "not_sent" || m == nil {
			t.Fatalf("request %d below a failed one: outcome %s, error %+v", n.Index, r.Metadata.Outcome, r.Error)
		}
		var f int
		fmt.Sscan(m[1], &f)
		if !failed[f] {
			t.Fatalf("request %d names request %d, which did not fail", n.Index, f)
		}
	}
	if skipped == 0 {
		t.Fatal("no failed request had descendants: the test proves nothing")
	}
	s := readSummary(t, out)
	var own struct {
		Counts struct {
			Lost    int64 `json:"lost"`
			NotSent int64 `json:"not_sent"`
		} `json:"counts"`
		Sessions struct {
			Skipped int `json:"skipped_requests"`
			Failed  int `json:"failed"`
		} `json:"sessions"`
	}
	json.Unmarshal(s["llmbench"], &own)
	if own.Counts.Lost != 0 || int(own.Counts.NotSent) != skipped || own.Sessions.Skipped != skipped || own.Sessions.Failed == 0 {
		t.Fatalf("counts %+v, sessions %+v; %d skipped", own.Counts, own.Sessions, skipped)
	}
}

// AgentX's shape with profile: sessions in a closed loop for a duration, the first ones at
// random trajectory starts, idle gaps capped, cache-bust markers; the run ends clean with the
// session metrics, branch_stats, the prefix reuse the workload offered next to the server's
// hit rate (global scope: traces share blocks), and the report.
func TestAgenticProfileAgentXShape(t *testing.T) {
	dir := t.TempDir()
	srv := startMock(t, "--ttft", "5ms", "--itl", "1ms")
	out := filepath.Join(dir, "art")
	r := command(t, bin.profile, "-m", "mock", "--streaming", "--url", srv.URL, "--no-gpu-telemetry", "--output-dir", out,
		"--input-file", agenticData(t, "weka_global"), "--custom-dataset-type", "weka_trace",
		"--concurrency", "2", "--benchmark-duration", "3", "--trajectory-start-min-ratio", "0", "--trajectory-start-max-ratio", "1",
		"--trace-idle-gap-cap-seconds", "0.2", "--cache-bust", "first_turn_prefix")
	if r.code != 0 {
		t.Fatalf("profile: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Sessions: ") || !strings.Contains(r.stdout, "Prefix reuse: the workload offered") {
		t.Fatalf("the console has no session lines:\n%s", r.stdout)
	}
	s := readSummary(t, out)
	var own struct {
		Sessions struct {
			Count int `json:"count"`
			Reuse struct {
				Expected float64  `json:"expected_hit_rate"`
				Server   *float64 `json:"server_hit_rate"`
			} `json:"prefix_reuse"`
		} `json:"sessions"`
	}
	json.Unmarshal(s["llmbench"], &own)
	if own.Sessions.Count < 4 || own.Sessions.Reuse.Server == nil || own.Sessions.Reuse.Expected <= 0 {
		t.Fatalf("sessions %+v", own.Sessions)
	}
	if _, ok := s["branch_stats"]; !ok {
		t.Fatal("no branch_stats")
	}
	// The CSV has them too: the distributions, then the counts and branch_stats by their JSON names.
	csvb, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\r\nSession Metric,avg,", "\r\nSession Latency (ms),", "\r\nRequests per Session,", "\r\nchildren_spawned,", "\r\nexpected_hit_rate,0."} {
		if !bytes.Contains(csvb, []byte(want)) {
			t.Fatalf("profile_export_aiperf.csv has no %q:\n%s", want, csvb)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !bytes.Contains(b, []byte(`"sessions":{`)) {
		t.Fatalf("report.html without sessions: %v", err)
	}
}
