package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/tokenizer"
)

// benchLog is a raw log of requests streamed the way vLLM does (role chunk, one content
// chunk of one token per event, a usage chunk, [DONE]); every 8th read carries two events.
func benchLog(b *testing.B, requests, tokens int) (log []byte, events int) {
	b.Helper()
	var buf bytes.Buffer
	w, err := rawlog.NewWriter(&buf, rawlog.Header{Worker: 0, PlanHash: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	vllm := func(delta string) string {
		return sseData(`{"id":"chatcmpl-8b8c6d2f2a1e4d0f","object":"chat.completion.chunk","created":1767225600,"model":"mock","choices":[{"index":0,"delta":` +
			delta + `,"logprobs":null,"finish_reason":null}]}`)
	}
	for i := 0; i < requests; i++ {
		send := int64(i) * 10 * ms
		q := &rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: send, ReadyNs: send,
			WriteStartNs: send, WriteEndNs: send + 10*us, HeaderNs: send + ms, ConnectStartNs: -1, ConnectEndNs: -1}
		add := func(at int64, s string) {
			q.Body = append(q.Body, s...)
			q.ReadNs = append(q.ReadNs, at)
			q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
		}
		add(send+ms, vllm(`{"role":"assistant","content":""}`))
		events++
		for k := 0; k < tokens; k++ {
			ev := vllm(`{"content":" w"}`)
			events++
			if k%8 == 7 && k+1 < tokens {
				ev += vllm(`{"content":" w"}`)
				k++
				events++
			}
			add(send+20*ms+int64(k)*5*ms, ev)
		}
		add(send+20*ms+int64(tokens)*5*ms, usageChunk(128, tokens)+doneEvent)
		events += 2
		q.EndNs = q.ReadNs[len(q.ReadNs)-1] + 10*us
		if err := w.WriteRequest(q); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes(), events
}

// BenchmarkAnalyzeEvents measures the analyzer's inner loop on one core: reading raw log
// records, splitting SSE events, parsing them and accumulating every metric. The baseline
// does the naive thing in the same process (bytes.Split on blank lines, encoding/json per
// event) and only extracts the content, so the ratio understates the difference.
func BenchmarkAnalyzeEvents(b *testing.B) {
	const requests, tokens = 200, 128
	log, events := benchLog(b, requests, tokens)
	ep, _ := endpoint.Lookup("chat")
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 128, OSL: tokens}
	run := func(b *testing.B, tok TokenCounter) {
		b.ReportAllocs()
		b.SetBytes(int64(len(log)))
		proc := newProcessor(requestConfig{ep: ep, tokens: true, tok: tok})
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			r, err := rawlog.NewReader(bytes.NewReader(log), "bench")
			if err != nil {
				b.Fatal(err)
			}
			c := newCollector(nil, DefaultExactLimit)
			for {
				k, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if k == rawlog.KindRequest {
					c.add(proc.compute(r.Request(), &rec, 100))
				}
			}
			if c.valid != requests {
				b.Fatalf("%d valid requests", c.valid)
			}
		}
		reportRates(b, events, cpu0)
	}
	b.Run("analyze", func(b *testing.B) { run(b, wordCounter{}) })
	b.Run("analyze_builtin_tokenizer", func(b *testing.B) {
		tok, err := tokenizer.Builtin()
		if err != nil {
			b.Skip(err)
		}
		run(b, tok)
	})
	b.Run("baseline_split_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(log)))
		type chunk struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			r, err := rawlog.NewReader(bytes.NewReader(log), "bench")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				k, err := r.Next()
				if err == io.EOF {
					break
				}
				if k != rawlog.KindRequest {
					continue
				}
				for _, ev := range bytes.Split(r.Request().Body, []byte("\n\n")) {
					data := bytes.TrimPrefix(ev, []byte("data: "))
					if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
						continue
					}
					var c chunk
					if err := json.Unmarshal(data, &c); err != nil {
						b.Fatal(err)
					}
					if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
						n++
					}
				}
			}
			if n != requests*tokens {
				b.Fatal(fmt.Sprint(n, " content events"))
			}
		}
		reportRates(b, events, cpu0)
	})
}

// reportRates reports events per wall second and per CPU second. Run with -cpu 1: the CPU
// rate is then the rate of one core even on a machine shared with other work.
func reportRates(b *testing.B, events int, cpu0 time.Duration) {
	total := float64(events) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "events/s")
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(total/cpu, "events/cpu-s")
	}
}
