package metricexpr

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

const fixtureN = 16

// Every variable holds what the request is: each metric's per-request value (the JSONL)
// equals what the fixture built, and a request without a value is skipped and counted.
func TestVariables(t *testing.T) {
	dir := t.TempDir()
	reqs := fixture(fixtureN)
	writeFixture(t, dir, reqs)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	type want func(i int, r fakeReq) (float64, bool)
	valid := func(i int, r fakeReq) bool { return r.status == 0 && !r.lost }
	cases := []struct {
		spec MetricSpec
		want want
	}{
		{MetricSpec{Name: "first", Expression: "chunks_ms[0]", Unit: "ms"}, func(i int, r fakeReq) (float64, bool) { return ms(r.arrivals()[0]), true }},
		{MetricSpec{Name: "ttft", Expression: "ttft_ms"}, func(i int, r fakeReq) (float64, bool) { return ms(r.arrivals()[0]), true }},
		{MetricSpec{Name: "third_event_ms", Expression: "chunks_ms[2]"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			if len(a) < 3 {
				return 0, false
			}
			return ms(a[2]), true
		}},
		{MetricSpec{Name: "last_gap", Expression: "gaps_ms[size(gaps_ms) - 1]"}, func(i int, r fakeReq) (float64, bool) { return 0, true }},
		{MetricSpec{Name: "first_gap", Expression: "gaps_ms[0]"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return ms(a[1] - a[0]), true
		}},
		{MetricSpec{Name: "n_reads", Expression: "size(reads)"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return float64(len(slices.Compact(a))), true
		}},
		{MetricSpec{Name: "last_read_events", Expression: "reads[size(reads) - 1]"}, func(i int, r fakeReq) (float64, bool) { return 2, true }},
		{MetricSpec{Name: "input", Expression: "isl"}, func(i int, r fakeReq) (float64, bool) { return float64(r.isl), true }},
		{MetricSpec{Name: "input_all", Expression: "isl", Failed: true}, func(i int, r fakeReq) (float64, bool) { return float64(r.isl), true }},
		{MetricSpec{Name: "status_all", Expression: "status", Failed: true}, func(i int, r fakeReq) (float64, bool) {
			if r.status != 0 {
				return float64(r.status), true
			}
			return 200, true
		}},
		{MetricSpec{Name: "prompt", Expression: "usage.prompt_tokens"}, func(i int, r fakeReq) (float64, bool) { return float64(r.isl), r.usage }},
		{MetricSpec{Name: "has_usage", Expression: "'completion_tokens' in usage ? 1 : 0"}, func(i int, r fakeReq) (float64, bool) {
			if r.usage {
				return 1, true
			}
			return 0, true
		}},
		{MetricSpec{Name: "turn_session", Expression: "turn * 1000 + session"}, func(i int, r fakeReq) (float64, bool) {
			return float64(r.turn*1000 + r.session), true
		}},
		{MetricSpec{Name: "latency", Expression: "latency_ms"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return ms(a[len(a)-1]), true
		}},
		{MetricSpec{Name: "out", Expression: "osl"}, func(i int, r fakeReq) (float64, bool) { return float64(len(r.chunksNs)), true }},
		{MetricSpec{Name: "decode_rate", Expression: "double(osl - 1) / (latency_ms - ttft_ms) * 1000.0"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return float64(len(a)-1) / ms(a[len(a)-1]-a[0]) * 1000, true
		}},
		// Numbers mix as a person writes them (#38 item 9): counts are doubles, "osl / 2" a
		// true division, an int beside a double in arithmetic, ==, ?: and orValue.
		{MetricSpec{Name: "decode_tps", Expression: "(osl - 1) / ((latency_ms - ttft_ms) / 1000.0)"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return float64(len(a)-1) / ms(a[len(a)-1]-a[0]) * 1000, true
		}},
		{MetricSpec{Name: "half_osl", Expression: "osl / 2"}, func(i int, r fakeReq) (float64, bool) { return float64(len(r.chunksNs)) / 2, true }},
		{MetricSpec{Name: "per_event_ms", Expression: "latency_ms / size(chunks_ms) + 1u - turn * 0.5"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return ms(a[len(a)-1])/float64(len(a)) + 1 - float64(r.turn)*0.5, true
		}},
		{MetricSpec{Name: "is_three", Expression: "osl == 3 || 3 != osl ? (osl == 3 ? 1 : 0) : -1"}, func(i int, r fakeReq) (float64, bool) {
			if len(r.chunksNs) == 3 {
				return 1, true
			}
			return 0, true
		}},
		{MetricSpec{Name: "small_osl", Expression: "(osl in [2, 3] ? osl : 0) + 0.5 - 0.5"}, func(i int, r fakeReq) (float64, bool) {
			if n := len(r.chunksNs); n <= 3 {
				return float64(n), true
			}
			return 0, true
		}},
		{MetricSpec{Name: "reasoning_or", Expression: "usage[?'reasoning_tokens'].orValue(0) + usage[?'prompt_tokens'].orValue(0) - isl"}, func(i int, r fakeReq) (float64, bool) {
			if r.usage {
				return 0, true
			}
			return -float64(r.isl), true
		}},
		{MetricSpec{Name: "completion_less_one", Expression: "usage.completion_tokens - 1"}, func(i int, r fakeReq) (float64, bool) { return float64(len(r.chunksNs)) - 1, r.usage }},
		{MetricSpec{Name: "gaps_per_event", Expression: "double(size(gaps_ms)) / size(chunks_ms)"}, func(i int, r fakeReq) (float64, bool) {
			return float64(len(r.chunksNs)-1) / float64(len(r.chunksNs)), true
		}},
		{MetricSpec{Name: "middle_event_ms", Expression: "chunks_ms[size(chunks_ms) - 1 - int(osl / 2)]"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return ms(a[len(a)-1-len(a)/2]), true
		}},
		{MetricSpec{Name: "offset", Expression: "send_offset_ms"}, func(i int, r fakeReq) (float64, bool) { return ms(r.sendNs), true }},
		{MetricSpec{Name: "lag", Expression: "lag_ms"}, func(i int, r fakeReq) (float64, bool) { return 0, true }},
		{MetricSpec{Name: "who", Expression: "worker * 100 + index"}, func(i int, r fakeReq) (float64, bool) { return float64(i), true }},
		{MetricSpec{Name: "second", Expression: "time_to_second_token"}, func(i int, r fakeReq) (float64, bool) {
			a := r.arrivals()
			return ms(a[1] - a[0]), true
		}},
		{MetricSpec{Name: "twice_first", Expression: "first * 2.0"}, func(i int, r fakeReq) (float64, bool) { return 2 * ms(r.arrivals()[0]), true }},
		{MetricSpec{Name: "sixth_or", Expression: "chunks_ms[?5].orValue(-1.0)"}, func(i int, r fakeReq) (float64, bool) { return -1, true }},
		{MetricSpec{Name: "ok_profile", Expression: `error == "" && valid && phase == "profile" ? 1 : 0`}, func(i int, r fakeReq) (float64, bool) { return 1, true }},
		{MetricSpec{Name: "late", Expression: "chunks_ms.filter(x, x > 15.0).size()"}, func(i int, r fakeReq) (float64, bool) {
			n := 0
			for _, a := range r.arrivals() {
				if ms(a) > 15 {
					n++
				}
			}
			return float64(n), true
		}},
	}
	reg := analyze.NewRegistry()
	var specs []MetricSpec
	for _, c := range cases {
		specs = append(specs, c.spec)
	}
	if err := Register(reg, specs); err != nil {
		t.Fatal(err)
	}
	s, recs := analyse(t, dir, reg, analyze.Options{})
	for _, c := range cases {
		var skipped int64
		n := 0
		for i, r := range reqs {
			rec := recs[i]
			if rec == nil {
				t.Fatalf("request %d: no record", i)
			}
			counted := valid(i, r) || (c.spec.Failed && !r.lost)
			w, ok := c.want(i, r)
			got, has := rec.value(c.spec.Name)
			switch {
			case !counted && has:
				t.Errorf("%s: request %d (failed or lost) has %v", c.spec.Name, i, got)
			case !counted:
			case !ok && has:
				t.Errorf("%s: request %d = %v; want no value", c.spec.Name, i, got)
			case !ok:
				skipped++
			case !has:
				t.Errorf("%s: request %d has no value; want %v", c.spec.Name, i, w)
			case math.Abs(got-w) > 1e-9*math.Max(1, math.Abs(w)):
				t.Errorf("%s: request %d = %v; want %v", c.spec.Name, i, got, w)
			default:
				n++
			}
		}
		res, found := s.Result(c.spec.Name)
		switch {
		case !found && n > 0:
			t.Errorf("%s: no result", c.spec.Name)
		case found && (res.Skipped != skipped || res.Stats.Count != int64(n)):
			t.Errorf("%s: count %d skipped %d; want %d, %d", c.spec.Name, res.Stats.Count, res.Skipped, n, skipped)
		}
	}
	if r, _ := s.Result("third_event_ms"); r == nil || r.Skipped == 0 {
		t.Fatal("the fixture has no request with fewer than 3 events: the skip is not exercised")
	}
	var note bool
	for _, x := range s.Notes {
		note = note || strings.HasPrefix(x, "metric third_event_ms: ")
	}
	if !note {
		t.Errorf("no note counts the skipped requests: %q", s.Notes)
	}
}

