package columnar_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/columnar"
	"github.com/llmbench/llmbench/metricexpr"
	"github.com/llmbench/llmbench/tokenizer"
)

// The DuckDB test reads the Parquet files back with DuckDB's own reader (npm's
// @duckdb/node-api, run by node), independent of the library that wrote them. The package
// is looked for in $LLMBENCH_DUCKDB_NODE_MODULES, else the repository's .ci/duckdb (where
// .ci/run installs it); when it is missing the test installs it there with npm. Outside CI
// the test skips, saying why, only when node or the package cannot be had; in CI (CI=true)
// that is a failure.

// compatRun is a run recorded by an older release (testdata/compat/README.md).
const (
	compatRun  = "../testdata/compat/c38cabb/run"
	compatPlan = "../testdata/compat/c38cabb/old.plan"
)

func duckdbModules(t *testing.T) (node, api string) {
	t.Helper()
	unavailable := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: CI must read the Parquet files back with DuckDB (.ci/run installs node, npm and @duckdb/node-api)", why)
		}
		t.Skipf("%s: the DuckDB read-back is skipped (.ci/run installs what it needs; CI=true makes this a failure)", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed (apt-get install nodejs npm)")
	}
	dir := os.Getenv("LLMBENCH_DUCKDB_NODE_MODULES")
	if dir == "" {
		root, err := filepath.Abs("../.ci/duckdb/node_modules")
		if err != nil {
			t.Fatal(err)
		}
		dir = root
	}
	api = filepath.Join(dir, "@duckdb", "node-api")
	if _, err := os.Stat(filepath.Join(api, "package.json")); err == nil {
		return node, api
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable("@duckdb/node-api is not in " + dir + " and npm is not installed")
	}
	out, err := exec.Command(npm, "install", "--prefix", filepath.Dir(dir), "--no-audit", "--no-fund", "--no-save", "@duckdb/node-api@1.5.6-r.1").CombinedOutput()
	if err != nil {
		unavailable("npm could not install @duckdb/node-api into " + dir + ": " + lastLine(out))
	}
	return node, api
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// duckdbScript loads @duckdb/node-api from argv[1], runs each query of argv[2..] and prints each
// result's rows as one JSON line (DuckDB's JSON row objects: big integers as strings).
const duckdbScript = `
const { DuckDBInstance } = require(process.argv[1]);
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  for (const q of process.argv.slice(2)) {
    const r = await c.runAndReadAll(q);
    console.log(JSON.stringify(r.getRowObjectsJson()));
  }
})().catch((e) => { console.error(String(e)); process.exit(1); });
`

