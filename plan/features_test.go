package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
)

// rankingBody is the query and passages of a ranking body of any of the three APIs.
func rankingBody(t *testing.T, endpointType string, body []byte) (string, []string) {
	t.Helper()
	var b struct {
		Query     json.RawMessage
		Passages  []struct{ Text string }
		Texts     []string
		Documents []string
		Model     string
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	var q string
	switch endpointType {
	case "nim_rankings":
		var qt struct{ Text string }
		if err := json.Unmarshal(b.Query, &qt); err != nil {
			t.Fatalf("query %s: %v", b.Query, err)
		}
		q = qt.Text
		var ps []string
		for _, p := range b.Passages {
			ps = append(ps, p.Text)
		}
		return q, ps
	case "hf_tei_rankings":
		_ = json.Unmarshal(b.Query, &q)
		return q, b.Texts
	}
	_ = json.Unmarshal(b.Query, &q)
	return q, b.Documents
}

func TestSyntheticRankings(t *testing.T) {
	cases := []struct {
		endpoint          string
		passages, pStd    int
		passTok, queryTok int
		wantFixedPassages bool
	}{
		{"nim_rankings", 1, 0, 550, 550, true}, // AIPerf's defaults
		{"hf_tei_rankings", 4, 0, 20, 8, true},
		{"cohere_rankings", 5, 2, 12, 6, false},
	}
	tok := testTokenizer(t)
	for _, c := range cases {
		t.Run(c.endpoint, func(t *testing.T) {
			compile := func() ([]string, [32]byte) {
				o := testOptions(t)
				o.EndpointType, o.OSLMean, o.RequestCount = c.endpoint, 0, 12
				o.RankingsPassagesMean, o.RankingsPassagesStddev = c.passages, float64(c.pStd)
				o.RankingsPassagesPromptTokenMean, o.RankingsQueryPromptTokenMean = c.passTok, c.queryTok
				p, res := compileOpen(t, o)
				var bodies []string
				counts := map[int]bool{}
				for i := range p.Len() {
					r, body, _ := p.Record(i)
					q, ps := rankingBody(t, c.endpoint, body)
					if got := tok.Count(q); got != c.queryTok {
						t.Fatalf("record %d: query has %d tokens, want %d", i, got, c.queryTok)
					}
					if c.wantFixedPassages && len(ps) != c.passages {
						t.Fatalf("record %d: %d passages, want %d", i, len(ps), c.passages)
					}
					counts[len(ps)] = true
					for _, x := range ps {
						if got := tok.Count(x); got != c.passTok {
							t.Fatalf("record %d: passage has %d tokens, want %d", i, got, c.passTok)
						}
					}
					if want := tok.Count(strings.Join(append([]string{q}, ps...), " ")); int(r.ISL) != want {
						t.Fatalf("record %d: ISL %d, want %d (query and passages joined by a space)", i, r.ISL, want)
					}
					bodies = append(bodies, string(body))
				}
				if !c.wantFixedPassages && len(counts) < 2 {
					t.Errorf("passage counts %v: want them drawn around the mean", counts)
				}
				return bodies, res.Hash
			}
			b1, h1 := compile()
			b2, h2 := compile()
			if h1 != h2 || strings.Join(b1, "\n") != strings.Join(b2, "\n") {
				t.Errorf("two compiles with the same seed differ")
			}
		})
	}
}

func TestModelSelection(t *testing.T) {
	cases := []struct {
		name, models, strategy string
		want                   []string // the model of each dataset turn in order; nil: check random
	}{
		{"one model", "m", "round_robin", []string{"m", "m", "m", "m"}},
		{"round robin", "a, b,c", "round_robin", []string{"a", "b", "c", "a", "b", "c"}},
		{"random", "a,b", "random", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			compile := func() (map[[2]uint32]string, [32]byte) {
				o := testOptions(t)
				o.Model, o.ModelSelectionStrategy = c.models, c.strategy
				o.SamplingStrategy, o.NumDatasetEntries, o.RequestCount = "sequential", 12, 12
				p, res := compileOpen(t, o)
				if p.Meta().Model != c.models {
					t.Errorf("meta model %q, want %q", p.Meta().Model, c.models)
				}
				got := map[[2]uint32]string{}
				for i := range p.Len() {
					r, body, _ := p.Record(i)
					var b struct{ Model string }
					if err := json.Unmarshal(body, &b); err != nil {
						t.Fatal(err)
					}
					got[[2]uint32{r.Session, r.Turn}] = b.Model
					if c.want != nil && b.Model != c.want[i%len(c.want)] {
						t.Fatalf("record %d: model %q, want %q", i, b.Model, c.want[i%len(c.want)])
					}
				}
				return got, res.Hash
			}
			m1, h1 := compile()
			m2, h2 := compile()
			if h1 != h2 {
				t.Errorf("two compiles with the same seed differ")
			}
			if c.want == nil {
				seen := map[string]int{}
				for k, v := range m1 {
					seen[v]++
					if m2[k] != v {
						t.Fatalf("random model of %v differs between compiles", k)
					}
				}
				if seen["a"] == 0 || seen["b"] == 0 || seen["a"]+seen["b"] != len(m1) {
					t.Errorf("random selection %v: want both models and nothing else", seen)
				}
			}
		})
	}
}

