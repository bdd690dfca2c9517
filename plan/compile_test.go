package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/tokenizer"
)

var (
	tokOnce sync.Once
	tok     *tokenizer.Tokenizer
	tokErr  error
)

func testTokenizer(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	tokOnce.Do(func() { tok, tokErr = tokenizer.Builtin() })
	if tokErr != nil {
		t.Fatal(tokErr)
	}
	return tok
}

// testOptions are small, fast options: short prompts, few entries.
func testOptions(t testing.TB) Options {
	o := DefaultOptions()
	o.Model = "mock"
	o.Tokenizer = testTokenizer(t)
	o.Output = filepath.Join(t.TempDir(), "test.plan")
	o.ISLMean, o.OSLMean = 32, 16
	o.NumDatasetEntries = 20
	return o
}

func compileOpen(t testing.TB, o Options) (*mmapds.Plan, *Result) {
	t.Helper()
	res, err := Compile(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mmapds.Open(o.Output, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p, res
}

func records(t testing.TB, p *mmapds.Plan) []mmapds.Record {
	t.Helper()
	out := make([]mmapds.Record, p.Len())
	for i := range out {
		r, _, err := p.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r
	}
	return out
}

// richOptions exercise every component that draws random numbers.
func richOptions(t testing.TB) Options {
	o := testOptions(t)
	o.ISLStddev, o.OSLStddev = 8, 4
	o.ConversationTurnMean, o.ConversationTurnStddev = 2, 1
	o.ConversationTurnDelayMean, o.ConversationTurnDelayStddev = 100, 20
	o.SharedSystemPromptLength, o.UserContextPromptLength = 12, 6
	o.RequestRate, o.ArrivalPattern, o.ArrivalSmoothness = 20, "gamma", 0.5
	o.RequestRateRampDuration = 2
	o.Concurrency = 4
	o.RequestCount, o.WarmupRequestCount = 200, 5
	o.RequestCancellationRate, o.RequestCancellationDelay = 10, 0.5
	o.ExtraInputs = map[string]any{"ignore_eos": true, "min_tokens": json.Number("4")}
	o.Spec = map[string]any{"request-rate": 20.0, "model": "mock"}
	return o
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var files [][]byte
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		o := richOptions(t)
		if _, err := Compile(o); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(o.Output)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for i := 1; i < len(files); i++ {
		if !bytes.Equal(files[0], files[i]) {
			t.Fatalf("GOMAXPROCS run %d wrote a different file than run 0", i)
		}
	}
}

func TestSeedChangesHash(t *testing.T) {
	o := richOptions(t)
	a, err := Compile(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed = 1
	c, err := Compile(o)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash != b.Hash {
		t.Fatal("same options gave different hashes")
	}
	if a.Hash == c.Hash {
		t.Fatal("a different seed gave the same hash")
	}
}

func firstTurnGaps(t *testing.T, p *mmapds.Plan) []float64 {
	var gaps []float64
	prev := int64(-1)
	for _, r := range records(t, p) {
		if r.Turn != 0 || r.Phase != mmapds.PhaseProfile {
			continue
		}
		if prev >= 0 {
			gaps = append(gaps, float64(r.SendOffsetNs-prev))
		}
		prev = r.SendOffsetNs
	}
	return gaps
}

func meanSD(v []float64) (float64, float64) {
	var s, q float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	for _, x := range v {
		q += (x - m) * (x - m)
	}
	return m, math.Sqrt(q / float64(len(v)))
}

func TestArrivalGaps(t *testing.T) {
	cases := []struct {
		pattern    string
		smoothness float64
		wantCV     float64 // coefficient of variation of the gaps
		tol        float64 // on the mean gap: about 3 standard errors, CV/sqrt(n)
	}{
		{"poisson", 1, 1, 0.03},
		{"constant", 1, 0, 0.03},
		{"gamma", 4, 0.5, 0.03},
		{"gamma", 0.25, 2, 0.07},
	}
	for _, c := range cases {
		for seed := uint64(0); seed < 3; seed++ {
			o := testOptions(t)
			o.RequestRate, o.ArrivalPattern, o.ArrivalSmoothness = 50, c.pattern, c.smoothness
			o.RequestCount, o.Seed = 10000, seed
			p, _ := compileOpen(t, o)
			gaps := firstTurnGaps(t, p)
			if len(gaps) != 9999 {
				t.Fatalf("%d gaps", len(gaps))
			}
			m, sd := meanSD(gaps)
			if math.Abs(m-20e6) > c.tol*20e6 {
				t.Errorf("%s(%v) seed %d: mean gap %.3f ms, want 20 ms ± %v%%", c.pattern, c.smoothness, seed, m/1e6, c.tol*100)
			}
			if cv := sd / m; math.Abs(cv-c.wantCV) > 0.1*math.Max(c.wantCV, 0.01) {
				t.Errorf("%s(%v) seed %d: gap CV %.3f, want %.3f", c.pattern, c.smoothness, seed, cv, c.wantCV)
			}
		}
	}
}

func TestRateRampAndDuration(t *testing.T) {
	o := testOptions(t)
	o.RequestRate, o.ArrivalPattern = 100, "constant"
	o.RequestRateRampDuration = 10
	o.BenchmarkDuration = 20
	p, _ := compileOpen(t, o)
	rs := records(t, p)
	// Expected arrivals: ∫ rate = 100·(0.1·Σ_{k=1..100} k·0.1/10) over the ramp = 505, then 100/s.
	inRamp := 0
	for _, r := range rs {
		if r.SendOffsetNs >= 20e9 {
			t.Fatalf("instant %d past --benchmark-duration", r.SendOffsetNs)
		}
		if r.SendOffsetNs < 10e9 {
			inRamp++
		}
	}
	if inRamp < 504 || inRamp > 506 {
		t.Errorf("%d arrivals during the ramp, want 505±1", inRamp)
	}
	if n := len(rs) - inRamp; n < 999 || n > 1001 {
		t.Errorf("%d arrivals after the ramp, want 1000±1", n)
	}
	// After the ramp constant arrivals are exactly 10 ms apart.
	gaps := firstTurnGaps(t, p)
	for _, g := range gaps[len(gaps)-100:] {
		if math.Abs(g-10e6) > 1 {
			t.Fatalf("gap %v ns after the ramp, want 10 ms", g)
		}
	}
	if p.Meta().DurationNs != 20e9 || p.Meta().TimingMode != ModeRequestRate || p.Meta().OfferedRate != 100 {
		t.Errorf("meta %+v", p.Meta())
	}
}

func TestClosedLoopDefaults(t *testing.T) {
	cases := []struct {
		concurrency, wantCount, wantConc int
	}{
		{0, 10, 1}, // AIPerf: concurrency 1, max(10, 2·c) requests
		{8, 16, 8},
		{20, 40, 20},
	}
	for _, c := range cases {
		o := testOptions(t)
		o.Concurrency = c.concurrency
		p, res := compileOpen(t, o)
		if p.Len() != c.wantCount || res.Mode != ModeConcurrency || p.Meta().Concurrency != c.wantConc {
			t.Errorf("concurrency %d: %d requests, mode %s, meta concurrency %d", c.concurrency, p.Len(), res.Mode, p.Meta().Concurrency)
		}
		for _, r := range records(t, p) {
			if r.SendOffsetNs != mmapds.NoSendOffset || r.DelayNs != -1 {
				t.Fatalf("closed-loop record %+v has an instant", r)
			}
		}
	}
}

// bodyText returns all text a body sends, joined by a space (the ISL definition).
func bodyText(t *testing.T, body []byte, marker string) string {
	t.Helper()
	var b struct {
		Messages []struct{ Role, Content string }
		Prompt   *string
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if b.Prompt != nil {
		return *b.Prompt
	}
	var parts []string
	for _, m := range b.Messages {
		if m.Content != marker || marker == "" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, " ")
}

func TestISLRetokenizes(t *testing.T) {
	cases := map[string]func(*Options){
		"single turn": func(o *Options) { o.ISLStddev = 10 },
		"completions": func(o *Options) { o.EndpointType = "completions"; o.ISLStddev = 10 },
		"system and context, multi-turn": func(o *Options) {
			o.SharedSystemPromptLength, o.UserContextPromptLength = 20, 10
			o.ConversationTurnMean = 3
		},
		"prefix pool":       func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength = 3, 15 },
		"range ratio":       func(o *Options) { o.RandomRangeRatio, o.RandomRangeRatioMode = 0.5, "sglang" },
		"seq dist":          func(o *Options) { o.SeqDist = "16,8:50;64|4,16:50" },
		"multi-turn compl.": func(o *Options) { o.EndpointType = "completions"; o.ConversationTurnMean = 3 },
		"unset osl history": func(o *Options) { o.OSLMean = 0; o.ConversationTurnMean = 2 },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			o := testOptions(t)
			o.RequestCount = 60
			mut(&o)
			p, _ := compileOpen(t, o)
			tok := testTokenizer(t)
			for i := range p.Len() {
				r, body, _ := p.Record(i)
				if got := tok.Count(bodyText(t, body, "")); got != int(r.ISL) {
					t.Fatalf("record %d: body text has %d tokens, recorded ISL %d", i, got, r.ISL)
				}
			}
		})
	}
}

func TestSyntheticPromptsExact(t *testing.T) {
	o := testOptions(t)
	o.ISLMean, o.ISLStddev = 200, 0
	o.RequestCount = 50
	p, _ := compileOpen(t, o)
	for _, r := range records(t, p) {
		if r.ISL != 200 {
			t.Fatalf("ISL %d, want exactly 200", r.ISL)
		}
	}
}

func TestMultiTurnCompiledHistory(t *testing.T) {
	o := testOptions(t)
	o.ConversationTurnMean = 3
	o.ConversationTurnDelayMean, o.ConversationTurnDelayRatio = 250, 2
	o.SharedSystemPromptLength = 8
	o.Concurrency = 2
	o.RequestCount = 30
	p, _ := compileOpen(t, o)
	tok := testTokenizer(t)
	var prevOSL uint32
	for i := range p.Len() {
		r, body, _ := p.Record(i)
		var b struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		if want := 2 + 2*int(r.Turn); len(b.Messages) != want {
			t.Fatalf("record %d turn %d: %d messages, want %d", i, r.Turn, len(b.Messages), want)
		}
		if b.Messages[0].Role != "system" {
			t.Fatalf("record %d: first message %q", i, b.Messages[0].Role)
		}
		if r.Turn == 0 {
			if r.DelayNs != -1 || r.SendOffsetNs != mmapds.NoSendOffset {
				t.Fatalf("first turn %+v", r)
			}
		} else {
			prev, _, _ := p.Record(i - 1)
			if prev.Session != r.Session || prev.Turn != r.Turn-1 {
				t.Fatalf("record %d: turns of a session are not consecutive", i)
			}
			if r.DelayNs != 500e6 || r.SendOffsetNs != mmapds.NoSendOffset {
				t.Fatalf("later turn %+v: want delay 500 ms and no instant", r)
			}
			reply := b.Messages[len(b.Messages)-2]
			if reply.Role != "assistant" || tok.Count(reply.Content) != int(prevOSL) {
				t.Fatalf("record %d: reply %q has %d tokens, want the previous OSL %d", i, reply.Role, tok.Count(reply.Content), prevOSL)
			}
		}
		prevOSL = r.OSL
	}
}

func TestLiveHistory(t *testing.T) {
	o := testOptions(t)
	o.ConversationTurnMean = 3
	o.ConversationHistory = "live"
	o.RequestCount = 30
	p, _ := compileOpen(t, o)
	m := p.Meta()
	if m.Reproducible || m.LiveHistoryMarker != LiveHistoryMarker || m.ConversationHistory != "live" {
		t.Fatalf("meta %+v", m)
	}
	tok := testTokenizer(t)
	for i := range p.Len() {
		r, body, _ := p.Record(i)
		live := r.Flags&mmapds.FlagLiveHistory != 0
		if live != (r.Turn > 0) {
			t.Fatalf("record %d turn %d: live flag %v", i, r.Turn, live)
		}
		if n := bytes.Count(body, []byte(LiveHistoryMarker)); n != int(r.Turn) {
			t.Fatalf("record %d turn %d: %d markers", i, r.Turn, n)
		}
		if got := tok.Count(bodyText(t, body, LiveHistoryMarker)); got != int(r.ISL) {
			t.Fatalf("record %d: planned text has %d tokens, ISL %d", i, got, r.ISL)
		}
	}
}

func timedDataset() *dataset.Dataset {
	mk := func(session string, ts ...int64) dataset.Conversation {
		c := dataset.Conversation{SessionID: session}
		for i, x := range ts {
			c.Turns = append(c.Turns, dataset.Turn{TimestampNs: x, DelayNs: dataset.NoTime, Prompt: "turn " + session + string(rune('a'+i)), OSL: 4})
		}
		return c
	}
	later := mk("c", 3_000e6, dataset.NoTime)
	later.Turns[1].DelayNs = 40e6
	return &dataset.Dataset{Name: "test_trace", SourceSHA256: "abc", Timed: true, Conversations: []dataset.Conversation{
		mk("a", 5_000e6, 5_500e6), mk("b", 1_000e6), later, mk("d", 9_000e6),
	}}
}

func TestFixedSchedule(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		mut  func(*Options)
		want [][3]int64 // session's first-turn offset order: {turn, send, delay}
	}{
		{"raw", func(*Options) {}, [][3]int64{{0, 1000e6, -1}, {0, 3000e6, -1}, {1, -1, 40e6}, {0, 5000e6, -1}, {1, 5500e6, 0}, {0, 9000e6, -1}}},
		{"auto offset", func(o *Options) { o.FixedScheduleAutoOffset = true }, [][3]int64{{0, 0, -1}, {0, 2000e6, -1}, {1, -1, 40e6}, {0, 4000e6, -1}, {1, 4500e6, 0}, {0, 8000e6, -1}}},
		{"window", func(o *Options) { o.FixedScheduleStartOffset, o.FixedScheduleEndOffset = ms(2000), ms(6000) }, [][3]int64{{0, 1000e6, -1}, {1, -1, 40e6}, {0, 3000e6, -1}, {1, 3500e6, 0}}},
		{"speedup", func(o *Options) { o.FixedScheduleAutoOffset, o.SynthesisSpeedupRatio = true, 2 }, [][3]int64{{0, 0, -1}, {0, 1000e6, -1}, {1, -1, 20e6}, {0, 2000e6, -1}, {1, 2250e6, 0}, {0, 4000e6, -1}}},
		{"duration from the first instant", func(o *Options) { o.BenchmarkDuration = 4.5 }, [][3]int64{{0, 1000e6, -1}, {0, 3000e6, -1}, {1, -1, 40e6}, {0, 5000e6, -1}, {1, 5500e6, 0}}},
		{"request count", func(o *Options) { o.RequestCount = 3 }, [][3]int64{{0, 1000e6, -1}, {0, 3000e6, -1}, {1, -1, 40e6}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			o.Dataset = timedDataset()
			o.Concurrency = 2
			c.mut(&o)
			p, res := compileOpen(t, o)
			if res.Mode != ModeFixedSchedule || p.Meta().InputSHA256 != "abc" {
				t.Fatalf("mode %s meta %+v", res.Mode, p.Meta())
			}
			rs := records(t, p)
			if len(rs) != len(c.want) {
				t.Fatalf("%d records, want %d", len(rs), len(c.want))
			}
			for i, w := range c.want {
				if int64(rs[i].Turn) != w[0] || rs[i].SendOffsetNs != w[1] || rs[i].DelayNs != w[2] {
					t.Errorf("record %d: turn %d send %d delay %d, want %v", i, rs[i].Turn, rs[i].SendOffsetNs, rs[i].DelayNs, w)
				}
			}
		})
	}
	// An explicit rate overrides the timestamps.
	o := testOptions(t)
	o.Dataset, o.RequestRate = timedDataset(), 10
	if _, res := compileOpen(t, o); res.Mode != ModeRequestRate {
		t.Fatalf("mode %s with --request-rate", res.Mode)
	}
}