func loadTokenizer(spec string) (analyze.TokenCounter, error) {
	t, err := tokenizer.Load(spec)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// analyse analyses the compat run with a user metric and a grouping, writing the Parquet
// files and the AIPerf JSON and the JSONL into dir.
func analyse(t *testing.T, dir string) *analyze.Summary {
	t.Helper()
	reg := analyze.NewRegistry()
	if err := metricexpr.Register(reg, []metricexpr.MetricSpec{{Name: "third_event_ms", Expression: "chunks_ms[2]", Unit: "ms"}}); err != nil {
		t.Fatal(err)
	}
	group, err := metricexpr.GroupBy(reg, "turn")
	if err != nil {
		t.Fatal(err)
	}
	files := columnar.New(dir, reg, true)
	jsonl, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{compatRun}, PlanPath: compatPlan, TempDir: dir, Metrics: reg, GroupBy: group, Rows: files.Part, LoadTokenizer: loadTokenizer}, jsonl)
	jsonl.Close()
	if err != nil {
		files.Remove()
		t.Fatal(err)
	}
	if err := files.Finish(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := output.WriteAIPerfJSON(f, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDuckDBReadsParquet: DuckDB counts as many request rows as the JSON export has
// requests, the same TTFT and user-metric averages, and one chunk row per content event the
// JSONL says each request had; the lists and the group column read back as written.
func TestDuckDBReadsParquet(t *testing.T) {
	node, api := duckdbModules(t)
	dir := t.TempDir()
	analyse(t, dir)
	var summary map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	stat := func(tag, st string) float64 {
		m, ok := summary[tag].(map[string]any)
		if !ok {
			t.Fatalf("the JSON export has no %s", tag)
		}
		return m[st].(float64)
	}
	// The JSONL, read independently: content events per request and its group.
	events, requests := 0, 0
	jf, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer jf.Close()
	sc := bufio.NewScanner(jf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				ContentEvents int `json:"content_events"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		events += rec.Metadata.ContentEvents
		requests++
	}
	req, chk := filepath.Join(dir, columnar.FileRequests), filepath.Join(dir, columnar.FileChunks)
	queries := []string{
		"SELECT count(*) AS n, avg(time_to_first_token) AS ttft, avg(ttft_ms) AS ttft2, avg(third_event_ms) AS third, avg(chunks_ms[3]) AS third2, " +
			"sum(len(chunks_ms)) AS listed, sum(list_sum(reads)) AS inreads, count(*) FILTER (WHERE chunks_ms[1] <> ttft_ms) AS ttft_not_first FROM read_parquet('" + req + "')",
		"SELECT count(*) AS n, count(*) FILTER (WHERE index = 0) AS firsts, count(gap_ms) AS gaps FROM read_parquet('" + chk + "')",
		"SELECT \"group\" AS g, count(*) AS n, avg(third_event_ms) AS third FROM read_parquet('" + req + "') GROUP BY ALL ORDER BY g",
	}
	cmd := exec.Command(node, append([]string{"-e", duckdbScript, "--", api}, queries...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(queries) {
		t.Fatalf("DuckDB printed %d results for %d queries: %s", len(lines), len(queries), out)
	}
	var res [][]map[string]any
	for _, l := range lines {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(l), &rows); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		res = append(res, rows)
	}
	num := func(v any) float64 {
		switch x := v.(type) {
		case float64:
			return x
		case string: // DuckDB's JSON gives BIGINT and HUGEINT as strings
			var f float64
			if err := json.Unmarshal([]byte(x), &f); err != nil {
				t.Fatalf("not a number: %q", x)
			}
			return f
		}
		t.Fatalf("not a number: %#v", v)
		return 0
	}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: DuckDB %v, want %v", what, got, want)
		}
	}
	r := res[0][0]
	if n := num(r["n"]); n != stat("request_count", "avg") || int(n) != requests {
		t.Errorf("requests.parquet: %v rows; the JSON export has request_count %v, the JSONL %d records", n, stat("request_count", "avg"), requests)
	}
	close("avg(time_to_first_token)", num(r["ttft"]), stat("time_to_first_token", "avg"))
	close("avg(ttft_ms)", num(r["ttft2"]), stat("time_to_first_token", "avg"))
	close("avg(third_event_ms)", num(r["third"]), stat("third_event_ms", "avg"))
	close("avg(chunks_ms[3])", num(r["third2"]), stat("third_event_ms", "avg"))
	if num(r["ttft_not_first"]) != 0 {
		t.Errorf("%v requests have chunks_ms[0] != ttft_ms", r["ttft_not_first"])
	}
	c := res[1][0]
	if int(num(c["n"])) != events || int(num(r["listed"])) != events || int(num(r["inreads"])) != events {
		t.Errorf("chunks.parquet has %v rows, requests.parquet lists %v chunks and %v in reads; the JSONL says %d content events", c["n"], r["listed"], r["inreads"], events)
	}
	if num(c["firsts"]) != num(r["n"]) || num(c["gaps"]) != num(c["n"])-num(c["firsts"]) {
		t.Errorf("chunks.parquet: %v first events and %v gaps for %v rows and %v requests", c["firsts"], c["gaps"], c["n"], r["n"])
	}
	// The groups: the same requests and averages as the JSON export's groups.
	groups, _ := summary["llmbench"].(map[string]any)["groups"].([]any)
	if len(groups) != len(res[2]) || len(groups) < 2 {
		t.Fatalf("DuckDB found %d groups, the JSON export %d: %v", len(res[2]), len(groups), res[2])
	}
	for i, g := range res[2] {
		jg := groups[i].(map[string]any)
		if g["g"] != jg["key"] {
			t.Errorf("group %d: DuckDB %v, JSON %v", i, g["g"], jg["key"])
			continue
		}
		third := jg["metrics"].(map[string]any)["third_event_ms"].(map[string]any)
		close("group "+jg["key"].(string)+" avg(third_event_ms)", num(g["third"]), third["avg"].(float64))
	}
}

// runDuckDB runs the queries and returns each one's rows.
func runDuckDB(t *testing.T, node, api string, queries ...string) [][]map[string]any {
	t.Helper()
	cmd := exec.Command(node, append([]string{"-e", duckdbScript, "--", api}, queries...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	var res [][]map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(l), &rows); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		res = append(res, rows)
	}
	if len(res) != len(queries) {
		t.Fatalf("%d results for %d queries", len(res), len(queries))
	}
	return res
}

// TestParquetNullsAndOrder: what a request does not have is null (an instant, a metric, the
// group of an ungrouped request), a request without content events has empty lists and no
// chunk row, and the rows are in part order whatever order the parts were written in.
func TestParquetNullsAndOrder(t *testing.T) {
	node, api := duckdbModules(t)
	dir := t.TempDir()
	reg := analyze.NewRegistry()
	if err := metricexpr.Register(reg, []metricexpr.MetricSpec{{Name: "third_event_ms", Expression: "chunks_ms[2]"}}); err != nil {
		t.Fatal(err)
	}
	f := columnar.New(dir, reg, true)
	n := len(reg.RowMetrics())
	row := func(idx uint32, valid bool, chunks []analyze.Chunk, group string, grouped bool) *analyze.RequestRow {
		r := &analyze.RequestRow{Index: idx, Worker: int(idx % 2), Phase: "profile", Valid: valid, Status: 200, Outcome: "completed",
			IntendedUnixNs: -1, ReadyUnixNs: 100, WriteStartUnixNs: 1000, WriteEndUnixNs: 1100, HeaderUnixNs: -1, FirstByteUnixNs: -1,
			FirstContentUnixNs: -1, LastContentUnixNs: -1, EndUnixNs: 5000, IntendedNs: -1, InputTokens: 7,
			Group: group, Grouped: grouped, Values: make([]float64, n), Has: make([]bool, n), Chunks: chunks}
		if !valid {
			r.Status, r.ErrorKind, r.ErrorMessage, r.Outcome = 500, "http_500", "boom", "http_error"
		}
		r.Values[n-1], r.Has[n-1] = float64(idx)+0.5, valid
		return r
	}
	ch := func(at ...int64) []analyze.Chunk {
		var out []analyze.Chunk
		for i, a := range at {
			out = append(out, analyze.Chunk{ArrivalUnixNs: 1000 + a, SinceWriteNs: a, Read: i / 2, SameRead: i%2 == 1, Tokens: 1})
		}
		return out
	}
	// Part 1 is asked for and written before part 0, as the logs' goroutines may.
	p1, err := f.Part(1)
	if err != nil {
		t.Fatal(err)
	}
	p0, err := f.Part(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		sink analyze.RowSink
		r    *analyze.RequestRow
	}{
		{p1, row(10, true, ch(2e6, 3e6, 3e6), "b", true)},
		{p1, row(11, false, nil, "", false)},
		{p0, row(1, true, ch(1e6, 2e6, 4e6, 4e6), "a", true)},
	} {
		if err := w.sink.Row(w.r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("part files left behind: %v", left)
	}
	req, chk := filepath.Join(dir, columnar.FileRequests), filepath.Join(dir, columnar.FileChunks)
	res := runDuckDB(t, node, api,
		"SELECT request_index AS i, \"group\" AS g, third_event_ms AS m, intended_unix_ns AS intended, write_start_unix_ns AS ws, error AS e, status AS s, "+
			"len(chunks_ms) AS nc, len(gaps_ms) AS ng, len(reads) AS nr, reads[1] AS r1, gaps_ms[2] AS g2, isl, send_offset_ms AS so FROM read_parquet('"+req+"')",
		"SELECT request_index AS i, index AS k, since_write_ms AS ms, gap_ms AS gap, read AS rd, same_read AS sr FROM read_parquet('"+chk+"')")
	want := []string{
		`{"e":"","g":"a","g2":2,"i":"1","intended":null,"isl":7,"m":1.5,"nc":"4","ng":"3","nr":"2","r1":2,"s":200,"so":null,"ws":"1000"}`,
		`{"e":"","g":"b","g2":0,"i":"10","intended":null,"isl":7,"m":10.5,"nc":"3","ng":"2","nr":"2","r1":2,"s":200,"so":null,"ws":"1000"}`,
		`{"e":"http_500","g":null,"g2":null,"i":"11","intended":null,"isl":7,"m":null,"nc":"0","ng":"0","nr":"0","r1":null,"s":500,"so":null,"ws":"1000"}`,
	}
	for i, r := range res[0] {
		b, _ := json.Marshal(r)
		if i >= len(want) || string(b) != want[i] {
			t.Errorf("request row %d: %s", i, b)
		}
	}
	if len(res[0]) != len(want) {
		t.Errorf("%d request rows, want %d", len(res[0]), len(want))
	}
	if len(res[1]) != 7 {
		t.Fatalf("%d chunk rows, want 7: %v", len(res[1]), res[1])
	}
	if b, _ := json.Marshal(res[1][0]); string(b) != `{"gap":null,"i":"1","k":0,"ms":1,"rd":0,"sr":false}` {
		t.Errorf("first chunk row %s", b)
	}
	if b, _ := json.Marshal(res[1][6]); string(b) != `{"gap":0,"i":"10","k":2,"ms":3,"rd":1,"sr":false}` {
		t.Errorf("last chunk row %s", b)
	}
}
