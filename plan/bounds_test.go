package plan

import (
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
)

// untimed is an input of n one-turn conversations without timestamps.
func untimed(n int) *dataset.Dataset {
	ds := &dataset.Dataset{Name: "single_turn"}
	for i := range n {
		ds.Conversations = append(ds.Conversations, dataset.Conversation{SessionID: string(rune('a' + i)),
			Turns: []dataset.Turn{{Prompt: "hello", OSL: 4, TimestampNs: dataset.NoTime, DelayNs: dataset.NoTime}}})
	}
	return ds
}

// TestTimingOutOfRange: every instant and delay a plan would hold is range-checked, by the
// flags up front or by the scheduler as it plans them, and out of range is a usage error
// (exit 2) naming what, never a wrapped-around int64 (a send offset of -2^63, a think time
// of 0 or of 1 ms). Fails before the fix: each case compiled.
func TestTimingOutOfRange(t *testing.T) {
	epoch := func() *dataset.Dataset { // a trace on epoch nanoseconds, 54 years from 0
		ds := timedDataset()
		for i := range ds.Conversations {
			for j := range ds.Conversations[i].Turns {
				if ts := ds.Conversations[i].Turns[j].TimestampNs; ts != dataset.NoTime {
					ds.Conversations[i].Turns[j].TimestampNs = ts + 1_700_000_000e9
				}
			}
		}
		return ds
	}
	cases := []struct {
		name string
		mut  func(*Options)
		want string
	}{
		{"request rate 1e-10", func(o *Options) { o.RequestRate, o.RequestCount = 1e-10, 2 }, "--request-rate 1e-10 for 2 requests: the schedule would span 634 years"},
		{"request rate default count", func(o *Options) { o.RequestRate = 1e-7 }, "for 10 requests: the schedule would span 3 years"},
		{"warmup rate", func(o *Options) { o.RequestRate, o.WarmupRequestCount, o.WarmupRequestRate = 1, 10, 1e-7 }, "--warmup-request-rate 1e-07 for 10 requests"},
		{"user-centric", func(o *Options) {
			o.UserCentricRate, o.NumUsers, o.ConversationTurnMean, o.RequestCount = 1e-7, 2, 2, 4
		}, "--user-centric-rate 1e-07 for 4 requests"},
		{"turn delay 1e13 ms", func(o *Options) { o.ConversationTurnDelayMean, o.ConversationTurnMean = 1e13, 2 }, "--conversation-turn-delay-mean 10000000000000: want ms in [0, 31536000000]"},
		{"turn delay 1e300 ms", func(o *Options) { o.ConversationTurnDelayMean, o.ConversationTurnMean = 1e300, 2 }, "--conversation-turn-delay-mean 1e+300"},
		{"turn delay times ratio", func(o *Options) {
			o.ConversationTurnDelayMean, o.ConversationTurnDelayRatio, o.ConversationTurnMean = 1e10, 10, 2
		}, "ms of think time, more than 365 days"},
		{"turn delay stddev", func(o *Options) {
			o.ConversationTurnDelayMean, o.ConversationTurnDelayStddev, o.ConversationTurnMean = 1, 1e10, 2
		}, "10 × --conversation-turn-delay-stddev"},
		{"benchmark duration", func(o *Options) { o.BenchmarkDuration, o.RequestRate = 1e300, 1e-300 }, "--benchmark-duration 1e+300: want seconds"},
		{"warmup duration", func(o *Options) { o.WarmupDuration, o.RequestRate = 1e300, 1 }, "--warmup-duration 1e+300"},
		{"warmup duration at the profile rate", func(o *Options) { o.WarmupDuration, o.RequestRate = 3e7, 1 }, "--request-rate 1 over --warmup-duration 3e+07 plans 30000000 warmup requests"},
		{"ramp", func(o *Options) { o.RequestRateRampDuration, o.RequestRate = 1e300, 1 }, "--request-rate-ramp-duration 1e+300"},
		{"ramp span", func(o *Options) { o.RequestRateRampDuration, o.RequestRate, o.RequestCount = 3e7, 1, 2e6 }, "the schedule would span"},
		{"concurrency ramp", func(o *Options) { o.ConcurrencyRampDuration, o.Concurrency = math.Inf(1), 2 }, "--concurrency-ramp-duration +Inf"},
		{"cancellation delay", func(o *Options) { o.RequestCancellationDelay, o.RequestCancellationRate = 1e300, 50 }, "--request-cancellation-delay 1e+300"},
		{"delay cap", func(o *Options) { o.InterTurnDelayCapSeconds = 1e300 }, "--inter-turn-delay-cap-seconds 1e+300"},
		{"smoothness", func(o *Options) { o.ArrivalPattern, o.ArrivalSmoothness, o.RequestRate = "gamma", 1e-300, 1 }, "--arrival-smoothness 1e-300"},
		{"nan rate", func(o *Options) { o.RequestRate = math.NaN() }, "--request-rate NaN"},
		{"speedup", func(o *Options) { o.Dataset, o.SynthesisSpeedupRatio = timedDataset(), 1e-300 }, "--synthesis-speedup-ratio 1e-300"},
		{"start offset past int64 ns", func(o *Options) { o.Dataset, o.FixedScheduleStartOffset = timedDataset(), ptr(int64(1e16)) }, "--fixed-schedule-start-offset 10000000000000000"},
		// Only the scheduler knows these: the input's requests and its timestamps.
		{"input at a slow rate", func(o *Options) { o.Dataset, o.RequestRate, o.ArrivalPattern = untimed(5), 1e-7, "constant" }, "a profile request's planned instant (--request-rate over the planned requests) lies 1 years"},
		{"epoch timestamps", func(o *Options) { o.Dataset = epoch() }, `session "b"'s first timestamp`},
		{"timestamps slowed down", func(o *Options) {
			ds := timedDataset()
			ds.Conversations[3].Turns[0].TimestampNs = 100e9
			o.Dataset, o.SynthesisSpeedupRatio = ds, 1e-6
		}, `session "d"'s first timestamp (after the offsets and --synthesis-speedup-ratio; --fixed-schedule-auto-offset starts at the first) lies 3 years`},
		{"later timestamp slowed down", func(o *Options) {
			ds := timedDataset()
			ds.Conversations[0].Turns[1].TimestampNs = 100e9
			o.Dataset, o.SynthesisSpeedupRatio = ds, 1e-6
		}, `session "a" turn 1's timestamp`},
		{"input delay", func(o *Options) {
			ds := timedDataset()
			ds.Conversations[2].Turns[1].DelayNs = int64(400 * 24 * 3600 * 1e9)
			o.Dataset = ds
		}, "a think time before a later turn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			c.mut(&o)
			_, err := Compile(o)
			if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a usage error containing %q", err, c.want)
			}
			if _, err := os.Stat(o.Output); err == nil {
				t.Error("a refused plan was written")
			}
		})
	}
}