func TestUserCentric(t *testing.T) {
	o := testOptions(t)
	o.ConversationTurnMean = 3
	o.UserCentricRate, o.NumUsers = 2, 4 // gap 2 s per user
	o.RequestCount = 40
	p, res := compileOpen(t, o)
	if res.Mode != ModeUserCentric || p.Meta().OfferedRate != 2 {
		t.Fatalf("mode %s", res.Mode)
	}
	rs := records(t, p)
	var start int64
	lastStart := int64(-1)
	for _, r := range rs {
		if r.Turn == 0 {
			start = r.SendOffsetNs
			if start < lastStart {
				t.Fatalf("session starts out of order: %d after %d", start, lastStart)
			}
			lastStart = start
			continue
		}
		if want := start + int64(r.Turn)*2e9; r.SendOffsetNs != want || r.DelayNs != 0 {
			t.Fatalf("turn %d at %d delay %d, want %d and 0", r.Turn, r.SendOffsetNs, r.DelayNs, want)
		}
	}
	// Four users start 0.5 s apart.
	for u := 0; u < 4; u++ {
		found := false
		for _, r := range rs {
			if r.Turn == 0 && r.SendOffsetNs == int64(u)*500e6 {
				found = true
			}
		}
		if !found {
			t.Errorf("no session starts at %v s", float64(u)/2)
		}
	}
}