// --where selects the requests every count and metric is over, lost and failed ones by what
// the plan says of them; --group-by's groups hold what their requests imply.
func TestWhereGroupBy(t *testing.T) {
	dir := t.TempDir()
	reqs := fixture(fixtureN)
	writeFixture(t, dir, reqs)
	reg := analyze.NewRegistry()
	if err := Register(reg, []MetricSpec{{Name: "third_event_ms", Expression: "chunks_ms[2]", Unit: "ms"}}); err != nil {
		t.Fatal(err)
	}
	where, err := Where(reg, "isl >= 130")
	if err != nil {
		t.Fatal(err)
	}
	group, err := GroupBy(reg, `session % 3`)
	if err != nil {
		t.Fatal(err)
	}
	s, recs := analyse(t, dir, reg, analyze.Options{Where: where, GroupBy: group})
	type agg struct {
		requests, valid, errors int64
		ttft, third             []float64
	}
	groups := map[string]*agg{}
	var excluded, profile, errs int64
	for i, r := range reqs {
		if r.isl < 130 {
			excluded++
			if recs[i] != nil {
				t.Errorf("request %d (ISL %d) is in the records", i, r.isl)
			}
			continue
		}
		profile++
		if recs[i] == nil || recs[i].Metadata.Group == nil {
			t.Fatalf("request %d: no record or no group", i)
		}
		k := strconv.Itoa(int(r.session % 3))
		if *recs[i].Metadata.Group != k {
			t.Errorf("request %d: group %q; want %q", i, *recs[i].Metadata.Group, k)
		}
		g := groups[k]
		if g == nil {
			g = &agg{}
			groups[k] = g
		}
		g.requests++
		if r.status != 0 || r.lost {
			g.errors++
			errs++
			continue
		}
		g.valid++
		a := r.arrivals()
		g.ttft = append(g.ttft, float64(a[0])/1e6)
		if len(a) >= 3 {
			g.third = append(g.third, float64(a[2])/1e6)
		}
	}
	if s.Counts.Profile != profile || s.Counts.Errors != errs || s.Counts.Lost != 1 {
		t.Errorf("counts %+v; want profile %d, errors %d, lost 1", s.Counts, profile, errs)
	}
	if s.Selection == nil || s.Selection.Excluded != excluded || s.Selection.Where != "isl >= 130" || s.Selection.GroupBy != "session % 3" {
		t.Errorf("selection %+v; want %d excluded", s.Selection, excluded)
	}
	if len(s.Groups) != len(groups) {
		t.Fatalf("%d groups; want %d", len(s.Groups), len(groups))
	}
	mean := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t / float64(len(xs))
	}
	for _, g := range s.Groups {
		w := groups[g.Key]
		if g.Requests != w.requests || g.Valid != w.valid || g.Errors != w.errors {
			t.Errorf("group %s: %d requests, %d valid, %d errors; want %+v", g.Key, g.Requests, g.Valid, g.Errors, *w)
		}
		for tag, vals := range map[string][]float64{"time_to_first_token": w.ttft, "third_event_ms": w.third} {
			r, ok := g.Result(tag)
			if !ok || r.Stats.Count != int64(len(vals)) || math.Abs(r.Stats.Avg-mean(vals)) > 1e-9 {
				t.Errorf("group %s %s: %+v; want %d values averaging %v", g.Key, tag, r, len(vals), mean(vals))
			}
		}
	}
	// Keys in numeric order.
	if !slices.IsSortedFunc(s.Groups, func(a, b analyze.Group) int {
		x, _ := strconv.Atoi(a.Key)
		y, _ := strconv.Atoi(b.Key)
		return x - y
	}) {
		t.Errorf("groups out of order: %v", s.Groups)
	}
}

