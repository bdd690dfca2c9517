package mockllm

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// slack scales a timing tolerance for the race detector, which slows
// the client-side measurement (the server's own lag is checked by the
// benchmark and by cmd/mockllm's outside-the-process test).
func slack(d time.Duration) time.Duration {
	if raceEnabled {
		return 3 * d
	}
	return d
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// timedStream sends one streaming request and returns the send time and
// the collected result with event times.
func timedStream(t *testing.T, api apiCase, base string, extra map[string]any) (time.Time, result, []sseEv) {
	t.Helper()
	t0 := time.Now()
	r, evs := api.call(t, base, true, extra)
	return t0, r, evs
}

// TestStreamTiming checks TTFT and ITL for every streaming API from the
// client side: medians over several streams, tolerant of a loaded CI
// machine (the exact figures are checked from outside the process in
// cmd/mockllm and by the emit-lag benchmark).
func TestStreamTiming(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 30*time.Millisecond, 4*time.Millisecond
	o.ReasoningTokens = 2
	base := startServer(t, o)
	const n = 12
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			retryTiming(t, func() error {
				var ttfts, gaps, spans []time.Duration
				for range 3 {
					t0, r, evs := timedStream(t, api, base, map[string]any{"max": n, "ignore_eos": true})
					if r.tokenEvents != n {
						t.Fatalf("%d token events, want %d", r.tokenEvents, n)
					}
					first := evs[r.eventTimes[0]].at
					ttfts = append(ttfts, first.Sub(t0))
					for i := 1; i < len(r.eventTimes); i++ {
						gaps = append(gaps, evs[r.eventTimes[i]].at.Sub(evs[r.eventTimes[i-1]].at))
					}
					spans = append(spans, evs[r.eventTimes[n-1]].at.Sub(first))
				}
				var e errorList
				if m := median(ttfts); m < o.TTFT || m > o.TTFT+slack(5*time.Millisecond) {
					e.add("median TTFT %v, want %v (+5ms)", m, o.TTFT)
				}
				if m := median(gaps); m < o.ITL-slack(time.Millisecond) || m > o.ITL+slack(time.Millisecond) {
					e.add("median ITL %v, want %v ±1ms", m, o.ITL)
				}
				// An absolute schedule does not drift: the whole stream spans (n-1) ITL.
				if m, want := median(spans), time.Duration(n-1)*o.ITL; m < want-slack(2*time.Millisecond) || m > want+slack(3*time.Millisecond) {
					e.add("median span %v, want %v", m, want)
				}
				return e.err()
			})
		})
	}
}

// TestNonStreamingTiming: a non-streaming answer comes at TTFT + (n-1)*ITL.
func TestNonStreamingTiming(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 20*time.Millisecond, 3*time.Millisecond
	base := startServer(t, o)
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			retryTiming(t, func() error {
				var took []time.Duration
				for range 3 {
					t0 := time.Now()
					api.call(t, base, false, map[string]any{"max": 11, "ignore_eos": true})
					took = append(took, time.Since(t0))
				}
				want := o.TTFT + 10*o.ITL
				if m := median(took); m < want || m > want+slack(5*time.Millisecond) {
					return fmt.Errorf("median latency %v, want %v (+5ms)", m, want)
				}
				return nil
			})
		})
	}
}