func TestWarmupFlags(t *testing.T) {
	cases := []struct {
		name       string
		mut        func(*Options)
		warm, prof int
		check      func(t *testing.T, rs []mmapds.Record)
	}{
		{"sessions, closed loop", func(o *Options) {
			o.ConversationTurnMean, o.NumWarmupSessions, o.RequestCount = 2, 3, 4
		}, 6, 4, nil},
		{"count and sessions: the first bound", func(o *Options) {
			o.NumWarmupSessions, o.WarmupRequestCount, o.RequestCount = 5, 2, 4
		}, 2, 4, nil},
		{"duration at the profile rate", func(o *Options) {
			o.RequestRate, o.ArrivalPattern, o.WarmupDuration, o.RequestCount = 10, "constant", 0.5, 3
		}, 5, 3, func(t *testing.T, rs []mmapds.Record) {
			for i, r := range rs {
				if want := int64(i) * 100e6; r.SendOffsetNs != want {
					t.Errorf("record %d at %d, want %d", i, r.SendOffsetNs, want)
				}
			}
		}},
		{"own rate and pattern", func(o *Options) {
			o.RequestRate, o.ArrivalPattern, o.RequestCount = 10, "poisson", 3
			o.WarmupDuration, o.WarmupRequestRate, o.WarmupArrivalPattern = 1, 4, "constant"
			o.Concurrency, o.WarmupConcurrency = 2, 2
		}, 4, 3, func(t *testing.T, rs []mmapds.Record) {
			for i := range 4 {
				if want := int64(i) * 250e6; rs[i].SendOffsetNs != want {
					t.Errorf("warmup record %d at %d, want %d (4 req/s, constant)", i, rs[i].SendOffsetNs, want)
				}
			}
			if rs[4].SendOffsetNs != 1e9 {
				t.Errorf("first profile record at %d, want 1s: the profile follows the warmup", rs[4].SendOffsetNs)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			c.mut(&o)
			p, res := compileOpen(t, o)
			if res.Warmup != c.warm || res.Profile != c.prof {
				t.Fatalf("%d warmup, %d profile; want %d and %d", res.Warmup, res.Profile, c.warm, c.prof)
			}
			rs := records(t, p)
			for i, r := range rs {
				if (i < c.warm) != (r.Phase == mmapds.PhaseWarmup) {
					t.Fatalf("record %d phase %v", i, r.Phase)
				}
			}
			if c.check != nil {
				c.check(t, rs)
			}
		})
	}
	bad := []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.WarmupDuration = 2 }, "--warmup-duration alone cannot size a closed-loop warmup"},
		{func(o *Options) { o.WarmupRequestRate = 2 }, "--warmup-request-rate needs a warmup (--warmup-request-count, --num-warmup-sessions or --warmup-duration)"},
		{func(o *Options) { o.WarmupRequestCount, o.WarmupRequestRate = 2, 5 }, "--warmup-request-rate and --warmup-arrival-pattern need --request-rate"},
		{func(o *Options) { o.WarmupPrefillConcurrency = 2 }, "--warmup-prefill-concurrency needs a warmup"},
		{func(o *Options) { o.WarmupConcurrencyRampDuration = 2 }, "--warmup-concurrency-ramp-duration needs a warmup"},
		{func(o *Options) { o.WarmupRequestCount, o.WarmupRequestRateRampDuration = 2, 1 }, "--warmup-request-rate-ramp-duration needs --request-rate"},
		{func(o *Options) { o.WarmupRequestCount, o.WarmupPrefillConcurrencyRampDuration = 2, 1 }, "--warmup-prefill-concurrency-ramp-duration needs --warmup-prefill-concurrency or --prefill-concurrency"},
		{func(o *Options) { o.WarmupRequestCount, o.WarmupPrefillConcurrency, o.Streaming = 2, 1, false }, "--warmup-prefill-concurrency needs --streaming"},
		{func(o *Options) { o.PrefillConcurrency, o.Streaming = 2, false }, "--prefill-concurrency needs --streaming"},
		{func(o *Options) { o.Streaming, o.PrefillConcurrencyRampDuration = true, 1 }, "--prefill-concurrency-ramp-duration needs --prefill-concurrency"},
		{func(o *Options) { o.Streaming, o.PrefillConcurrency = true, -1 }, "--prefill-concurrency -1: want requests in [0, 1048576]"},
		{func(o *Options) {
			o.WarmupRequestCount, o.RequestRate, o.WarmupArrivalPattern = 2, 5, "wave"
		}, `--warmup-arrival-pattern must be constant, poisson or gamma (got "wave")`},
		{func(o *Options) { o.NumWarmupSessions = -1 }, "--num-warmup-sessions -1: want sessions in [0, 16777216]"},
	}
	for _, c := range bad {
		o := testOptions(t)
		c.mut(&o)
		if _, err := Compile(o); err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a usage error containing %q", err, c.want)
		}
	}
}

