package analyze

import (
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// The per-request formulas of the built-in record metrics (builtin.go names them): each
// takes the facts the processor established about one request (request.go: what was
// parsed, whether it is valid, its token counts) and gives the metric's value in stored
// units (ns, tokens, rates), or false when the request has none. They run in MetricID
// order, so a formula may also read the values of metrics with smaller ids.

// facts is what the processor knows about one request once its body is parsed and it is
// classified. Times are nanoseconds on the run's monotonic clock.
type facts struct {
	q       *rawlog.Request
	rec     *mmapds.Record
	media   *mmapds.MediaEntry // nil: the request sent no media
	bodyLen int
	m       *requestMetrics

	started bool // the client acted on it (the outcome is not not_sent)
	tokens  bool // the endpoint produces tokens
	server  bool // --use-server-token-count

	// times are the content events' arrivals; ttfoNs the first visible output's (-1: none);
	// lastDataNs the last data event's (usage-only chunks included).
	times      []int64
	ttfoNs     int64
	lastDataNs int64

	// Valid requests only: end is where the latency ends (the last content event, or the
	// last read of a body without content), latency end − send.
	end     int64
	latency float64
	// isl is the input length: the plan's, or usage's with --use-server-token-count. The
	// output counts are valid when haveOSL.
	isl                    float64
	outTok, reasonTok, osl int
	haveOSL                bool
	usage                  endpoint.Usage // valid requests only
	items                  int
}

func (f *facts) valid() bool { return f.m.Valid }

// tok: a valid request of an endpoint that produces tokens.
func (f *facts) tok() bool { return f.m.Valid && f.tokens }

// streamed: a valid streamed token response with at least one content event.
func (f *facts) streamed() bool { return f.tok() && f.m.Streamed && len(f.times) > 0 }

func (f *facts) send() int64 { return f.q.WriteStartNs }

func (f *facts) ttft() float64 { return float64(f.times[0] - f.send()) }

func some(v float64) (float64, bool) { return v, true }

// Latencies.

func ttft(f *facts) (float64, bool) {
	if !f.streamed() {
		return 0, false
	}
	return some(f.ttft())
}

func ttst(f *facts) (float64, bool) {
	if !f.streamed() || len(f.times) < 2 {
		return 0, false
	}
	return some(float64(f.times[1] - f.times[0]))
}

func ttfo(f *facts) (float64, bool) {
	if !f.streamed() || f.ttfoNs < 0 {
		return 0, false
	}
	return some(float64(f.ttfoNs - f.send()))
}

func requestLatency(f *facts) (float64, bool) {
	if !f.valid() {
		return 0, false
	}
	return some(f.latency)
}

// itlOf is AIPerf's inter-token latency: (latency − TTFT) / (OSL − 1).
func itlOf(f *facts) (float64, bool) {
	if !f.streamed() || !f.haveOSL || len(f.times) < 2 || f.osl < 2 {
		return 0, false
	}
	return some((f.latency - f.ttft()) / float64(f.osl-1))
}

func itl(f *facts) (float64, bool) { return itlOf(f) }

func tpsUser(f *facts) (float64, bool) {
	if v, ok := itlOf(f); ok && v > 0 {
		return some(1e9 / v)
	}
	return 0, false
}

func e2eThroughput(f *facts) (float64, bool) {
	if !f.tok() || !f.haveOSL || !(f.latency > 0) {
		return 0, false
	}
	return some(float64(f.osl) / (f.latency / 1e9))
}

func prefill(f *facts) (float64, bool) {
	if !f.streamed() {
		return 0, false
	}
	if t := f.ttft(); t > 0 && f.isl > 0 {
		return some(f.isl / (t / 1e9))
	}
	return 0, false
}

// Token counts.

func osl(f *facts) (float64, bool) {
	if !f.tok() || !f.haveOSL {
		return 0, false
	}
	return some(float64(f.osl))
}

func isl(f *facts) (float64, bool) {
	if !f.tok() {
		return 0, false
	}
	return some(f.isl)
}

func outputTokens(f *facts) (float64, bool) {
	if !f.tok() || !f.haveOSL {
		return 0, false
	}
	return some(float64(f.outTok))
}

func reasoningTokens(f *facts) (float64, bool) {
	if !f.tok() || !f.haveOSL {
		return 0, false
	}
	return some(float64(f.reasonTok))
}

// usageField is the server's usage field, for valid token requests that have it.
func usageField(f *facts, has endpoint.UsageField, v int) (float64, bool) {
	if !f.tok() || f.usage.Has&has == 0 {
		return 0, false
	}
	return some(float64(v))
}

func usagePrompt(f *facts) (float64, bool) {
	return usageField(f, endpoint.UsagePrompt, f.usage.PromptTokens)
}
func usageCompletion(f *facts) (float64, bool) {
	return usageField(f, endpoint.UsageCompletion, f.usage.CompletionTokens)
}
func usageTotal(f *facts) (float64, bool) {
	return usageField(f, endpoint.UsageTotal, f.usage.TotalTokens)
}
func usageReasoning(f *facts) (float64, bool) {
	return usageField(f, endpoint.UsageReasoning, f.usage.ReasoningTokens)
}
func usageCachedPrompt(f *facts) (float64, bool) {
	return usageField(f, endpoint.UsageCachedPrompt, f.usage.CachedPromptTokens)
}

// usageDiff is |server − client| / client in percent, for the client's own counts (with
// --use-server-token-count they are the server's: nothing to compare).
func usageDiff(f *facts, has endpoint.UsageField, server int, client float64) (float64, bool) {
	if !f.tok() || f.server || f.usage.Has&has == 0 || !(client > 0) {
		return 0, false
	}
	d := float64(server) - client
	if d < 0 {
		d = -d
	}
	return some(d / client * 100)
}

func usagePromptDiff(f *facts) (float64, bool) {
	return usageDiff(f, endpoint.UsagePrompt, f.usage.PromptTokens, f.isl)
}

func usageCompletionDiff(f *facts) (float64, bool) {
	if !f.haveOSL {
		return 0, false
	}
	return usageDiff(f, endpoint.UsageCompletion, f.usage.CompletionTokens, float64(f.osl))
}

func usageReasoningDiff(f *facts) (float64, bool) {
	return usageDiff(f, endpoint.UsageReasoning, f.usage.ReasoningTokens, float64(f.reasonTok))
}

func oslMismatch(f *facts) (float64, bool) {
	if !f.tok() || !f.haveOSL || f.rec.OSL == 0 {
		return 0, false
	}
	req := float64(f.rec.OSL)
	return some((float64(f.osl) - req) / req * 100)
}

// errorISL is a failed request's planned input length (AIPerf's error_isl).
func errorISL(f *facts) (float64, bool) {
	if f.m.Valid || !f.m.Sent || !f.tokens {
		return 0, false
	}
	return some(float64(f.rec.ISL))
}

// HTTP phases (k6's names), for every sent request.

func streamSetup(f *facts) (float64, bool) {
	if !f.m.Sent || f.q.HeaderNs < 0 {
		return 0, false
	}
	return some(float64(f.q.HeaderNs - f.q.WriteStartNs))
}

func httpConnecting(f *facts) (float64, bool) {
	q := f.q
	if !f.m.Sent || q.ConnectStartNs < 0 || q.ConnectEndNs < q.ConnectStartNs {
		return 0, false
	}
	return some(float64(q.ConnectEndNs - q.ConnectStartNs))
}

func httpSending(f *facts) (float64, bool) {
	q := f.q
	if !f.m.Sent || q.WriteEndNs < q.WriteStartNs {
		return 0, false
	}
	return some(float64(q.WriteEndNs - q.WriteStartNs))
}

func httpWaiting(f *facts) (float64, bool) {
	q := f.q
	if !f.m.Sent || q.HeaderNs < 0 || q.WriteEndNs < 0 || q.HeaderNs < q.WriteEndNs {
		return 0, false
	}
	return some(float64(q.HeaderNs - q.WriteEndNs))
}

// lastRead is the last read's instant (the end when there is none), and whether the body's
// reception is timed: headers came and the last read is not before them.
func lastRead(f *facts) (int64, bool) {
	q := f.q
	if !f.m.Sent || q.HeaderNs < 0 {
		return 0, false
	}
	last := q.EndNs
	if n := len(q.ReadNs); n > 0 {
		last = q.ReadNs[n-1]
	}
	return last, last >= q.HeaderNs
}

func httpReceiving(f *facts) (float64, bool) {
	if last, ok := lastRead(f); ok {
		return some(float64(last - f.q.HeaderNs))
	}
	return 0, false
}

func httpDuration(f *facts) (float64, bool) {
	if last, ok := lastRead(f); ok {
		return some(float64(last - f.q.WriteStartNs))
	}
	return 0, false
}

func httpDataSent(f *facts) (float64, bool) {
	if !f.m.Sent {
		return 0, false
	}
	return some(float64(f.bodyLen))
}

func httpDataReceived(f *facts) (float64, bool) {
	if !f.m.Sent {
		return 0, false
	}
	return some(float64(len(f.q.Body)))
}

func httpChunks(f *facts) (float64, bool) {
	if !f.m.Sent {
		return 0, false
	}
	return some(float64(len(f.q.ReadNs)))
}

func httpReused(f *facts) (float64, bool) {
	if !f.m.Sent {
		return 0, false
	}
	if f.q.ConnReused {
		return some(1)
	}
	return some(0)
}

// httpReconnects is the times the request was sent again after the server had closed the
// connection it was first written on (raw reconnects).
func httpReconnects(f *facts) (float64, bool) {
	if !f.m.Sent {
		return 0, false
	}
	return some(float64(f.q.Reconnects))
}

// Schedule fidelity (ours), for every request the client started: written, or at least
// dialled.

// acted is when the client acted: when it began to dial a new connection, else when it began
// writing (the connect itself is the network's and the server's time, not the client's lag),
// and for a request the server's close made it send again, its first attempt (the dead
// connection and the reconnect are the server's doing); ready when the request was free to
// go (its slot's), else its intended instant.
func acted(f *facts) (start, ready int64, ok bool) {
	q := f.q
	if !f.started {
		return 0, 0, false
	}
	start = q.WriteStartNs
	if q.ConnectStartNs >= 0 && (start < 0 || q.ConnectStartNs < start) {
		start = q.ConnectStartNs
	}
	if q.Reconnects > 0 && q.FirstWriteStartNs >= 0 && (start < 0 || q.FirstWriteStartNs < start) {
		start = q.FirstWriteStartNs
	}
	ready = q.ReadyNs
	if ready < 0 {
		ready = q.IntendedNs
	}
	return start, ready, start >= 0
}

func scheduleLag(f *facts) (float64, bool) {
	if _, _, ok := acted(f); !ok || f.q.IntendedNs < 0 || f.q.WriteStartNs < 0 {
		return 0, false
	}
	return some(float64(f.q.WriteStartNs - f.q.IntendedNs))
}

func dispatchLag(f *facts) (float64, bool) {
	if start, ready, ok := acted(f); ok && ready >= 0 {
		return some(float64(start - ready))
	}
	return 0, false
}

func slotWait(f *facts) (float64, bool) {
	if _, ready, ok := acted(f); ok && f.q.IntendedNs >= 0 && ready >= 0 {
		return some(float64(ready - f.q.IntendedNs))
	}
	return 0, false
}

func correctedTTFT(f *facts) (float64, bool) {
	if !f.streamed() || f.q.IntendedNs < 0 {
		return 0, false
	}
	return some(float64(f.times[0] - f.q.IntendedNs))
}

func correctedLatency(f *facts) (float64, bool) {
	if !f.valid() || f.q.IntendedNs < 0 {
		return 0, false
	}
	return some(float64(f.end - f.q.IntendedNs))
}

// Peers' definitions. They count output tokens from usage when the server sends it.

func peerTokens(f *facts) (int, bool) {
	if f.usage.Has&endpoint.UsageCompletion != 0 {
		return f.usage.CompletionTokens, true
	}
	return f.osl, f.haveOSL
}

func vllmTPOT(f *facts) (float64, bool) {
	n, ok := peerTokens(f)
	if !f.streamed() || !ok || n < 2 || len(f.times) < 2 {
		return 0, false
	}
	// vLLM's E2E latency runs to the last data event, usage-only chunks included.
	vEnd := max(f.lastDataNs, f.times[len(f.times)-1])
	return some((float64(vEnd-f.send()) - f.ttft()) / float64(n-1))
}

func guidellmITL(f *facts) (float64, bool) {
	n, ok := peerTokens(f)
	if !f.streamed() || !ok || n < 2 || len(f.times) < 2 {
		return 0, false
	}
	return some(float64(f.times[len(f.times)-1]-f.times[0]) / float64(n-1))
}

func guidellmTPOT(f *facts) (float64, bool) {
	n, ok := peerTokens(f)
	if !f.streamed() || !ok || n < 1 {
		return 0, false
	}
	return some(f.latency / float64(n))
}

func llmperfITL(f *facts) (float64, bool) {
	if !f.streamed() {
		return 0, false
	}
	return some(f.latency / float64(len(f.times)))
}

// itemCount is what a non-token response returned (embeddings, rankings, images).
func itemCount(f *facts) (float64, bool) {
	if !f.valid() || f.tokens {
		return 0, false
	}
	return some(float64(f.items))
}

// Multimodal (AIPerf §5.6; analyze/multimodal.go): what a request sent comes from its plan
// media entry, how long it took from its latency (valid requests).

// mediaLatency is a valid request's latency in ns when positive.
func mediaLatency(f *facts) (float64, bool) {
	return f.latency, f.valid() && f.latency > 0
}

func numImages(f *facts) (float64, bool) {
	if f.media == nil || f.media.Images <= 0 {
		return 0, false
	}
	return some(float64(f.media.Images))
}

func imageThroughput(f *facts) (float64, bool) {
	if n, ok := numImages(f); ok {
		if lat, ok := mediaLatency(f); ok {
			return some(n / (lat / 1e9))
		}
	}
	return 0, false
}

func imageLatency(f *facts) (float64, bool) {
	if n, ok := numImages(f); ok {
		if lat, ok := mediaLatency(f); ok {
			return some(lat / n)
		}
	}
	return 0, false
}

func audioDuration(f *facts) (float64, bool) {
	if f.media == nil || !(f.media.AudioSeconds > 0) {
		return 0, false
	}
	return some(f.media.AudioSeconds * 1e9)
}

func rtfx(f *facts) (float64, bool) {
	if f.media == nil || !(f.media.AudioSeconds > 0) {
		return 0, false
	}
	if lat, ok := mediaLatency(f); ok {
		return some(f.media.AudioSeconds / (lat / 1e9))
	}
	return 0, false
}

func usagePromptAudio(f *facts) (float64, bool) {
	if !f.valid() || f.usage.Has&endpoint.UsagePromptAudio == 0 {
		return 0, false
	}
	return some(float64(f.usage.PromptAudioTokens))
}

func usageCompletionAudio(f *facts) (float64, bool) {
	if !f.valid() || f.usage.Has&endpoint.UsageCompletionAudio == 0 {
		return 0, false
	}
	return some(float64(f.usage.CompletionAudioTokens))
}