func TestWarmupAndCancellation(t *testing.T) {
	o := testOptions(t)
	o.Concurrency = 4
	o.WarmupRequestCount = 7
	o.RequestCount = 4000
	o.RequestCancellationRate, o.RequestCancellationDelay = 25, 0.25
	p, res := compileOpen(t, o)
	if res.Warmup != 7 || res.Profile != 4000 || p.Meta().WarmupCount != 7 || p.Meta().ProfileCount != 4000 {
		t.Fatalf("result %+v", res)
	}
	cancelled := 0
	for i, r := range records(t, p) {
		if (i < 7) != (r.Phase == mmapds.PhaseWarmup) {
			t.Fatalf("record %d phase %v", i, r.Phase)
		}
		if r.Session != uint32(i) {
			t.Fatalf("record %d session %d", i, r.Session)
		}
		if r.CancelAfterNs != 0 {
			if r.CancelAfterNs != 250e6 || r.Phase != mmapds.PhaseProfile {
				t.Fatalf("record %d cancel %d", i, r.CancelAfterNs)
			}
			cancelled++
		}
	}
	// Binomial(4000, 0.25): sd ≈ 27.
	if cancelled < 1000-110 || cancelled > 1000+110 {
		t.Fatalf("%d cancelled, want about 1000", cancelled)
	}
}

