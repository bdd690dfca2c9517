package analyze

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// scenario generates a deterministic synthetic run: what mockllm and replay would produce for
// a server with a known TTFT and ITL, including the client-side effects analyze must handle
// (several events in one read, errors, warmup, lag behind the schedule).
type scenario struct {
	n, warmup, workers int
	ttft, itl          int64
	tokens, reasoning  int
	rate               float64 // open-loop requests/s; 0 = closed loop
	nominal            float64 // > 0: a request_rate plan asked for this rate (its instants keep rate)
	bodies             int     // > 0: the plan stores this many bodies, record i sending i % bodies
	concurrency        int     // slots; with rate, a ceiling
	lag                int64   // dispatch lag added to every send
	errEvery           int     // every k-th profile request gets HTTP 500
	clientErrEvery     int     // every k-th profile request fails to connect: out of file descriptors
	packEvery          int     // every k-th request gets chunks 2 and 3 in one read
	cancelEvery        int     // every k-th profile request is cancelled by the plan
	cpuPct             float64 // worker CPU use; 0 = no CPU samples
	gpus               int     // GPUs in the telemetry log
	streaming          bool
	endpoint           string
	start              int64  // wall-clock zero
	sessionHeader      string // run.json options.session_header: the header replay sent the session id in
	images             int    // images every profile request sends (the plan's media entry)
	// The server's quirks. closesAfterResponse: every request after the first per slot went
	// on a new connection because the server closes them all (raw server_closed); every
	// reconnectEvery-th of those was first written on the dead connection and sent again 3 ms
	// later (raw reconnects). produced: output tokens each response carries when it is not
	// the requested tokens (a server ignoring the limit); limitField: the plan bodies' limit
	// member.
	closesAfterResponse bool
	reconnectEvery      int
	produced            int
	limitField          string
	contextExceeded     bool // streams end with llama.cpp's "Context size has been exceeded." event
}

func (sc scenario) withDefaults() scenario {
	if sc.workers == 0 {
		sc.workers = 1
	}
	if sc.endpoint == "" {
		sc.endpoint = "chat"
	}
	if sc.start == 0 {
		sc.start = 1_767_225_600_000_000_000 // 2026-01-01T00:00:00Z
	}
	return sc
}

