package mockllm

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
)

// The timing tests check the schedule, not the machine: mockllm's schedule log (its
// planned and send instants per request) must be exactly what the options say, no event may
// leave before it is due, and no client can read one before it left. These hold on a 2-core
// machine under any load. How late the server is (emit lag) is the benchmarks' business
// (BenchmarkEmitLag1000Streams); where a test bounds a wake-up delay, the bound comes from the
// machine's noise measured at the same time (noiseBound).

// slack scales a timing tolerance for the race detector, which slows
// every goroutine switch.
func slack(d time.Duration) time.Duration {
	if raceEnabled {
		return 3 * d
	}
	return d
}

// TestStreamTiming: for every streaming API, token event j is due exactly TTFT + j·ITL after
// arrival (absolute instants: no drift), leaves no earlier, and the client reads every
// event, in order, no earlier than the server sent it.
func TestStreamTiming(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 30*time.Millisecond, 4*time.Millisecond
	o.ReasoningTokens = 2
	base, sl := startLogged(t, o)
	const n = 12
	seen := 0
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			r, evs := api.call(t, base, true, map[string]any{"max": n, "ignore_eos": true})
			if r.tokenEvents != n {
				t.Fatalf("%d token events, want %d", r.tokenEvents, n)
			}
			rec := sl.last(t, &seen)
			if want := planned(o.TTFT, o.ITL, n); !slices.Equal(rec.DueNs, want) {
				t.Errorf("due %v, want %v", rec.DueNs, want)
			}
			for j := range rec.SentNs {
				if rec.SentNs[j] < rec.DueNs[j] {
					t.Errorf("event %d sent %v before due %v", j, rec.SentNs[j], rec.DueNs[j])
				}
			}
			checkReceivedAfter(t, rec, evs, r.eventTimes)
		})
	}
}

// TestNonStreamingTiming: a non-streaming answer is due at TTFT + (n-1)*ITL and no client
// has it sooner.
func TestNonStreamingTiming(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 20*time.Millisecond, 3*time.Millisecond
	base, sl := startLogged(t, o)
	seen := 0
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			t0 := time.Now()
			api.call(t, base, false, map[string]any{"max": 11, "ignore_eos": true})
			took := time.Since(t0)
			rec := sl.last(t, &seen)
			want := o.TTFT + 10*o.ITL
			if !slices.Equal(rec.DueNs, []int64{int64(want)}) || len(rec.SentNs) != 1 || rec.SentNs[0] < rec.DueNs[0] {
				t.Errorf("due %v sent %v, want due [%d], sent after", rec.DueNs, rec.SentNs, want)
			}
			if took < want {
				t.Errorf("answered after %v, before it was due (%v)", took, want)
			}
		})
	}
}

func TestTTFTPerInputToken(t *testing.T) {
	o := testOptions()
	o.TTFT = 5 * time.Millisecond
	o.TTFTPerInputToken = time.Millisecond
	base, sl := startLogged(t, o)
	seen := 0
	for _, words := range []int{1, 40} {
		prompt := strings.TrimSpace(strings.Repeat("hello ", words))
		body := map[string]any{"messages": []map[string]any{{"role": "user", "content": prompt}}, "max_tokens": 1, "stream": true}
		t0 := time.Now()
		resp := post(t, base+"/v1/chat/completions", body)
		evs, _ := readSSE(resp.Body)
		resp.Body.Close()
		rec := sl.last(t, &seen)
		want := o.TTFT + time.Duration(fakeTok.Count(prompt))*o.TTFTPerInputToken
		if !slices.Equal(rec.DueNs, []int64{int64(want)}) {
			t.Errorf("%d-token prompt: first token due %v, want [%d]", fakeTok.Count(prompt), rec.DueNs, want)
		}
		if got := evs[1].at.Sub(t0); got < want { // [0] is the role chunk
			t.Errorf("%d-token prompt: first token read after %v, before it was due (%v)", fakeTok.Count(prompt), got, want)
		}
	}
}

// TestJitterDraws checks the lognormal draws: mean and CV as configured.
func TestJitterDraws(t *testing.T) {
	for _, cv := range []float64{0, 0.2, 0.5, 1} {
		t.Run(fmt.Sprint(cv), func(t *testing.T) {
			o := testOptions()
			o.ITL, o.ITLJitterCV = 10*time.Millisecond, cv
			o.TTFT, o.TTFTJitterCV = 50*time.Millisecond, cv
			s, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			req := &genRequest{promptTokens: 3, maxTokens: 1}
			var gaps, ttfts []float64
			for i := range 4000 {
				g := s.plan(apiChat, req, uint64(i), uint64(i))
				ttfts = append(ttfts, float64(g.ttft(&s.opts)))
				gaps = append(gaps, float64(g.gap(&s.opts)))
			}
			for name, xs := range map[string][]float64{"itl": gaps, "ttft": ttfts} {
				mean, sd := meanSD(xs)
				want := float64(o.ITL)
				if name == "ttft" {
					want = float64(o.TTFT)
				}
				if math.Abs(mean/want-1) > 0.05 {
					t.Errorf("%s mean %v, want %v", name, time.Duration(mean), time.Duration(want))
				}
				if got := sd / mean; math.Abs(got-cv) > 0.08*cv+1e-9 {
					t.Errorf("%s CV %.3f, want %.3f", name, got, cv)
				}
			}
		})
	}
}

