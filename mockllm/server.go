package mockllm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmbench/llmbench/tokenizer"
)

// apiKind identifies a route family.
type apiKind uint8

const (
	apiChat apiKind = iota
	apiCompletions
	apiResponses
	apiAnthropic
	apiTGI
	apiEmbeddings
	apiNIMRankings
	apiTEIRerank
	apiCohereRerank
	apiImages
	numAPIs
)

var apiNames = [numAPIs]string{"chat", "completions", "responses", "anthropic_messages", "huggingface_generate",
	"embeddings", "nim_rankings", "hf_tei_rankings", "cohere_rankings", "image_generation"}

// Server is the mock LLM server: an http.Handler serving the OpenAI,
// Anthropic, TGI, TEI, Cohere and NIM routes with scheduled timing.
// It is safe for concurrent use; Close releases streams held by stalls
// and queues.
type Server struct {
	opts  Options
	vocab *vocabulary
	clock *clock
	m     metrics
	sem   chan struct{} // admission slots; nil when MaxBatch is 0
	seq   atomic.Uint64 // arrival number of inference requests

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc

	bufs sync.Pool // *[]byte render buffers

	slog *scheduleLog // nil unless Options.ScheduleLog is set

	prefix *prefixCache // the simulated prefix cache (prefixcache.go)
	ids    sync.Pool    // *[]int token buffers for it

	wait waitMode // how streams wait (benchmarks compare the modes)

	tracer trace.Tracer // the request spans' (tracing.go); nil when Options.Tracer is
}

// New validates opts and builds a Server. Building the output vocabulary
// scans the tokenizer once (cached per tokenizer).
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.Tokenizer == nil {
		tok, err := tokenizer.Builtin()
		if err != nil {
			return nil, fmt.Errorf("mockllm: %w", err)
		}
		opts.Tokenizer = tok
	}
	v, err := buildVocabulary(opts.Tokenizer)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, vocab: v, clock: theClock()}
	if opts.Tracer != nil {
		s.tracer = opts.Tracer.Tracer(TraceScope)
	}
	if opts.MaxBatch > 0 {
		s.sem = make(chan struct{}, opts.MaxBatch)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.m.init()
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	kvCap := opts.KVCacheTokens
	if kvCap <= 0 {
		kvCap = DefaultKVCacheTokens
	}
	s.prefix = newPrefixCache(kvCap)
	s.ids.New = func() any { b := make([]int, 0, 1024); return &b }
	if opts.ScheduleLog != nil {
		s.slog = &scheduleLog{w: opts.ScheduleLog}
	}
	return s, nil
}

// Close makes in-flight handlers return: queued requests give up,
// stalls end and streams stop at their next event. The Server must not be
// used afterwards.
func (s *Server) Close() { s.cancel() }

// Options returns the options in force (defaults filled in).
func (s *Server) Options() Options { return s.opts }

// Start serves a new Server for opts on addr ("127.0.0.1:0" picks a free
// port) in the background. It returns the base URL ("http://host:port")
// and a stop function that closes the listener, every connection and
// the Server.
func Start(addr string, opts Options) (url string, stop func(), err error) {
	s, err := New(opts)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("mockllm: listen %s: %w", addr, err)
	}
	ln = GuardAccept(ln, os.Stderr)
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			s.Close()
			_ = hs.Close()
			<-done
		})
	}
	return "http://" + ln.Addr().String(), stop, nil
}

type route struct {
	method string
	api    apiKind
	serve  func(s *Server, w http.ResponseWriter, r *http.Request, api apiKind, arrival int64)
	auth   bool
}