// TestTimingInRange: instants close to the bounds compile exactly, not clamped.
func TestTimingInRange(t *testing.T) {
	o := testOptions(t)
	o.RequestRate, o.RequestCount, o.ArrivalPattern = 1e-6, 3, "constant" // instants 0, 1e6 s, 2e6 s
	p, _ := compileOpen(t, o)
	rs := records(t, p)
	if len(rs) != 3 || rs[2].SendOffsetNs != 2e15 {
		t.Fatalf("records %+v", rs)
	}
	o = testOptions(t)
	o.ConversationTurnDelayMean, o.ConversationTurnMean, o.RequestCount = 3e9, 2, 2 // 35 days
	p, _ = compileOpen(t, o)
	if rs := records(t, p); rs[1].DelayNs != 3e15 {
		t.Fatalf("delay %d, want 3e15 ns", rs[1].DelayNs)
	}
	o = testOptions(t)
	o.RequestCancellationDelay, o.RequestCancellationRate = 1e6, 100
	p, _ = compileOpen(t, o)
	if rs := records(t, p); rs[0].CancelAfterNs != 1e15 {
		t.Fatalf("cancel after %d, want 1e15 ns", rs[0].CancelAfterNs)
	}
}

func ptr[T any](v T) *T { return &v }

// TestPlanSizeRefusedBeforeAllocating: the flags that made the compiler allocate gigabytes
// (issue 24 defect 9) are refused by the caps or the size estimate before the dataset is
// generated: a usage error, no file, and almost nothing allocated. Fails before the fix:
// the first cases allocated 3–10 GB.
func TestPlanSizeRefusedBeforeAllocating(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Options)
		want string
	}{
		{"dataset entries", func(o *Options) { o.NumDatasetEntries = 1e8 }, "--num-dataset-entries 100000000: want conversations in [0, 1048576]"},
		{"dataset entries at the cap", func(o *Options) { o.NumDatasetEntries, o.ISLMean = MaxDatasetEntries, 550 }, "more than --max-plan-bytes"},
		{"turns", func(o *Options) { o.ConversationTurnMean = 1e8 }, "--conversation-turn-mean 100000000"},
		{"turns at the cap, compiled history", func(o *Options) {
			o.ConversationTurnMean, o.ISLMean, o.NumSessions = MaxTurns, 550, 1000
		}, "more than --max-plan-bytes"},
		{"prefix pool", func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength = 1e8, 10 }, "--prompt-prefix-pool-size 100000000"},
		{"prefix pool at the cap", func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength = MaxDatasetEntries, 1000 }, "more than --max-plan-bytes"},
		{"user context", func(o *Options) { o.UserContextPromptLength = 1e8 }, "--user-context-prompt-length 100000000"},
		{"user context at the cap", func(o *Options) { o.UserContextPromptLength = dataset.MaxPromptTokens }, "more than --max-plan-bytes"},
		{"prefix length", func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength = 1, 1e8 }, "--prompt-prefix-length 100000000"},
		{"prefix length at the cap", func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength = 1, dataset.MaxPromptTokens }, "more than --max-plan-bytes"},
		{"system prompt", func(o *Options) { o.SharedSystemPromptLength = 1e8 }, "--shared-system-prompt-length 100000000"},
		{"system prompt with many requests", func(o *Options) { o.SharedSystemPromptLength, o.RequestCount, o.NumDatasetEntries = 1e6, 1000, 1000 }, "more than --max-plan-bytes"},
		{"largest images", func(o *Options) {
			o.Media.Image.WidthMean, o.Media.Image.HeightMean, o.Media.Image.BatchSize = 16384, 16384, 64
		}, "of them media"},
		{"largest audio", func(o *Options) {
			a := &o.Media.Audio
			a.LengthMean, a.SampleRates, a.NumChannels, a.BatchSize, a.Depths = 3600, []float64{384}, 2, 64, []int{32}
		}, "of them media"},
		{"largest video", func(o *Options) {
			v := &o.Media.Video
			v.Width, v.Height, v.FPS, v.Duration, v.BatchSize = 16384, 16384, 240, 3600, 64
		}, "of them media"},
		{"concurrency", func(o *Options) { o.Concurrency = 1e9 }, "--concurrency 1000000000: want sessions in [0, 1048576]"},
		{"requests past a plan", func(o *Options) { o.NumSessions, o.ConversationTurnMean = 1e7, 10 }, "requests, more than the maximum of 16777216"},
		{"own limit", func(o *Options) { o.RequestCount, o.MaxPlanBytes = 1000, 64<<10 }, "more than --max-plan-bytes 65536 (64 KiB)"},
		{"negative limit", func(o *Options) { o.MaxPlanBytes = -1 }, "--max-plan-bytes -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			c.mut(&o)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Compile(o)
			runtime.ReadMemStats(&after)
			if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want a one-line usage error containing %q", err, c.want)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("allocated %d MiB before refusing", n>>20)
			}
			if _, err := os.Stat(o.Output); err == nil {
				t.Error("a refused plan was written")
			}
		})
	}
}