// A selection that gives no value for a successful request (chunks_ms[2] of a short one)
// leaves it out and counts it; a failed or lost one it keeps.
func TestWhereNoValue(t *testing.T) {
	dir := t.TempDir()
	reqs := fixture(fixtureN)
	writeFixture(t, dir, reqs)
	reg := analyze.NewRegistry()
	where, err := Where(reg, "chunks_ms[2] > 0.0")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := analyse(t, dir, reg, analyze.Options{Where: where})
	// A failed or lost request has no chunks_ms[2] either, and is kept all the same: a
	// selection never takes a failure out of the counts (#38 item 1).
	var kept, failed, none int64
	for _, r := range reqs {
		switch {
		case r.status != 0 || r.lost:
			failed++
		case len(r.chunksNs) >= 3:
			kept++
		default:
			none++
		}
	}
	if s.Counts.Profile != kept+failed || s.Counts.Valid != kept || s.Counts.Errors != failed || s.Counts.GateErrors != failed ||
		s.Selection.NoValue != none || s.Selection.Excluded != none {
		t.Errorf("counts %+v, selection %+v; want %d kept, %d failed, %d without a value", s.Counts, s.Selection, kept, failed, none)
	}
	if failed == 0 || none == 0 {
		t.Fatal("the fixture has no failed request, or no successful one without a value: nothing is exercised")
	}
	if e := analyze.CheckErrorRate(s, 0); e.OK || e.Errors != failed || e.Total != int64(len(reqs)) {
		t.Errorf("error rate %+v; want %d of %d failed, not OK", e, failed, len(reqs))
	}
}