// build writes the plan and the run directory under dir and returns the run directory.
func (sc scenario) build(t testing.TB, dir string) string {
	t.Helper()
	sc = sc.withDefaults()
	runDir := filepath.Join(dir, "run")
	total := sc.warmup + sc.n
	ps := planSpec{meta: mmapds.Meta{Endpoint: sc.endpoint, Model: "mock", Streaming: sc.streaming,
		Concurrency: sc.concurrency, OfferedRate: sc.rate, WarmupCount: sc.warmup, ProfileCount: sc.n,
		Tokenizer: "words", Seed: 42, Spec: map[string]any{"isl": 100, "osl": sc.tokens, "rate": sc.rate}}}
	if sc.images > 0 {
		ps.meta.Media = []mmapds.MediaEntry{{Images: sc.images}}
	}
	ps.bodies = sc.bodies
	if sc.nominal > 0 {
		ps.meta.TimingMode, ps.meta.OfferedRate = "request_rate", sc.nominal
	}
	if sc.limitField != "" {
		ps.bodyExtra = fmt.Sprintf(`,%q:%d`, sc.limitField, sc.tokens)
	}
	produced := sc.tokens
	if sc.produced > 0 {
		produced = sc.produced
	}
	for i := 0; i < total; i++ {
		r := mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), ISL: 100, OSL: uint32(sc.tokens), Phase: mmapds.PhaseProfile}
		if i < sc.warmup {
			r.Phase = mmapds.PhaseWarmup
		}
		if sc.rate > 0 {
			r.SendOffsetNs = int64(float64(i) / sc.rate * 1e9)
		}
		if sc.images > 0 && r.Phase == mmapds.PhaseProfile {
			r.Media = 1
		}
		if sc.cancelEvery > 0 && i >= sc.warmup && (i-sc.warmup)%sc.cancelEvery == sc.cancelEvery-1 {
			r.CancelAfterNs = sc.ttft / 2
		}
		ps.recs = append(ps.recs, r)
	}
	if err := mkdir(runDir); err != nil {
		t.Fatal(err)
	}
	hash := writePlan(t, filepath.Join(runDir, "plan.plan"), ps)

	slots := sc.concurrency
	if slots == 0 {
		slots = total
	}
	free := make([]int64, slots)
	logs := make([]workerLog, sc.workers)
	var end int64
	for i := 0; i < total; i++ {
		rec := ps.recs[i]
		ready := free[i%slots]
		intended := int64(-1)
		if rec.SendOffsetNs >= 0 {
			intended = rec.SendOffsetNs + 10*ms
			ready = max(ready, intended)
		}
		send := ready + sc.lag + int64(i*37%11)*us
		first := send // the first attempt: on a dead connection when reconnect
		reconnect := sc.closesAfterResponse && sc.reconnectEvery > 0 && i >= slots && i%sc.reconnectEvery == 0
		if reconnect {
			send += 3 * ms
		}
		ttft := sc.ttft + int64(i*31%7)*100*us
		itl := sc.itl + int64(i%3)*10*us
		var q *rawlog.Request
		if sc.streaming {
			reads := streamReads(send, ttft, itl, produced, sc.reasoning, 100)
			if sc.contextExceeded {
				last := &reads[len(reads)-1]
				last.data = sseData(`{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`)
			}
			if sc.packEvery > 0 && i%sc.packEvery == 0 && len(reads) > 4 {
				reads[2].data += reads[3].data
				reads = append(reads[:3], reads[4:]...)
			}
			q = request(i, send, reads...)
		} else {
			body := fmt.Sprintf(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":100,"completion_tokens":%d,"total_tokens":%d}}`,
				words(produced), produced, 100+produced)
			q = request(i, send, read{send + ttft + int64(produced-1)*itl, body})
		}
		q.IntendedNs, q.ReadyNs = intended, ready
		q.ConnReused = i >= slots && !sc.closesAfterResponse
		if !q.ConnReused {
			q.ConnectStartNs, q.ConnectEndNs = send-150*us, send-20*us
		}
		if sc.closesAfterResponse && i >= slots {
			q.ServerClosed = true
		}
		if reconnect {
			q.Reconnects, q.FirstWriteStartNs = 1, first
		}
		profile := i - sc.warmup
		switch {
		case profile >= 0 && sc.errEvery > 0 && profile%sc.errEvery == sc.errEvery-1:
			q = request(i, send, read{send + 2*ms, `{"object":"error","message":"mock error injected","type":"InternalServerError","code":500}`})
			q.Status = 500
			q.IntendedNs, q.ReadyNs = intended, ready
		case profile >= 0 && sc.clientErrEvery > 0 && profile%sc.clientErrEvery == sc.clientErrEvery-1:
			// As replay logs it: the connect failed on this machine, nothing was sent.
			q = &rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeFailed, IntendedNs: intended, ReadyNs: ready,
				WriteStartNs: -1, WriteEndNs: -1, HeaderNs: -1, EndNs: send + 50*us, ConnectStartNs: send, ConnectEndNs: -1,
				Err: "client error: connect: too many open files (this process is out of file descriptors: raise the open-file limit, e.g. ulimit -n 65536)"}
		case rec.CancelAfterNs > 0:
			q.Outcome = rawlog.OutcomeCancelled
			q.EndNs = send + rec.CancelAfterNs
			cut := 0
			for cut < len(q.ReadNs) && q.ReadNs[cut] <= q.EndNs {
				cut++
			}
			q.ReadNs, q.ReadEnd = q.ReadNs[:cut], q.ReadEnd[:cut]
			if cut > 0 {
				q.Body = q.Body[:q.ReadEnd[cut-1]]
			} else {
				q.Body, q.HeaderNs = nil, -1
			}
		}
		free[i%slots] = q.EndNs
		end = max(end, q.EndNs)
		w := i % sc.workers
		logs[w].reqs = append(logs[w].reqs, q)
	}
	for w := range logs {
		// Workers log a request when it ends.
		slices.SortStableFunc(logs[w].reqs, func(a, b *rawlog.Request) int { return cmp.Compare(a.EndNs, b.EndNs) })
		if sc.cpuPct > 0 {
			var cpu int64
			for t := int64(0); t <= end+1000*ms; t += 250 * ms {
				logs[w].cpu = append(logs[w].cpu, rawlog.CPUSample{TimeNs: t, UserNs: cpu * 3 / 4, SysNs: cpu / 4})
				cpu += int64(float64(250*ms) * sc.cpuPct / 100 * (1 + float64(w)*0.1))
			}
		}
	}
	var tel []rawlog.GPUSample
	for g := 0; g < sc.gpus; g++ {
		energy := int64(1_000_000_000)
		for t := int64(0); t <= end+1000*ms; t += 100 * ms {
			power := int64(300_000 + g*10_000 + int(t/ms)%7*1000) // mW
			tel = append(tel, rawlog.GPUSample{TimeNs: t, GPU: g, UUID: fmt.Sprintf("GPU-%04d", g), PowerMilliwatts: power,
				EnergyMillijoules: energy, GPUUtilPct: 90, MemUtilPct: 40, MemUsedBytes: 70_000_000_000, SMClockMHz: 1980, TempC: 60})
			energy += power / 10 // mW × 0.1 s = mJ
		}
	}
	writeRun(t, runDir, runSpec{start: sc.start, planFile: "plan.plan", planHash: hash, workers: logs, telemetry: tel,
		sessionHeader: sc.sessionHeader})
	return runDir
}

func words(n int) string {
	b := make([]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, 'w')
	}
	return string(b)
}