func TestSamplers(t *testing.T) {
	for _, strategy := range []string{"sequential", "shuffle", "random"} {
		s := &sampler{strategy: strategy, n: 7, r: Stream(1, "t")}
		seen := make(map[int]int)
		for i := 0; i < 70; i++ {
			v := s.next()
			if v < 0 || v >= 7 {
				t.Fatalf("%s: %d out of range", strategy, v)
			}
			if strategy == "sequential" && v != i%7 {
				t.Fatalf("sequential: %d at %d", v, i)
			}
			seen[v]++
		}
		if strategy != "random" {
			for v := 0; v < 7; v++ {
				if seen[v] != 10 {
					t.Fatalf("%s: entry %d drawn %d times in 10 cycles", strategy, v, seen[v])
				}
			}
		}
	}
}

func TestFileDatasetOSLFallback(t *testing.T) {
	ds := &dataset.Dataset{Name: "single_turn", Conversations: []dataset.Conversation{
		{Turns: []dataset.Turn{{Prompt: "hello there", OSL: 0, TimestampNs: dataset.NoTime, DelayNs: dataset.NoTime}}},
		{Turns: []dataset.Turn{{Prompt: "general kenobi", OSL: 7, TimestampNs: dataset.NoTime, DelayNs: dataset.NoTime}}},
	}}
	o := testOptions(t)
	o.Dataset = ds
	o.OSLMean = 50
	p, _ := compileOpen(t, o)
	rs := records(t, p)
	if len(rs) != 2 || rs[0].OSL != 50 || rs[1].OSL != 7 {
		t.Fatalf("records %+v", rs)
	}
	if ds.Conversations[0].Turns[0].OSL != 0 {
		t.Fatal("Compile modified the caller's dataset")
	}
}