// A bad expression is refused before anything is read, in one line naming the metric and the
// column.
func TestCompileErrors(t *testing.T) {
	cases := []struct {
		spec MetricSpec
		want string
	}{
		{MetricSpec{Name: "third", Expression: "chunk_ms[2]", From: "--metric third"}, "--metric third: column 1: undeclared reference to 'chunk_ms' (did you mean chunks_ms?)"},
		{MetricSpec{Name: "x", Expression: "ttft_ms +", From: "--metric x"}, "--metric x: column 10: Syntax error"},
		{MetricSpec{Name: "x", Expression: "ttft_ms + error", From: "--metric x"}, "--metric x: column 9: found no matching overload for '_+_' applied to '(double, string)'"},
		{MetricSpec{Name: "x", Expression: "osl % 2", From: "--metric x"}, "--metric x: column 5: found no matching overload for '_%_' applied to '(double, int)' (token counts are doubles: write int(osl) % 2)"},
		{MetricSpec{Name: "x", Expression: "ttft_ms * (size(gaps_ms) / size(reads))", From: "--metric x"}, "--metric x: column 26: a division of two ints truncates (7 / 2 is 3): write double(a) / b for a ratio"},
		{MetricSpec{Name: "x", Expression: "error", From: "--metric x"}, `--metric x: "error" gives a string; want double or int or uint`},
		{MetricSpec{Name: "x", Expression: "ttft_ms > 1", From: "--metric x"}, "gives a bool"},
		{MetricSpec{Name: "isl", Expression: "1"}, `"isl" is a variable of expressions`},
		{MetricSpec{Name: "time_to_first_token", Expression: "1"}, "is a built-in metric"},
		{MetricSpec{Name: "x", Expression: "1 +\n  nope", From: "--metrics-file m.yaml line 3: metric x"}, "--metrics-file m.yaml line 3: metric x: line 2 column 3: undeclared reference to 'nope'"},
	}
	for _, c := range cases {
		err := Register(analyze.NewRegistry(), []MetricSpec{c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line with %q", c.spec.Expression, err, c.want)
		}
	}
	// A metric may use the ones defined before it, not after.
	if err := Register(analyze.NewRegistry(), []MetricSpec{{Name: "a", Expression: "b"}, {Name: "b", Expression: "1.0"}}); err == nil ||
		!strings.Contains(err.Error(), "undeclared reference to 'b'") {
		t.Errorf("forward reference: %v", err)
	}
	if _, err := Where(analyze.NewRegistry(), "turn"); err == nil || !strings.Contains(err.Error(), `--where: "turn" gives a int; want bool`) {
		t.Errorf("--where turn: %v", err)
	}
	if _, err := GroupBy(analyze.NewRegistry(), "chunks_ms"); err == nil || !strings.Contains(err.Error(), "--group-by") {
		t.Errorf("--group-by chunks_ms: %v", err)
	}
}

// No variable shadows a per-request metric's tag, and every variable is documented.
func TestVariableNames(t *testing.T) {
	for _, v := range Variables {
		if _, ok := analyze.LookupMetric(v.Name); ok {
			t.Errorf("variable %s is a metric tag", v.Name)
		}
	}
	if _, err := env(analyze.NewRegistry()); err != nil {
		t.Fatal(err)
	}
}

// TestVariablesDocumented: docs/metrics.md's variables table has a row for every variable,
// with its type and unit.
func TestVariablesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, v := range Variables {
		row := "| `" + v.Name + "` | " + v.Type + " | " + v.Unit + " |"
		if v.Unit == "" {
			row = "| `" + v.Name + "` | " + v.Type + " | |"
		}
		if !strings.Contains(doc, row) {
			t.Errorf("docs/metrics.md has no row %q", row)
		}
	}
}