func meanSD(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}

// TestJitterOnTheWire: with ITL jitter the gaps the server schedules vary as configured and
// every event still leaves no earlier than its jittered instant; with TTFT jitter, first
// tokens spread. (The draws themselves are TestJitterDraws'.)
func TestJitterOnTheWire(t *testing.T) {
	o := testOptions()
	o.ITL, o.ITLJitterCV = 6*time.Millisecond, 0.6
	o.TTFT, o.TTFTJitterCV = 10*time.Millisecond, 0.6
	base, sl := startLogged(t, o)
	var gaps, ttfts []float64
	for i := range 4 {
		body := map[string]any{"messages": []map[string]any{{"role": "user", "content": fmt.Sprint("p", i)}}, "max_tokens": 30, "ignore_eos": true, "stream": true}
		resp := post(t, base+"/v1/chat/completions", body)
		evs, _ := readSSE(resp.Body)
		resp.Body.Close()
		rec := sl.last(t, new(int(i)))
		tokens := make([]int, 0, 30)
		for j := 1; j <= 30; j++ { // [0] role chunk, then 30 token events, usage, [DONE]
			tokens = append(tokens, j)
		}
		checkReceivedAfter(t, rec, evs, tokens)
		ttfts = append(ttfts, float64(rec.DueNs[0]))
		for j := 1; j < len(rec.DueNs); j++ {
			gaps = append(gaps, float64(rec.DueNs[j]-rec.DueNs[j-1]))
		}
	}
	mean, sd := meanSD(gaps)
	if cv := sd / mean; cv < 0.4 || cv > 0.8 {
		t.Errorf("scheduled ITL CV %.2f, want about 0.6 (mean %v)", cv, time.Duration(mean))
	}
	if _, sd := meanSD(ttfts); sd < float64(time.Millisecond) {
		t.Errorf("TTFT spread %v: jitter not applied", time.Duration(sd))
	}
}

// TestMaxBatch: with one slot, concurrent requests queue: /metrics shows one running and
// two waiting, and each queued request's schedule starts (admission) only after the one
// before it sent its answer, its TTFT counted from there.
func TestMaxBatch(t *testing.T) {
	o := testOptions()
	o.MaxBatch = 1
	o.TTFT = 200 * time.Millisecond // the window in which the other two must arrive
	sl := &scheduleBuf{}
	o.ScheduleLog = sl
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveOn(t, s)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "x"}}, "max_tokens": 1}
			resp := post(t, url+"/v1/chat/completions", body)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}()
	}
	// Poll until the queue is full (no sleep standing in for "the requests have arrived").
	var metrics string
	for deadline := time.Now().Add(30 * time.Second); metrics == "" && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st := s.Stats(); st.Running == 1 && st.Waiting == 2 {
			resp, err := http.Get(url + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			m, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			metrics = string(m)
		} else if len(sl.records(t)) > 0 {
			t.Errorf("the first answer left before the queue was seen full: %+v", st)
			break
		}
	}
	if metrics != "" && (!strings.Contains(metrics, "mockllm_requests_running 1\n") || !strings.Contains(metrics, "mockllm_requests_waiting 2\n")) {
		t.Errorf("/metrics while one runs and two wait: %s", metrics)
	}
	wg.Wait()
	recs := sl.records(t)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	slices.SortFunc(recs, func(a, b ScheduleRecord) int {
		return int((a.ArrivalUnixNs + a.StartNs) - (b.ArrivalUnixNs + b.StartNs))
	})
	for i, r := range recs {
		if !slices.Equal(r.DueNs, []int64{r.StartNs + int64(o.TTFT)}) || len(r.SentNs) != 1 {
			t.Errorf("request %d: due %v sent %v, want due TTFT after its start %d", i, r.DueNs, r.SentNs, r.StartNs)
		}
		if i == 0 {
			continue
		}
		prev := recs[i-1]
		if start, left := r.ArrivalUnixNs+r.StartNs, prev.ArrivalUnixNs+prev.SentNs[0]; start < left {
			t.Errorf("request %d admitted at %d, before request %d sent its answer at %d", i, start, i-1, left)
		}
	}
	if recs[1].StartNs <= 0 || recs[2].StartNs <= 0 {
		t.Errorf("queued requests started at %d and %d after arrival, want > 0", recs[1].StartNs, recs[2].StartNs)
	}
}