func TestTTFTPerInputToken(t *testing.T) {
	o := testOptions()
	o.TTFT = 5 * time.Millisecond
	o.TTFTPerInputToken = time.Millisecond
	base := startServer(t, o)
	for _, words := range []int{1, 40} {
		prompt := strings.TrimSpace(strings.Repeat("hello ", words))
		body := map[string]any{"messages": []map[string]any{{"role": "user", "content": prompt}}, "max_tokens": 1, "stream": true}
		retryTiming(t, func() error {
			var ttfts []time.Duration
			for range 3 {
				t0 := time.Now()
				resp := post(t, base+"/v1/chat/completions", body)
				evs, _ := readSSE(resp.Body)
				resp.Body.Close()
				ttfts = append(ttfts, evs[1].at.Sub(t0)) // [0] is the role chunk
			}
			want := o.TTFT + time.Duration(fakeTok.Count(prompt))*o.TTFTPerInputToken
			if m := median(ttfts); m < want || m > want+slack(5*time.Millisecond) {
				return fmt.Errorf("%d-token prompt: median TTFT %v, want %v", fakeTok.Count(prompt), m, want)
			}
			return nil
		})
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

// TestJitterOnTheWire: with ITL jitter the gaps a client sees vary as
// configured; with TTFT jitter, first tokens spread.
func TestJitterOnTheWire(t *testing.T) {
	o := testOptions()
	o.ITL, o.ITLJitterCV = 6*time.Millisecond, 0.6
	o.TTFT, o.TTFTJitterCV = 10*time.Millisecond, 0.6
	base := startServer(t, o)
	retryTiming(t, func() error {
		var gaps, ttfts []float64
		for i := range 4 {
			body := map[string]any{"messages": []map[string]any{{"role": "user", "content": fmt.Sprint("p", i)}}, "max_tokens": 30, "ignore_eos": true, "stream": true}
			t0 := time.Now()
			resp := post(t, base+"/v1/chat/completions", body)
			evs, _ := readSSE(resp.Body)
			resp.Body.Close()
			ttfts = append(ttfts, float64(evs[1].at.Sub(t0)))
			for j := 2; j < len(evs)-1; j++ {
				gaps = append(gaps, float64(evs[j].at.Sub(evs[j-1].at)))
			}
		}
		var e errorList
		mean, sd := meanSD(gaps)
		hi := 0.9 // client-side noise only adds variance
		if raceEnabled {
			hi = 1.3
		}
		if cv := sd / mean; cv < 0.4 || cv > hi {
			e.add("ITL CV on the wire %.2f, want about 0.6 (mean %v)", cv, time.Duration(mean))
		}
		if _, sd := meanSD(ttfts); sd < float64(time.Millisecond) {
			e.add("TTFT spread %v: jitter not applied", time.Duration(sd))
		}
		return e.err()
	})
}

// TestMaxBatch: with one slot, concurrent requests queue and each one's
// timing starts at admission; /metrics shows them waiting.
func TestMaxBatch(t *testing.T) {
	o := testOptions()
	o.MaxBatch = 1
	o.TTFT = 40 * time.Millisecond
	url, stop, err := Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	retryTiming(t, func() error {
		var wg sync.WaitGroup
		took := make([]time.Duration, 3)
		t0 := time.Now()
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "x"}}, "max_tokens": 1}
				resp := post(t, url+"/v1/chat/completions", body)
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				took[i] = time.Since(t0)
			}()
		}
		time.Sleep(15 * time.Millisecond)
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wg.Wait()
		var e errorList
		if !strings.Contains(string(m), "mockllm_requests_running 1\n") || !strings.Contains(string(m), "mockllm_requests_waiting 2\n") {
			e.add("metrics 15ms into queueing: %s", m)
		}
		slices.Sort(took)
		if took[0] < o.TTFT {
			e.add("first request done after %v, before TTFT %v", took[0], o.TTFT)
		}
		// Each queued request starts when the one before it leaves.
		for i := 1; i < len(took); i++ {
			if d := took[i] - took[i-1]; d < o.TTFT-slack(3*time.Millisecond) || d > o.TTFT+slack(10*time.Millisecond) {
				e.add("request %d done %v after request %d, want about %v", i, d, i-1, o.TTFT)
			}
		}
		return e.err()
	})
}

// TestEmitLagRecorded: every timed event lands in the lag histogram and
// the lag is small on an idle server.
func TestEmitLagRecorded(t *testing.T) {
	o := testOptions()
	o.TTFT, o.ITL = 5*time.Millisecond, 2*time.Millisecond
	retryTiming(t, func() error {
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
		if st.EmitLag.P50 > slack(2*time.Millisecond) || st.EmitLag.P50 <= 0 {
			return fmt.Errorf("median emit lag %v", st.EmitLag.P50)
		}
		return nil
	})
}

// TestClockWakesOnTime exercises the clock directly: many waiters with
// scattered instants all wake after their instant, and promptly.
func TestClockWakesOnTime(t *testing.T) {
	c := theClock()
	retryTiming(t, func() error {
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
		slices.Sort(lags)
		if lags[0] < 0 {
			t.Fatalf("woke %v early", -lags[0])
		}
		if m := lags[len(lags)/2]; m > slack(time.Millisecond) {
			return fmt.Errorf("median wake lag %v", m)
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
