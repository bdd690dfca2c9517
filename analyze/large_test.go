package analyze

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

var (
	largeEvents = flag.Int("large-events", 0, "TestLargeRun: build and analyse a run of this many SSE events (e.g. 10000000)")
	largeKeep   = flag.String("large-dir", "", "TestLargeRun: build the run here and keep it (for timing bin/analyze on it)")
)

// TestLargeRun is the memory check of the issue: a run of -large-events SSE events (10 million:
// about 1.9 GB of logs) is analysed, records included, and the process's peak resident memory
// is reported. It is skipped unless -large-events is given.
func TestLargeRun(t *testing.T) {
	if *largeEvents == 0 {
		t.Skip("pass -large-events 10000000 to run")
	}
	dir := *largeKeep
	if dir == "" {
		dir = t.TempDir()
	}
	const tokens, workers = 128, 8
	perRequest := tokens + 3 // role chunk, content, usage + [DONE]
	n := *largeEvents / perRequest
	begin := time.Now()
	if _, err := os.Stat(filepath.Join(dir, rawlog.ManifestName)); err == nil && *largeKeep != "" {
		t.Logf("reusing the run in %s", dir)
	} else {
		buildLargeRun(t, dir, n, tokens, workers)
		t.Logf("built %d requests (%d events) in %v", n, n*perRequest, time.Since(begin))
	}
	runtime.GC()
	before := vmHWM(t)
	begin = time.Now()
	out, err := os.Create(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(out)
	s, err := Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}, TempDir: dir}, bw)
	if err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	out.Close()
	elapsed := time.Since(begin)
	var b bytes.Buffer
	WriteConsole(&b, s)
	t.Logf("analysed %d events in %v (%.0f events/s on %d cores); peak RSS %d MiB (%d MiB before)",
		n*perRequest, elapsed, float64(n*perRequest)/elapsed.Seconds(), runtime.GOMAXPROCS(0), vmHWM(t)>>20, before>>20)
	if s.Counts.Valid != int64(n) {
		t.Fatalf("%d valid of %d", s.Counts.Valid, n)
	}
	if peak := vmHWM(t); peak > 1<<30 {
		t.Errorf("peak RSS %d MiB exceeds 1 GiB", peak>>20)
	}
}

// buildLargeRun streams a large synthetic run to dir with little memory.
func buildLargeRun(t *testing.T, dir string, n, tokens, workers int) {
	t.Helper()
	if err := mkdir(dir); err != nil {
		t.Fatal(err)
	}
	pw, err := mmapds.Create(filepath.Join(dir, "plan.plan"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := mmapds.Record{SendOffsetNs: int64(i) * ms, DelayNs: -1, Session: uint32(i), ISL: 128, OSL: uint32(tokens), Phase: mmapds.PhaseProfile}
		if err := pw.Add(r, []byte(`{"model":"mock","messages":[]}`)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := pw.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Streaming: true,
		Model: "mock", OfferedRate: 1000, Tokenizer: "words", ProfileCount: n})
	if err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%x", h)
	m := &rawlog.Manifest{Tool: "llmbench", PlanHash: hash, PlanPath: "plan.plan", StartUnixNs: 1_767_225_600_000_000_000, Status: rawlog.StatusComplete}
	vllm := func(id int, delta string) string {
		return sseData(fmt.Sprintf(`{"id":"chatcmpl-%016x","object":"chat.completion.chunk","created":1767225600,"model":"mock","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":null}]}`, id, delta))
	}
	words := strings.Fields("the of and to in is that it was for on are as with his they at be this from")
	for w := 0; w < workers; w++ {
		name := fmt.Sprintf("worker-%03d.rawlog", w)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		lw, err := rawlog.NewWriter(bw, rawlog.Header{Worker: w, PlanHash: hash})
		if err != nil {
			t.Fatal(err)
		}
		q := &rawlog.Request{Outcome: rawlog.OutcomeCompleted, Status: 200}
		planned := 0
		for i := w; i < n; i += workers {
			planned++
			send := int64(i)*ms + 50*us
			*q = rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: int64(i) * ms,
				ReadyNs: int64(i) * ms, WriteStartNs: send, WriteEndNs: send + 10*us, HeaderNs: send + ms, ConnectStartNs: -1, ConnectEndNs: -1,
				Body: q.Body[:0], ReadNs: q.ReadNs[:0], ReadEnd: q.ReadEnd[:0]}
			add := func(at int64, s string) {
				q.Body = append(q.Body, s...)
				q.ReadNs = append(q.ReadNs, at)
				q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
			}
			add(send+ms, vllm(i, `{"role":"assistant","content":""}`))
			for k := 0; k < tokens; k++ {
				add(send+20*ms+int64(k)*5*ms+int64(i%7)*us, vllm(i, `{"content":" `+words[(i+k)%len(words)]+`"}`))
			}
			add(send+20*ms+int64(tokens)*5*ms, usageChunk(128, tokens)+doneEvent)
			q.EndNs = q.ReadNs[len(q.ReadNs)-1] + 10*us
			if i%1000 == 0 {
				if err := lw.WriteCPU(rawlog.CPUSample{TimeNs: send, UserNs: send / 5, SysNs: send / 20}); err != nil {
					t.Fatal(err)
				}
			}
			if err := lw.WriteRequest(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(rawlog.Footer{Requests: planned, Status: "complete"}); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		m.Workers = append(m.Workers, rawlog.WorkerInfo{ID: w, Log: name, Planned: planned, Status: "complete"})
	}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// vmHWM is the process's peak resident set size (Linux), or 0.
func vmHWM(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}
