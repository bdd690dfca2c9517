package mockllm

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// The non-generating APIs (embeddings, rankings, image generation) render their whole answer
// when the request arrives, from the seed and the request like the text APIs, and send it at
// start + TTFT; an image stream sends its first event then and one more per ITL. Each API's
// rendering is in its own file.

// prerendered is an answer rendered in full before its first byte is due: a body, or
// stream events.
type prerendered struct {
	body   []byte
	events [][]byte // streaming (images only)
	tokens int      // prompt tokens, for metrics
}

// servePrerendered serves embeddings, rankings and image generation: it renders the answer,
// then sends it on schedule.
func (s *Server) servePrerendered(w http.ResponseWriter, r *http.Request, api apiKind, arrival int64) {
	style := styleOf(api)
	body, ok := s.readBody(w, r, style)
	if !ok {
		s.m.badRequests.Add(1)
		return
	}
	h := fnv64a([]byte(r.URL.Path), body)
	var res *prerendered
	var err error
	switch api {
	case apiEmbeddings:
		res, err = s.embeddings(body, h)
	case apiNIMRankings, apiTEIRerank, apiCohereRerank:
		res, err = s.rankings(api, body, h)
	case apiImages:
		res, err = s.images(r, body, h)
	}
	if err != nil {
		s.badRequest(w, style, err.Error())
		return
	}
	seq := s.seq.Add(1)
	s.m.requests[api].Add(1)
	s.m.promptTokens.Add(uint64(res.tokens))
	fault, _ := s.drawFault(seq)
	sc := s.newSchedule(api, seq, res.events != nil, r, arrival)
	defer sc.finish()
	sc.describe(strconv.FormatUint(h, 16), s.opts.Model, 0, res.tokens, 0)
	sc.fault(fault)
	if fault == faultError {
		sc.finish() // before the 500 leaves
	}
	ctx, start, end, ok := s.begin(w, r, style, fault, arrival)
	if !ok {
		return
	}
	defer end()
	sc.started(start)
	timing := newRNG(s.opts.Seed, h, saltTiming)
	o := &s.opts
	t := start + int64(float64(o.TTFT+time.Duration(res.tokens)*o.TTFTPerInputToken)*lognormal(timing, o.TTFTJitterCV))
	if res.events != nil {
		s.streamEvents(ctx, w, res.events, t, timing, fault, seq, sc)
		return
	}
	if fault == faultStreamError {
		fault = faultNone // no stream to carry it: served normally
		sc.fault(fault)
	}
	if !s.unaryFault(ctx, w, fault, &t, sc) {
		return
	}
	sc.due(t)
	if !s.sleepUntil(t, nil, ctx.Done()) {
		s.m.clientGone.Add(1)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(res.body)))
	sc.sending()
	sc.finish()
	if _, err := w.Write(res.body); err != nil {
		s.m.clientGone.Add(1)
		return
	}
	_ = http.NewResponseController(w).Flush()
	s.m.lag.shardFor(seq).record(monoNow() - t)
}

// streamEvents sends prerendered events: the first at t, then one per ITL.
func (s *Server) streamEvents(ctx context.Context, w http.ResponseWriter, events [][]byte, t int64, timing interface{ NormFloat64() float64 }, fault faultKind, seq uint64, sc *schedule) {
	rc := http.NewResponseController(w)
	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	if !s.write(w, rc, nil) {
		return
	}
	o := &s.opts
	faultAt := 0
	if len(events) > 1 {
		faultAt = 1 + int(seq%uint64(len(events)-1))
	}
	wake := s.newWaiter()
	defer wake.stop()
	for j, ev := range events {
		if j > 0 {
			t += int64(float64(o.ITL) * lognormalFrom(timing, o.ITLJitterCV))
		}
		if fault != faultNone && j == faultAt {
			s.m.faults[fault].Add(1)
			switch fault {
			case faultStall:
				if o.StallDuration == 0 {
					<-ctx.Done()
					s.m.clientGone.Add(1)
					return
				}
				t += int64(o.StallDuration)
			case faultStreamError:
				sc.due(t)
				if s.sleepUntil(t, wake, ctx.Done()) {
					sc.sending()
					sc.finish()
					s.write(w, rc, []byte("event: error\ndata: {\"error\":{\"message\":\"mockllm: injected stream error\",\"type\":\"server_error\",\"param\":null,\"code\":500}}\n\n"))
				}
				return
			case faultDisconnect:
				sc.due(t)
				if s.sleepUntil(t, wake, ctx.Done()) {
					sc.finish()
					dropConnection(rc)
				}
				return
			}
		}
		sc.due(t)
		if !s.sleepUntil(t, wake, ctx.Done()) {
			s.m.clientGone.Add(1)
			return
		}
		sc.sending()
		if j == len(events)-1 {
			sc.finish()
		}
		if !s.write(w, rc, ev) {
			s.m.clientGone.Add(1)
			return
		}
		s.m.lag.shardFor(seq).record(monoNow() - t)
	}
}

func lognormalFrom(r interface{ NormFloat64() float64 }, cv float64) float64 {
	if cv <= 0 {
		return 1
	}
	s2 := math.Log1p(cv * cv)
	return math.Exp(math.Sqrt(s2)*r.NormFloat64() - s2/2)
}