func TestNoFixedScheduleAndDelayCap(t *testing.T) {
	cases := []struct {
		name      string
		mut       func(*Options)
		mode      string
		delayNs   int64 // of session c's second turn
		wantError string
	}{
		{"timed input: fixed schedule", func(o *Options) {}, ModeFixedSchedule, 40e6, ""},
		{"--no-fixed-schedule: closed loop", func(o *Options) { o.NoFixedSchedule = true }, ModeConcurrency, 40e6, ""},
		{"cap 0.01 s", func(o *Options) { o.InterTurnDelayCapSeconds = 0.01 }, ModeFixedSchedule, 10e6, ""},
		{"cap before speed-up", func(o *Options) { o.InterTurnDelayCapSeconds, o.SynthesisSpeedupRatio = 0.01, 2 }, ModeFixedSchedule, 5e6, ""},
		{"both", func(o *Options) { o.NoFixedSchedule, o.FixedSchedule = true, true }, "", 0, "--fixed-schedule and --no-fixed-schedule are mutually exclusive"},
		{"negative cap", func(o *Options) { o.InterTurnDelayCapSeconds = -1 }, "", 0, "--inter-turn-delay-cap-seconds -1: want seconds in [0, 31536000]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			o.Dataset = timedDataset()
			c.mut(&o)
			if c.wantError != "" {
				if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("got %v, want %q", err, c.wantError)
				}
				return
			}
			p, _ := compileOpen(t, o)
			if p.Meta().TimingMode != c.mode {
				t.Fatalf("timing mode %s, want %s", p.Meta().TimingMode, c.mode)
			}
			found := false
			for _, r := range records(t, p) {
				if r.Turn == 1 && r.DelayNs > 0 {
					found = true
					if r.DelayNs != c.delayNs {
						t.Errorf("delay %d, want %d", r.DelayNs, c.delayNs)
					}
				}
			}
			if !found {
				t.Fatal("no delayed turn planned")
			}
		})
	}
}

func TestPromptBatchSize(t *testing.T) {
	tok := testTokenizer(t)
	for _, ep := range []string{"embeddings", "nim_embeddings"} {
		t.Run(ep, func(t *testing.T) {
			o := testOptions(t)
			o.EndpointType, o.OSLMean, o.PromptBatchSize, o.RequestCount = ep, 0, 3, 5
			o.ISLMean = 16
			p, _ := compileOpen(t, o)
			for i := range p.Len() {
				r, body, _ := p.Record(i)
				var b struct{ Input []string }
				if err := json.Unmarshal(body, &b); err != nil {
					t.Fatal(err)
				}
				if len(b.Input) != 3 {
					t.Fatalf("record %d: %d texts, want 3: %s", i, len(b.Input), body)
				}
				for _, x := range b.Input {
					if tok.Count(x) != 16 {
						t.Fatalf("record %d: text of %d tokens, want 16", i, tok.Count(x))
					}
				}
				if want := tok.Count(strings.Join(b.Input, " ")); int(r.ISL) != want {
					t.Fatalf("record %d: ISL %d, want %d (the texts joined)", i, r.ISL, want)
				}
			}
		})
	}
	o := testOptions(t)
	o.PromptBatchSize = 2
	if _, err := Compile(o); err == nil || !strings.Contains(err.Error(), "--prompt-batch-size 2 applies to --endpoint-type embeddings, nim_embeddings and template (got chat)") {
		t.Errorf("chat with a batch: %v", err)
	}
}