// TestEstimateFollowsCompiledSize: the estimate of the plan file is within a factor of 2.5
// of the file compiled, for every shape that sizes bodies (history, prefixes, batches,
// rankings, media, live history, an input file), so the limit refuses what is large and
// only that.
func TestEstimateFollowsCompiledSize(t *testing.T) {
	img := t.TempDir()
	cases := []struct {
		name string
		mut  func(*Options)
	}{
		{"single turn", func(o *Options) { o.ISLMean, o.RequestCount = 200, 50 }},
		{"multi-turn compiled history", func(o *Options) { o.ISLMean, o.ConversationTurnMean, o.NumSessions = 100, 6, 8 }},
		{"multi-turn live history", func(o *Options) {
			o.ISLMean, o.ConversationTurnMean, o.NumSessions, o.ConversationHistory = 100, 6, 8, "live"
		}},
		{"replies of the requested length", func(o *Options) { o.ISLMean, o.OSLMean, o.ConversationTurnMean, o.NumSessions = 50, 300, 4, 5 }},
		{"system, context, prefix", func(o *Options) {
			o.SharedSystemPromptLength, o.UserContextPromptLength, o.RequestCount = 300, 200, 30
		}},
		{"prefix pool", func(o *Options) { o.PromptPrefixPoolSize, o.PromptPrefixLength, o.RequestCount = 4, 500, 30 }},
		{"embeddings batch", func(o *Options) {
			o.EndpointType, o.PromptBatchSize, o.OSLMean, o.RequestCount = "embeddings", 8, 0, 20
		}},
		{"rankings", func(o *Options) {
			o.EndpointType, o.RankingsPassagesMean, o.RankingsPassagesPromptTokenMean, o.RankingsQueryPromptTokenMean, o.RequestCount = "cohere_rankings", 5, 100, 30, 20
		}},
		{"more entries than requests", func(o *Options) { o.NumDatasetEntries, o.RequestCount = 500, 40 }},
		{"images", func(o *Options) {
			o.Media.Image.WidthMean, o.Media.Image.HeightMean, o.Media.Image.BatchSize, o.RequestCount = 128, 96, 2, 10
		}},
		{"audio", func(o *Options) { o.Media.Audio.LengthMean, o.RequestCount = 2, 10 }},
		{"input file", func(o *Options) {
			ds := &dataset.Dataset{Name: "multi_turn"}
			for i := range 6 {
				c := dataset.Conversation{SessionID: string(rune('a' + i))}
				for range 4 {
					c.Turns = append(c.Turns, dataset.Turn{Prompt: strings.Repeat("word ", 150), OSL: 60, TimestampNs: dataset.NoTime, DelayNs: dataset.NoTime})
				}
				ds.Conversations = append(ds.Conversations, c)
			}
			o.Dataset = ds
		}},
		{"weka_trace fixed schedule", func(o *Options) { o.Dataset = loadAgentic(t, "weka", dataset.TypeWeka) }},
		{"weka_trace closed loop for a duration, cache-bust, trajectories", func(o *Options) {
			o.Dataset = loadAgentic(t, "weka", dataset.TypeWeka)
			o.Concurrency, o.BenchmarkDuration, o.CacheBust, o.TrajectoryStartMaxRatio = 2, 20, "first_turn_prefix", 1
		}},
		{"dag_jsonl live", func(o *Options) {
			o.Dataset, o.ConversationHistory, o.Concurrency, o.NumSessions = loadAgentic(t, "dag_branching.jsonl", ""), "live", 1, 6
		}},
		{"input file with images", func(o *Options) {
			o.Media.Image.WidthMean, o.Media.Image.HeightMean = 64, 64
			g, err := newTestImage(filepath.Join(img, "a.png"))
			if err != nil {
				t.Fatal(err)
			}
			ds := untimed(4)
			for i := range ds.Conversations {
				ds.Conversations[i].Turns[0].Media = []dataset.MediaRef{{Kind: media.Image, Ref: g}}
			}
			o.Dataset, o.Media = ds, DefaultOptions().Media
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			c.mut(&o)
			var e Estimate
			if o.Dataset != nil {
				e = o.estimate(withOSL(o.Dataset, &o))
			} else {
				e = o.estimate(nil)
			}
			_, err := Compile(o)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(o.Output)
			if err != nil {
				t.Fatal(err)
			}
			p, err := mmapds.Open(o.Output, mmapds.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			got := float64(st.Size())
			t.Logf("estimate %.0f bytes, file %d (ratio %.2f)", e.FileBytes, st.Size(), e.FileBytes/got)
			if r := e.FileBytes / got; r < 1/2.5 || r > 2.5 {
				t.Errorf("estimated %s, the file is %d bytes (ratio %.2f)", e, st.Size(), r)
			}
			if e.Requests < float64(p.Len()) {
				t.Errorf("estimated %v requests, the plan has %d", e.Requests, p.Len())
			}
		})
	}
}

// newTestImage writes a 64×64 PNG of noise at path and returns the path.
func newTestImage(path string) (string, error) {
	b, err := media.Encode(image.NewRGBA(image.Rect(0, 0, 64, 64)), "png", false)
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

// TestBoundsDocumented: docs/plan-format.md "Bounds" gives every bound as checked.
func TestBoundsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "plan-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, bd := range Bounds() {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, "| `"+bd.Flag+"` | "+bd.String()) {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/plan-format.md has no row | `%s` | %s |", bd.Flag, bd)
		}
	}
}