func TestValidate(t *testing.T) {
	ms := int64(5)
	cases := []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.ISLMean = 0 }, "--synthetic-input-tokens-mean must be > 0 (got 0)"},
		{func(o *Options) { o.RequestRate = -1 }, "--request-rate -1: want requests/s in [0, 1000000000]"},
		{func(o *Options) { o.ArrivalPattern = "bursty" }, "--arrival-pattern must be constant, poisson or gamma"},
		{func(o *Options) { o.ArrivalPattern, o.ArrivalSmoothness = "gamma", 0 }, "--arrival-smoothness 0: want [0.001, 1000]"},
		{func(o *Options) { o.FixedSchedule, o.RequestRate = true, 5 }, "--request-rate and --fixed-schedule are mutually exclusive"},
		{func(o *Options) { o.FixedSchedule = true }, "--fixed-schedule needs an --input-file"},
		{func(o *Options) { o.EndpointType = "soap" }, "--endpoint-type must be one of"},
		{func(o *Options) { o.Model = "" }, "--model is required"},
		{func(o *Options) { o.Output = "" }, "--output is required"},
		{func(o *Options) { o.EndpointType, o.Streaming = "embeddings", true }, "does not stream"},
		{func(o *Options) { o.EndpointType = "raw" }, "--custom-endpoint is required"},
		{func(o *Options) { o.RandomRangeRatio = 1.5 }, "--random-range-ratio 1.5: want [0, 1]"},
		{func(o *Options) { o.RandomRangeRatio, o.ISLStddev = 0.2, 3 }, "mutually exclusive"},
		{func(o *Options) { o.SeqDist = "1,2" }, "--seq-dist"},
		{func(o *Options) { o.SeqDist = "10,5:30;20,5:30" }, "sum to 100"},
		{func(o *Options) { o.PromptPrefixPoolSize = 3 }, "--prompt-prefix-pool-size and --prompt-prefix-length"},
		{func(o *Options) { o.ConversationHistory = "none" }, "--conversation-history must be compiled or live"},
		{func(o *Options) { o.SamplingStrategy = "lottery" }, "--dataset-sampling-strategy"},
		{func(o *Options) { o.RequestCount, o.NumSessions = 5, 5 }, "mutually exclusive"},
		{func(o *Options) { o.RequestCancellationRate = 101 }, "--request-cancellation-rate"},
		{func(o *Options) { o.UserCentricRate = 3 }, "--user-centric-rate needs --num-users"},
		{func(o *Options) { o.UserCentricRate, o.NumUsers = 3, 2 }, "at least 2 turns"},
		{func(o *Options) { o.RequestRateRampDuration = 3 }, "needs --request-rate"},
		{func(o *Options) { o.NumDatasetEntries = -1 }, "--num-dataset-entries -1: want conversations in [0, 1048576]"},
		{func(o *Options) {
			o.Dataset = timedDataset()
			o.FixedScheduleAutoOffset, o.FixedScheduleStartOffset = true, &ms
		}, "mutually exclusive"},
		{func(o *Options) { o.SynthesisSpeedupRatio = 0 }, "--synthesis-speedup-ratio 0: want [1e-06, 1000000]"},
		{func(o *Options) { o.Model = "a,,b" }, `--model "a,,b": a model list is comma-separated names, none empty`},
		{func(o *Options) { o.ModelSelectionStrategy = "weighted" }, "--model-selection-strategy weighted is not supported"},
		{func(o *Options) { o.ModelSelectionStrategy = "lru" }, `--model-selection-strategy must be round_robin or random (got "lru")`},
		{func(o *Options) { o.RankingsPassagesMean = 3 }, "--rankings-* apply to the *_rankings endpoint types only (got --endpoint-type chat)"},
		{func(o *Options) { o.EndpointType, o.RankingsPassagesMean = "cohere_rankings", 0 }, "--rankings-passages-mean must be in [1,65536] (got 0)"},
		{func(o *Options) { o.EndpointType, o.RankingsQueryPromptTokenStddev = "nim_rankings", -1 }, "--rankings-query-prompt-token-stddev -1: want tokens in [0, 16777216]"},
		{func(o *Options) { o.EndpointType, o.SharedSystemPromptLength = "hf_tei_rankings", 5 }, "do not apply to ranking requests"},
		{func(o *Options) { o.EndpointType, o.RankingsPassagesMean = "nim_rankings", 60000 }, "tokens per request, more than 16777216"},
		{func(o *Options) { o.EndpointType, o.OSLMean = "anthropic_messages", 0 }, "requires max_tokens"},
		{func(o *Options) { o.EndpointType, o.CustomEndpoint = "template", "/x" }, "--payload-template is required for --endpoint-type template"},
		{func(o *Options) { o.PayloadTemplate = `{"a":1}` }, "--payload-template applies to --endpoint-type template only (got chat)"},
		{func(o *Options) { o.ResponseField = "choices.0.text" }, "--response-field applies to --endpoint-type raw and template only (got chat)"},
		{func(o *Options) {
			o.EndpointType, o.CustomEndpoint, o.PayloadTemplate, o.ResponseField = "template", "/x", `{"a":1}`, "choices..text"
		}, "without empty segments"},
		{func(o *Options) {
			o.EndpointType, o.CustomEndpoint, o.PayloadTemplate = "template", "/x", `{"p":{{.Prompt}}}`
		}, "template output is not valid JSON"},
	}
	for _, c := range cases {
		o := testOptions(t)
		c.mut(&o)
		_, err := Compile(o)
		if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a usage error containing %q", err, c.want)
		}
	}
	// Input-dependent: a fixed schedule over an input without timestamps.
	o := testOptions(t)
	o.Dataset = &dataset.Dataset{Name: "single_turn", Conversations: []dataset.Conversation{{Turns: []dataset.Turn{{Prompt: "x"}}}}}
	o.FixedSchedule = true
	if _, err := Compile(o); err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "no timestamps") {
		t.Errorf("fixed schedule over untimed input: %v", err)
	}
}