// TestEmitLagRecorded: every timed event lands in the lag histogram, and the histogram
// agrees with the schedule log: each event's lag (write returned − due) is at least its send
// delay (sent − due), so the largest recorded lag is at least the largest send delay. How
// small the lag is is the benchmarks' (BenchmarkEmitLag1000Streams).
func TestEmitLagRecorded(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 5*time.Millisecond, 2*time.Millisecond
	sl := &scheduleBuf{}
	o.ScheduleLog = sl
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveOn(t, s)
	for range 3 {
		resp := post(t, "http://"+addr+"/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": "x"}}, "max_tokens": 20, "ignore_eos": true, "stream": true})
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	st := s.Stats()
	if st.EmitLag.Count != 60 || st.GeneratedTokens != 60 || st.Requests != 3 {
		t.Fatalf("recorded %d emits, %d tokens, %d requests; want 60, 60, 3", st.EmitLag.Count, st.GeneratedTokens, st.Requests)
	}
	var maxSend int64
	for _, r := range sl.records(t) {
		for j := range r.SentNs {
			maxSend = max(maxSend, r.SentNs[j]-r.DueNs[j])
		}
	}
	// HdrHistogram keeps 3 significant digits: allow 0.1 % below.
	if st.EmitLag.P50 <= 0 || float64(st.EmitLag.Max) < 0.999*float64(maxSend) {
		t.Errorf("emit lag p50 %v max %v; the schedule log's largest send delay is %v", st.EmitLag.P50, st.EmitLag.Max, time.Duration(maxSend))
	}
}

// TestClockWakesOnTime exercises the clock directly: many waiters with
// scattered instants all wake after their instant (never early), and
// promptly: the median lag stays within a bound set by the machine's noise,
// measured at the same time with Go's own timers (noiseBound), so that a
// loaded machine widens the bound as much as it delays the clock, while a
// clock that misses its instants by whole timer periods still fails.
func TestClockWakesOnTime(t *testing.T) {
	c := theClock()
	retryTiming(t, func() error {
		noise := startNoise()
		var mu sync.Mutex
		var lags []time.Duration
		var wg sync.WaitGroup
		base := monoNow() + int64(5*time.Millisecond)
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ch := make(chan struct{}, 1)
				at := base + int64(i%50)*int64(317*time.Microsecond)
				if !c.sleepUntil(at, ch, nil) {
					t.Error("sleepUntil returned false without done")
				}
				now := monoNow()
				mu.Lock()
				lags = append(lags, time.Duration(now-at))
				mu.Unlock()
			}()
		}
		wg.Wait()
		bound := noise.bound()
		slices.Sort(lags)
		if lags[0] < 0 {
			t.Fatalf("woke %v early", -lags[0])
		}
		if m := lags[len(lags)/2]; m > bound {
			return fmt.Errorf("median wake lag %v, bound %v", m, bound)
		}
		return nil
	})
	// done ends a wait early.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if c.sleepUntil(monoNow()+int64(time.Hour), make(chan struct{}, 1), ctx.Done()) {
		t.Error("sleepUntil reached an instant an hour away")
	}
}

// noiseSampler measures the machine's scheduling noise while a check runs (internal/noise).
type noiseSampler struct{ s *noise.Sampler }

func startNoise() *noiseSampler { return &noiseSampler{noise.Start(-1)} }

// bound stops the sampler and returns the lag a wake-up may have in the median: 1 ms (×3
// under the race detector) plus four times the p90 lateness of the reference sleeps.
func (n *noiseSampler) bound() time.Duration {
	late := n.s.Stop()
	if len(late) == 0 {
		return slack(time.Millisecond)
	}
	return slack(time.Millisecond) + 4*late.Quantile(0.9)
}

// TestClockKeepsASpareP: a process with one P (GOMAXPROCS=1, as a process pinned to one CPU
// gets) has two once the clock runs, so its thread asleep in the futex does not hold the only
// P the server's goroutines have.
func TestClockKeepsASpareP(t *testing.T) {
	if os.Getenv("MOCKLLM_SPARE_P_CHILD") == "1" {
		before := runtime.GOMAXPROCS(0)
		theClock()
		fmt.Printf("GOMAXPROCS %d -> %d\n", before, runtime.GOMAXPROCS(0))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestClockKeepsASpareP$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MOCKLLM_SPARE_P_CHILD=1", "GOMAXPROCS=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GOMAXPROCS 1 -> 2") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestClockOffsetNs: no offset at the base, or at any instant derived from it by Add (both
// clocks move together); a present reading is within the host's wall-clock steps of it.
func TestClockOffsetNs(t *testing.T) {
	if ClockOffsetNs(monoBase) != 0 || ClockOffsetNs(monoBase.Add(time.Hour)) != 0 {
		t.Fatalf("offset at the base %d, an hour on %d", ClockOffsetNs(monoBase), ClockOffsetNs(monoBase.Add(time.Hour)))
	}
	if off := ClockOffsetNs(time.Now()); off > int64(time.Second) || off < -int64(time.Second) {
		t.Errorf("offset now %v: the wall clock stepped during the test?", time.Duration(off))
	}
}