var routes = map[string]route{
	"/v1/chat/completions":   {http.MethodPost, apiChat, (*Server).serveText, true},
	"/v1/completions":        {http.MethodPost, apiCompletions, (*Server).serveText, true},
	"/v1/responses":          {http.MethodPost, apiResponses, (*Server).serveText, true},
	"/v1/messages":           {http.MethodPost, apiAnthropic, (*Server).serveText, true},
	"/generate":              {http.MethodPost, apiTGI, (*Server).serveText, true},
	"/generate_stream":       {http.MethodPost, apiTGI, (*Server).serveText, true},
	"/v1/embeddings":         {http.MethodPost, apiEmbeddings, (*Server).servePrerendered, true},
	"/v1/ranking":            {http.MethodPost, apiNIMRankings, (*Server).servePrerendered, true},
	"/rerank":                {http.MethodPost, apiTEIRerank, (*Server).servePrerendered, true},
	"/v2/rerank":             {http.MethodPost, apiCohereRerank, (*Server).servePrerendered, true},
	"/v1/images/generations": {http.MethodPost, apiImages, (*Server).servePrerendered, true},
	"/v1/models":             {http.MethodGet, apiChat, (*Server).serveModels, true},
	"/health":                {http.MethodGet, apiChat, (*Server).serveHealth, false},
	"/metrics":               {http.MethodGet, apiChat, (*Server).serveMetrics, false},
	imageContentPrefix + "*": {http.MethodGet, apiImages, (*Server).serveImageContent, false},
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := monoNow()
	w.Header().Set("Server", "mockllm")
	if s.opts.Quirks.CloseAfterResponse {
		w.Header().Set("Keep-Alive", keepAliveHeader)
	}
	path := r.URL.Path
	rt, ok := routes[path]
	if !ok && strings.HasPrefix(path, imageContentPrefix) {
		rt, ok = routes[imageContentPrefix+"*"]
	}
	if !ok {
		s.m.notFound.Add(1)
		writeError(w, styleFor(path), http.StatusNotFound, "not_found_error", "mockllm: no route for "+path)
		return
	}
	style := styleOf(rt.api)
	if rt.method != r.Method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", rt.method)
		writeError(w, style, http.StatusMethodNotAllowed, "invalid_request_error", "mockllm: "+path+" accepts "+rt.method+", not "+r.Method)
		return
	}
	if rt.auth && !s.authorized(r, rt.api) {
		s.m.unauthorized.Add(1)
		writeError(w, style, http.StatusUnauthorized, "authentication_error", "mockllm: invalid or missing API key")
		return
	}
	if !s.opts.Quirks.CloseAfterResponse || rt.method != http.MethodPost {
		rt.serve(s, w, r, rt.api, arrival)
		return
	}
	h := &hijackWatch{ResponseWriter: w}
	rt.serve(s, h, r, rt.api, arrival)
	closeAfterResponse(h)
}

// authorized checks the API key: x-api-key on the Anthropic route,
// "Authorization: Bearer KEY" elsewhere.
func (s *Server) authorized(r *http.Request, api apiKind) bool {
	if s.opts.APIKey == "" {
		return true
	}
	if api == apiAnthropic {
		return r.Header.Get("X-Api-Key") == s.opts.APIKey
	}
	a := r.Header.Get("Authorization")
	return len(a) > 7 && strings.EqualFold(a[:7], "bearer ") && a[7:] == s.opts.APIKey
}

// readBody reads the request body within MaxBodyBytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, style errStyle) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, style, http.StatusRequestEntityTooLarge, "invalid_request_error",
				fmt.Sprintf("mockllm: request body over %d bytes", s.opts.MaxBodyBytes))
		} else {
			writeError(w, style, http.StatusBadRequest, "invalid_request_error", "mockllm: reading request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// requestContext ends when the client goes away or the Server closes.
func (s *Server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// admit waits for a batch slot (FIFO) and returns the instant the
// request's schedule starts: its arrival when a slot was free, else its
// admission, so that queueing adds to TTFT as on a real server. It
// reports false when ctx ended while waiting.
func (s *Server) admit(ctx context.Context, arrival int64) (int64, bool) {
	if s.sem == nil {
		s.m.running.Add(1)
		return arrival, true
	}
	select {
	case s.sem <- struct{}{}:
		s.m.running.Add(1)
		return arrival, true
	default:
	}
	s.m.waiting.Add(1)
	defer s.m.waiting.Add(-1)
	select {
	case s.sem <- struct{}{}:
		s.m.running.Add(1)
		return monoNow(), true
	case <-ctx.Done():
		return 0, false
	}
}

// badRequest rejects a request for its body or headers with a 400.
func (s *Server) badRequest(w http.ResponseWriter, style errStyle, msg string) {
	s.m.badRequests.Add(1)
	writeError(w, style, http.StatusBadRequest, "invalid_request_error", msg)
}

// begin serves an injected error fault, or else waits for a batch slot (see admit). When ok,
// the request holds a slot and its context, and the caller must defer end to give both back.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, style errStyle, fault faultKind, arrival int64) (ctx context.Context, start int64, end func(), ok bool) {
	if fault == faultError {
		s.m.faults[faultError].Add(1)
		writeError(w, style, http.StatusInternalServerError, "server_error", "mockllm: injected error")
		return nil, 0, nil, false
	}
	ctx, cancel := s.requestContext(r)
	if start, ok = s.admit(ctx, arrival); !ok {
		cancel()
		s.m.clientGone.Add(1)
		return nil, 0, nil, false
	}
	return ctx, start, func() { s.release(); cancel() }, true
}

func (s *Server) release() {
	s.m.running.Add(-1)
	if s.sem != nil {
		<-s.sem
	}
}

func (s *Server) getBuf() *[]byte { return s.bufs.Get().(*[]byte) }

func (s *Server) putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		*b = (*b)[:0]
		s.bufs.Put(b)
	}
}