func BenchmarkCompile1M(b *testing.B) {
	o := DefaultOptions()
	o.Model = "mock"
	o.Tokenizer = testTokenizer(b)
	o.Output = filepath.Join(b.TempDir(), "bench.plan")
	o.ISLMean, o.ISLStddev, o.OSLMean, o.OSLStddev = 512, 128, 128, 32
	o.RequestRate, o.RequestCount = 100, 1_000_000
	if _, err := dataset.LoadCorpus(o.Tokenizer); err != nil { // measured separately
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Compile(o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/request")
}

func TestSelfContainedAndTurnExtra(t *testing.T) {
	nt := dataset.NoTime
	ds := &dataset.Dataset{Name: "multi_turn", Conversations: []dataset.Conversation{
		{SessionID: "a", SelfContained: true, Turns: []dataset.Turn{
			{Prompt: "first question", TimestampNs: nt, DelayNs: nt},
			{Prompt: "second question", TimestampNs: nt, DelayNs: 5e6, Extra: map[string]any{"ignore_eos": false, "tools": json.RawMessage(`[{"type":"function"}]`)}},
		}},
		{SessionID: "b", Turns: []dataset.Turn{
			{Prompt: "hello", Reply: "hi there", TimestampNs: nt, DelayNs: nt},
			{Prompt: "how are you", TimestampNs: nt, DelayNs: nt},
		}},
	}}
	o := testOptions(t)
	o.Dataset, o.OSLMean = ds, 0
	o.ExtraInputs = map[string]any{"ignore_eos": true}
	p, _ := compileOpen(t, o)
	want := []string{
		`{"model":"mock","messages":[{"role":"user","content":"first question"}],"stream":false,"ignore_eos":true}`,
		`{"model":"mock","messages":[{"role":"user","content":"second question"}],"stream":false,"ignore_eos":false,"tools":[{"type":"function"}]}`,
		`{"model":"mock","messages":[{"role":"user","content":"hello"}],"stream":false,"ignore_eos":true}`,
		`{"model":"mock","messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi there"},{"role":"user","content":"how are you"}],"stream":false,"ignore_eos":true}`,
	}
	for i, w := range want {
		r, body, _ := p.Record(i)
		if string(body) != w {
			t.Errorf("record %d body\n%s\nwant\n%s", i, body, w)
		}
		if i == 1 && (r.DelayNs != 5e6 || r.Turn != 1) {
			t.Errorf("record 1: %+v", r)
		}
	}
}

func TestWarmupSharesTheTimeline(t *testing.T) {
	o := testOptions(t)
	o.RequestRate, o.ArrivalPattern = 10, "constant"
	o.WarmupRequestCount, o.RequestCount = 5, 20
	o.BenchmarkDuration = 1.5 // with a count: whichever comes first
	p, res := compileOpen(t, o)
	rs := records(t, p)
	if res.Warmup != 5 || res.Profile != 15 {
		t.Fatalf("%d warmup, %d profile; want 5 and 15 (the duration bounds the profile)", res.Warmup, res.Profile)
	}
	for i, r := range rs {
		if want := int64(i) * 100e6; r.SendOffsetNs != want {
			t.Fatalf("record %d (%v) at %d, want %d: one timeline, warmup first", i, r.Phase, r.SendOffsetNs, want)
		}
	}
}

// TestTemplateEndpoint: the template endpoint renders every body from PayloadTemplate with the
// prompt, model, output length and streaming flag in scope, and the response field lands in
// the recorded spec (where analyze reads it) even when the caller's spec lacks it.
func TestTemplateEndpoint(t *testing.T) {
	o := testOptions(t)
	o.EndpointType, o.CustomEndpoint, o.Streaming = "template", "/v1/generate", true
	o.PayloadTemplate = `{"m":{{json .Model}},"text":{{json .Prompt}},"max":{{.MaxTokens}},"stream":{{.Streaming}}}`
	o.ResponseField = "choices.0.delta.content"
	o.RequestCount = 4
	o.Spec = map[string]any{"model": "mock"}
	p, _ := compileOpen(t, o)
	for i := range p.Len() {
		r, body, err := p.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			M      string `json:"m"`
			Text   string `json:"text"`
			Max    int    `json:"max"`
			Stream bool   `json:"stream"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("record %d: %v: %s", i, err, body)
		}
		if b.M != "mock" || b.Max != 16 || !b.Stream || o.Tokenizer.Count(b.Text) != int(r.ISL) || r.ISL != 32 {
			t.Fatalf("record %d: %+v (ISL %d)", i, b, r.ISL)
		}
	}
	m := p.Meta()
	if m.Endpoint != "template" || m.Paths[0] != "/v1/generate" || m.Spec["response-field"] != "choices.0.delta.content" {
		t.Fatalf("meta: endpoint %s paths %v spec %v", m.Endpoint, m.Paths, m.Spec)
	}
	if _, ok := o.Spec["response-field"]; ok {
		t.Fatal("Compile changed the caller's spec map")
	}
}