// TestPhaseCaps: the prefill cap and the warmup's own caps and ramps reach the plan's meta
// (replay applies them per phase), 0 standing for the profile's; a plan without them has the
// meta it had before (the fields are left out, so its hash does not move).
func TestPhaseCaps(t *testing.T) {
	o := testOptions(t)
	o.Streaming, o.Concurrency, o.ConcurrencyRampDuration = true, 8, 2
	o.PrefillConcurrency, o.PrefillConcurrencyRampDuration = 3, 1.5
	o.WarmupRequestCount, o.WarmupConcurrency, o.WarmupConcurrencyRampDuration = 4, 2, 0.5
	o.WarmupPrefillConcurrency, o.WarmupPrefillConcurrencyRampDuration = 1, 0.25
	p, _ := compileOpen(t, o)
	m := p.Meta()
	got := []int64{int64(m.Concurrency), m.ConcurrencyRampNs, int64(m.PrefillConcurrency), m.PrefillConcurrencyRampNs,
		int64(m.WarmupConcurrency), m.WarmupConcurrencyRampNs, int64(m.WarmupPrefillConcurrency), m.WarmupPrefillConcurrencyRampNs}
	want := []int64{8, 2e9, 3, 1.5e9, 2, 0.5e9, 1, 0.25e9}
	if !slices.Equal(got, want) {
		t.Errorf("meta caps %v, want %v", got, want)
	}
	plain := testOptions(t)
	pp, _ := compileOpen(t, plain)
	if m := pp.Meta(); m.PrefillConcurrency != 0 || m.WarmupConcurrency != 0 || m.WarmupConcurrencyRampNs != 0 {
		t.Errorf("a plan without caps has %+v", m)
	}
	b, err := os.ReadFile(plain.Output)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"prefill_concurrency", "warmup_concurrency", "warmup_prefill"} {
		if bytes.Contains(b, []byte(k)) {
			t.Errorf("a plan without caps names %s in its meta", k)
		}
	}
}

// TestWarmupRateRamp: --warmup-request-rate-ramp-duration ramps the warmup's arrivals from
// the run's start (AIPerf: target·0.1/duration, stepped every 0.1 s), and without it the
// warmup takes the profile's ramp; the profile ramps again from its own start.
func TestWarmupRateRamp(t *testing.T) {
	gaps := func(rampWarm, rampProfile float64, warmRate ...float64) []int64 {
		o := testOptions(t)
		o.RequestRate, o.ArrivalPattern, o.RequestCount = 10, "constant", 20
		o.RequestRateRampDuration = rampProfile
		o.WarmupRequestCount, o.WarmupRequestRateRampDuration = 10, rampWarm
		if len(warmRate) > 0 {
			o.WarmupRequestRate = warmRate[0]
		}
		p, _ := compileOpen(t, o)
		rs := records(t, p)
		var out []int64
		for i := 1; i < len(rs); i++ {
			out = append(out, rs[i].SendOffsetNs-rs[i-1].SendOffsetNs)
		}
		return out
	}
	steady := gaps(0, 0)
	warmOnly := gaps(2, 0)
	if warmOnly[0] <= steady[0] || warmOnly[15] != steady[15] {
		t.Errorf("warmup ramp: first gap %d (steady %d), a profile gap %d (steady %d)", warmOnly[0], steady[0], warmOnly[15], steady[15])
	}
	both := gaps(0, 2) // the warmup falls back to the profile's ramp
	if both[0] != warmOnly[0] {
		t.Errorf("warmup without its own ramp: first gap %d, want the profile's ramp's %d", both[0], warmOnly[0])
	}
	if both[10] <= steady[10] {
		t.Errorf("profile ramp: its first gap %d, steady %d: it does not ramp from its own start", both[10], steady[10])
	}
	// The warmup's own rate still ramps by the profile's ramp when it has none of its own
	// (it was planned at a steady rate then).
	ownRate := gaps(0, 2, 10)
	if ownRate[0] != both[0] {
		t.Errorf("--warmup-request-rate with the profile's ramp: first gap %d, want the ramp's %d", ownRate[0], both[0])
	}
}