// serveText serves the token-generating APIs.
func (s *Server) serveText(w http.ResponseWriter, r *http.Request, api apiKind, arrival int64) {
	style := styleOf(api)
	if api == apiAnthropic && r.Header.Get("Anthropic-Version") == "" {
		s.badRequest(w, style, "anthropic-version: header is required")
		return
	}
	body, ok := s.readBody(w, r, style)
	if !ok {
		s.m.badRequests.Add(1)
		return
	}
	if s.opts.Strict && (api == apiChat || api == apiCompletions) {
		class := "ChatCompletionRequest"
		if api == apiCompletions {
			class = "CompletionRequest"
		}
		if err := vllmValidate(body, class); err != nil {
			s.m.badRequests.Add(1)
			writeError(w, style, http.StatusBadRequest, vllmBadRequest, err.Error())
			return
		}
	}
	var req *genRequest
	var err error
	switch api {
	case apiChat:
		req, err = parseChat(body, &s.opts.Media, s.opts.Quirks.IgnoreMaxCompletionTokens)
	case apiCompletions:
		req, err = parseCompletions(body)
	case apiResponses:
		req, err = parseResponses(body, &s.opts.Media)
	case apiAnthropic:
		req, err = parseAnthropic(body)
	case apiTGI:
		req, err = parseTGI(body, r.URL.Path == "/generate_stream")
	}
	if err != nil {
		s.badRequest(w, style, err.Error())
		return
	}
	if !s.checkModel(w, style, req.model) {
		return
	}
	seq := s.seq.Add(1)
	s.m.requests[api].Add(1)
	g := s.plan(api, req, fnv64a([]byte(apiNames[api]), []byte(req.model), []byte(req.promptText)), seq)
	g.created = time.Now().Unix()
	s.m.promptTokens.Add(uint64(g.promptTokens))
	sc := s.newSchedule(api, seq, g.stream, r, arrival)
	defer sc.finish()
	sc.describe(g.id, g.model, req.maxTokens, g.promptTokens, g.outputTokens)
	sc.fault(g.fault)
	if g.fault == faultError {
		sc.finish() // before the 500 leaves
	}
	ctx, start, end, ok := s.begin(w, r, style, g.fault, arrival)
	if !ok {
		return
	}
	defer end()
	g.kv = s.m.hold(g.promptTokens, arrival)
	defer s.m.release(g.kv)
	sc.started(start)
	if g.stream {
		s.streamText(ctx, w, g, start, sc)
	} else {
		s.unaryText(ctx, w, g, start, style, sc)
	}
}

// Event renderers by API.
func (g *gen) preamble(b []byte) []byte {
	switch g.api {
	case apiChat:
		return g.chatPreamble(b)
	case apiResponses:
		return g.respPreamble(b)
	case apiAnthropic:
		return g.anthPreamble(b)
	}
	return b
}

func (g *gen) event(b []byte, j int) []byte {
	switch g.api {
	case apiChat:
		return g.chatEvent(b, j)
	case apiCompletions:
		return g.completionEvent(b, j)
	case apiResponses:
		return g.respStreamEvent(b, j)
	case apiAnthropic:
		return g.anthStreamEvent(b, j)
	}
	return g.tgiStreamEvent(b, j)
}

func (g *gen) streamError(b []byte) []byte {
	switch g.api {
	case apiResponses:
		return g.respStreamError(b)
	case apiAnthropic:
		return g.anthStreamError(b)
	case apiTGI:
		return g.tgiStreamError(b)
	}
	return g.openAIStreamError(b)
}

func (g *gen) body(b []byte) []byte {
	switch g.api {
	case apiChat:
		return g.chatBody(b)
	case apiCompletions:
		return g.completionBody(b)
	case apiResponses:
		return g.respBody(b)
	case apiAnthropic:
		return g.anthBody(b)
	}
	return g.tgiBody(b)
}

func setSSEHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

// sseData appends "data: " + payload start; callers close with sseEnd.
func sseData(b []byte) []byte { return append(b, "data: "...) }

// sseEvent appends an "event: NAME" line and the "data: " prefix.
func sseEvent(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// sseEnd ends one SSE event.
func sseEnd(b []byte) []byte { return append(b, '\n', '\n') }

// streamText emits a stream on its absolute schedule: the preamble at
// admission, token event j at start + TTFT + the sum of j drawn gaps.
// Instants never depend on when earlier events were actually written,
// so lateness does not accumulate.
func (s *Server) streamText(ctx context.Context, w http.ResponseWriter, g *gen, start int64, sc *schedule) {
	rc := http.NewResponseController(w)
	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	bp := s.getBuf()
	defer s.putBuf(bp)
	b := g.preamble((*bp)[:0])
	if !s.write(w, rc, b) {
		return
	}
	o := &s.opts
	done := ctx.Done()
	wake := s.newWaiter()
	defer wake.stop()
	shard := s.m.lag.shardFor(g.seq)
	t := start + g.ttft(o)
	for j := range g.chunks {
		if j > 0 {
			t += g.gap(o)
		}
		if g.fault != faultNone && j == g.faultAt {
			s.m.faults[g.fault].Add(1)
			switch g.fault {
			case faultStall:
				if o.StallDuration == 0 {
					<-done
					s.m.clientGone.Add(1)
					return
				}
				t += int64(o.StallDuration) // the rest of the stream shifts
			case faultStreamError, faultContext:
				sc.due(t)
				if !s.sleepUntil(t, wake, done) {
					s.m.clientGone.Add(1)
					return
				}
				if g.fault == faultContext {
					b = sseEnd(append(sseData(b[:0]), contextExceededError...))
				} else {
					b = g.streamError(b[:0])
				}
				sc.sending()
				sc.finish()
				s.write(w, rc, b)
				return
			case faultDisconnect:
				sc.due(t)
				if s.sleepUntil(t, wake, done) {
					sc.finish()
					dropConnection(rc)
				}
				return
			}
		}
		sc.due(t)
		if !s.sleepUntil(t, wake, done) {
			s.m.clientGone.Add(1)
			return
		}
		b = g.event(b[:0], j)
		sc.sending()
		if j == len(g.chunks)-1 {
			sc.finish() // the last event carries the stream's end
		}
		if !s.write(w, rc, b) {
			s.m.clientGone.Add(1)
			return
		}
		shard.record(monoNow() - t)
		s.countTokens(g, g.chunks[j])
	}
	*bp = b
}

func (s *Server) countTokens(g *gen, c chunk) {
	n := uint64(g.chunkTokens(c))
	s.m.genTokens.Add(n)
	s.m.tokensOut(g.kv, int64(n))
	if c.kind == chunkReasoning {
		s.m.reasoningTokens.Add(n)
	}
}

// write sends b as one flush; false when the client is gone.
func (s *Server) write(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			return false
		}
	}
	return rc.Flush() == nil
}

// dropConnection closes the TCP connection under a response without
// ending it (no final chunk): the client sees the stream cut short.
func dropConnection(rc *http.ResponseController) {
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2 or a recorder: abort the stream instead
	}
	_ = conn.Close()
}

// unaryText answers a non-streaming request when its last event would
// have been emitted: start + TTFT + (events-1) gaps.
func (s *Server) unaryText(ctx context.Context, w http.ResponseWriter, g *gen, start int64, style errStyle, sc *schedule) {
	o := &s.opts
	t := start + g.ttft(o)
	for j := 1; j < len(g.chunks); j++ {
		t += g.gap(o)
	}
	if !s.unaryFault(ctx, w, g.fault, &t, sc) {
		return
	}
	bp := s.getBuf()
	defer s.putBuf(bp)
	b := g.body((*bp)[:0])
	*bp = b
	sc.due(t)
	if !s.sleepUntil(t, nil, ctx.Done()) {
		s.m.clientGone.Add(1)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	sc.sending()
	sc.finish()
	if _, err := w.Write(b); err != nil {
		s.m.clientGone.Add(1)
		return
	}
	_ = http.NewResponseController(w).Flush()
	s.m.lag.shardFor(g.seq).record(monoNow() - t)
	s.m.genTokens.Add(uint64(g.outputTokens))
	s.m.reasoningTokens.Add(uint64(len(g.reasoning)))
	s.m.tokensOut(g.kv, int64(g.outputTokens))
}

// unaryFault applies a fault to a non-streaming response due at *t. It
// reports whether the response should still be sent (stall with a
// duration, a stream error that has no stream to go into).
func (s *Server) unaryFault(ctx context.Context, w http.ResponseWriter, f faultKind, t *int64, sc *schedule) bool {
	switch f {
	case faultDisconnect:
		s.m.faults[f].Add(1)
		sc.due(*t)
		if s.sleepUntil(*t, nil, ctx.Done()) {
			sc.finish()
			dropConnection(http.NewResponseController(w))
		}
		return false
	case faultStall:
		s.m.faults[f].Add(1)
		if s.opts.StallDuration == 0 {
			<-ctx.Done()
			s.m.clientGone.Add(1)
			return false
		}
		*t += int64(s.opts.StallDuration)
	case faultContext:
		s.m.faults[f].Add(1)
		sc.due(*t)
		if s.sleepUntil(*t, nil, ctx.Done()) {
			sc.finish()
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(contextExceededError))
		}
		return false
	}
	return true
}
