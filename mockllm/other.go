package mockllm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/plan/media"
)

// The non-generating APIs answer once, at start + TTFT (image streams:
// TTFT, then one event per ITL). Their content derives from the seed and
// the request like the text APIs.

// otherResult is a rendered answer: a body, or stream events.
type otherResult struct {
	body   []byte
	events [][]byte // streaming (images only)
	tokens int      // prompt tokens, for metrics
}

// serveOther serves embeddings, rankings and image generation.
func (s *Server) serveOther(w http.ResponseWriter, r *http.Request, api apiKind, arrival int64) {
	style := styleOf(api)
	body, ok := s.readBody(w, r, style)
	if !ok {
		s.m.badRequests.Add(1)
		return
	}
	h := fnv64a([]byte(r.URL.Path), body)
	var res *otherResult
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
	sc := s.newSchedule(api, seq, res.events != nil, r.Header.Get(CorrelationHeader), arrival)
	defer sc.finish()
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

// embeddings serves OpenAI, vLLM chat-style and NIM embeddings.
func (s *Server) embeddings(body []byte, h uint64) (*otherResult, error) {
	var b struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Messages       []chatMessage   `json:"messages"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     json.Number     `json:"dimensions"`
		InputType      string          `json:"input_type"`
	}
	if err := decodeJSON("embeddings", body, &b); err != nil {
		return nil, err
	}
	switch b.InputType {
	case "", "query", "passage":
	default:
		return nil, badf("embeddings: input_type: want \"query\" or \"passage\", got %q", b.InputType)
	}
	switch b.EncodingFormat {
	case "", "float", "base64":
	default:
		return nil, badf("embeddings: encoding_format: want \"float\" or \"base64\", got %q", b.EncodingFormat)
	}
	dim, err := optInt(b.Dimensions, "embeddings: dimensions", 1)
	if err != nil {
		return nil, err
	}
	if dim == 0 {
		dim = s.opts.EmbeddingDim
	}
	if dim > 65536 {
		return nil, badf("embeddings: dimensions: at most 65536")
	}
	// Each input is a text (counted with the tokenizer) or a list of
	// token ids (counted as given; its printed form seeds the vector).
	type input struct {
		text   string
		tokens int // -1: count text
	}
	var inputs []input
	in := bytes.TrimSpace(b.Input)
	switch {
	case len(b.Messages) > 0:
		var mu mediaUse
		t, err := joinMessages("embeddings", b.Messages, &mu, &s.opts.Media)
		if err != nil {
			return nil, err
		}
		inputs = []input{{t, -1}}
		if mt := s.opts.Media.tokens(&mu); mt > 0 {
			inputs[0].tokens = s.opts.Tokenizer.Count(t) + mt
		}
	case len(in) == 0 || string(in) == "null":
		return nil, badf("embeddings: input: required (or messages)")
	default:
		var one string
		var many []string
		var ids []int64
		var idLists [][]int64
		switch {
		case json.Unmarshal(in, &one) == nil:
			inputs = []input{{one, -1}}
		case json.Unmarshal(in, &many) == nil && len(many) > 0:
			for i, t := range many {
				if isImageDataURL(t) { // NIM embeddings: an image, checked, not tokenized
					if err := checkURL(media.Image, t); err != nil {
						return nil, badf("embeddings: input[%d]: %v", i, err)
					}
					inputs = append(inputs, input{"", s.opts.Media.ImageTokens})
					continue
				}
				inputs = append(inputs, input{t, -1})
			}
		case json.Unmarshal(in, &ids) == nil && len(ids) > 0:
			inputs = []input{{fmt.Sprint(ids), len(ids)}}
		case json.Unmarshal(in, &idLists) == nil && len(idLists) > 0:
			for _, l := range idLists {
				inputs = append(inputs, input{fmt.Sprint(l), len(l)})
			}
		default:
			return nil, badf("embeddings: input: want a string, a non-empty list of strings or of token ids")
		}
	}
	if len(inputs) > maxEmbeddingInputs {
		return nil, badf("embeddings: input: %d items, at most %d", len(inputs), maxEmbeddingInputs)
	}
	if len(inputs)*dim > maxEmbeddingValues {
		return nil, badf("embeddings: %d inputs of %d dimensions: over this server's limit of %d values", len(inputs), dim, maxEmbeddingValues)
	}
	tokens := 0
	model := b.Model
	if model == "" {
		model = s.opts.Model
	}
	out := []byte(`{"object":"list","data":[`)
	vec := make([]float32, dim)
	raw := make([]byte, 4*dim)
	for i, in := range inputs {
		if in.tokens < 0 {
			in.tokens = s.opts.Tokenizer.Count(in.text)
		}
		tokens += in.tokens
		r := newRNG(s.opts.Seed, fnv64a([]byte(in.text)), saltText)
		var norm float64
		for k := range vec {
			v := r.NormFloat64()
			vec[k] = float32(v)
			norm += v * v
		}
		scale := float32(1 / math.Sqrt(norm))
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"object":"embedding","index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, `,"embedding":`...)
		if b.EncodingFormat == "base64" {
			for k, v := range vec {
				binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(v*scale))
			}
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, raw)
			out = append(out, '"')
		} else {
			out = append(out, '[')
			for k, v := range vec {
				if k > 0 {
					out = append(out, ',')
				}
				out = appendFloat32(out, v*scale)
			}
			out = append(out, ']')
		}
		out = append(out, '}')
	}
	out = append(out, `],"model":`...)
	out = appendJSONString(out, model)
	out = append(out, `,"usage":{"prompt_tokens":`...)
	out = strconv.AppendInt(out, int64(tokens), 10)
	out = append(out, `,"total_tokens":`...)
	out = strconv.AppendInt(out, int64(tokens), 10)
	out = append(out, `}}`...)
	return &otherResult{body: out, tokens: tokens}, nil
}

// maxEmbeddingInputs is OpenAI's limit on inputs per request.
const maxEmbeddingInputs = 2048

// maxEmbeddingValues bounds one response (inputs × dimensions).
const maxEmbeddingValues = 1 << 24

// maxPassages bounds a ranking request.
const maxPassages = 10000

// rankScore is a deterministic relevance logit in [-8, 8) for a pair.
func (s *Server) rankScore(query, passage string) float64 {
	return 16*unitFloat(mix(s.opts.Seed, fnv64a([]byte(query), []byte(passage)), saltText)) - 8
}

type ranked struct {
	index int
	logit float64
}

func (s *Server) rank(query string, passages []string) []ranked {
	out := make([]ranked, len(passages))
	for i, p := range passages {
		out[i] = ranked{i, s.rankScore(query, p)}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		switch {
		case a.logit > b.logit:
			return -1
		case a.logit < b.logit:
			return 1
		}
		return 0
	})
	return out
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// rankings serves NIM /v1/ranking, TEI /rerank and Cohere /v2/rerank.
func (s *Server) rankings(api apiKind, body []byte, _ uint64) (*otherResult, error) {
	var query string
	var passages []string
	var topN int
	var rawScores, returnText bool
	switch api {
	case apiNIMRankings:
		var b struct {
			Query *struct {
				Text string `json:"text"`
			} `json:"query"`
			Passages []struct {
				Text string `json:"text"`
			} `json:"passages"`
		}
		if err := decodeJSON("ranking", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("ranking: query.text: required")
		}
		query = b.Query.Text
		for _, p := range b.Passages {
			passages = append(passages, p.Text)
		}
	case apiTEIRerank:
		var b struct {
			Query      *string  `json:"query"`
			Texts      []string `json:"texts"`
			RawScores  bool     `json:"raw_scores"`
			ReturnText bool     `json:"return_text"`
		}
		if err := decodeJSON("rerank", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("rerank: query: required")
		}
		query, passages, rawScores, returnText = *b.Query, b.Texts, b.RawScores, b.ReturnText
	case apiCohereRerank:
		var b struct {
			Query     *string           `json:"query"`
			Documents []json.RawMessage `json:"documents"`
			TopN      json.Number       `json:"top_n"`
		}
		if err := decodeJSON("v2/rerank", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("v2/rerank: query: required")
		}
		query = *b.Query
		for i, d := range b.Documents {
			var t string
			if json.Unmarshal(d, &t) != nil {
				var obj struct {
					Text *string `json:"text"`
				}
				if json.Unmarshal(d, &obj) != nil || obj.Text == nil {
					return nil, badf("v2/rerank: documents[%d]: want a string or {\"text\": ...}", i)
				}
				t = *obj.Text
			}
			passages = append(passages, t)
		}
		var err error
		if topN, err = optInt(b.TopN, "v2/rerank: top_n", 1); err != nil {
			return nil, err
		}
	}
	if len(passages) == 0 || len(passages) > maxPassages {
		return nil, badf("%s: want 1 to %d passages, got %d", apiNames[api], maxPassages, len(passages))
	}
	tokens := s.opts.Tokenizer.Count(query)
	for _, p := range passages {
		tokens += s.opts.Tokenizer.Count(p)
	}
	res := s.rank(query, passages)
	var out []byte
	switch api {
	case apiNIMRankings:
		out = append(out, `{"rankings":[`...)
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			out = append(out, `,"logit":`...)
			out = strconv.AppendFloat(out, r.logit, 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, `]}`...)
	case apiTEIRerank:
		out = append(out, '[')
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			if returnText {
				out = append(out, `,"text":`...)
				out = appendJSONString(out, passages[r.index])
			}
			out = append(out, `,"score":`...)
			score := sigmoid(r.logit)
			if rawScores {
				score = r.logit
			}
			out = strconv.AppendFloat(out, score, 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, ']')
	case apiCohereRerank:
		if topN > 0 && topN < len(res) {
			res = res[:topN]
		}
		out = append(out, `{"id":"`...)
		out = appendHex(out, mix(s.opts.Seed, fnv64a(body), saltID))
		out = append(out, `","results":[`...)
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			out = append(out, `,"relevance_score":`...)
			out = strconv.AppendFloat(out, sigmoid(r.logit), 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, `],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1},"tokens":{"input_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		out = append(out, `,"output_tokens":0}}}`...)
	}
	return &otherResult{body: out, tokens: tokens}, nil
}

const imageContentPrefix = "/v1/images/content/"

// maxImageSide caps generated images: they stand in for real ones, and
// small PNGs keep responses and CPU use small.
const maxImageSide = 64

// images serves OpenAI image generation (b64_json or url; streaming
// with partial images).
func (s *Server) images(r *http.Request, body []byte, h uint64) (*otherResult, error) {
	var b struct {
		Prompt         *string     `json:"prompt"`
		N              json.Number `json:"n"`
		Size           string      `json:"size"`
		ResponseFormat string      `json:"response_format"`
		Stream         bool        `json:"stream"`
		PartialImages  json.Number `json:"partial_images"`
		Quality        string      `json:"quality"`
		Background     string      `json:"background"`
		OutputFormat   string      `json:"output_format"`
	}
	if err := decodeJSON("images", body, &b); err != nil {
		return nil, err
	}
	if b.Prompt == nil {
		return nil, badf("images: prompt: required")
	}
	n, err := optInt(b.N, "images: n", 1)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		n = 1
	}
	if n > 10 {
		return nil, badf("images: n: at most 10")
	}
	partials, err := optInt(b.PartialImages, "images: partial_images", 0)
	if err != nil || partials > 3 {
		return nil, badf("images: partial_images: want 0 to 3")
	}
	w, hgt, err := parseImageSize(b.Size)
	if err != nil {
		return nil, err
	}
	switch b.ResponseFormat {
	case "", "b64_json", "url":
	default:
		return nil, badf("images: response_format: want \"b64_json\" or \"url\", got %q", b.ResponseFormat)
	}
	switch b.OutputFormat {
	case "", "png":
	default:
		return nil, badf("images: output_format: only \"png\" is served, got %q", b.OutputFormat)
	}
	if b.Stream && b.ResponseFormat == "url" {
		return nil, badf("images: streaming returns b64_json only")
	}
	tokens := s.opts.Tokenizer.Count(*b.Prompt)
	outTokens := w * hgt / 16 // stand-in for image tokens
	size := b.Size
	if size == "" {
		size = "auto"
	}
	usage := func(out []byte, images int) []byte {
		out = append(out, `"usage":{"total_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens+images*outTokens), 10)
		out = append(out, `,"input_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		out = append(out, `,"output_tokens":`...)
		out = strconv.AppendInt(out, int64(images*outTokens), 10)
		out = append(out, `,"input_tokens_details":{"text_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		return append(out, `,"image_tokens":0}}`...)
	}
	created := time.Now().Unix()
	if b.Stream {
		var events [][]byte
		for i := range n {
			key := mix(s.opts.Seed, h, uint64(i))
			for p := range partials {
				ev := []byte("event: image_generation.partial_image\ndata: ")
				ev = append(ev, `{"type":"image_generation.partial_image","b64_json":"`...)
				ev = base64.StdEncoding.AppendEncode(ev, renderPNG(key, w, hgt, p+1, partials+1))
				ev = append(ev, `","created_at":`...)
				ev = strconv.AppendInt(ev, created, 10)
				ev = append(ev, `,"size":`...)
				ev = appendJSONString(ev, size)
				ev = append(ev, `,"output_format":"png","partial_image_index":`...)
				ev = strconv.AppendInt(ev, int64(p), 10)
				ev = append(ev, "}\n\n"...)
				events = append(events, ev)
			}
			ev := []byte("event: image_generation.completed\ndata: ")
			ev = append(ev, `{"type":"image_generation.completed","b64_json":"`...)
			ev = base64.StdEncoding.AppendEncode(ev, renderPNG(key, w, hgt, 1, 1))
			ev = append(ev, `","created_at":`...)
			ev = strconv.AppendInt(ev, created, 10)
			ev = append(ev, `,"size":`...)
			ev = appendJSONString(ev, size)
			ev = append(ev, `,"output_format":"png",`...)
			ev = usage(ev, 1)
			ev = append(ev, "}\n\n"...)
			events = append(events, ev)
		}
		return &otherResult{events: events, tokens: tokens}, nil
	}
	out := []byte(`{"created":`)
	out = strconv.AppendInt(out, created, 10)
	out = append(out, `,"data":[`...)
	for i := range n {
		key := mix(s.opts.Seed, h, uint64(i))
		if i > 0 {
			out = append(out, ',')
		}
		if b.ResponseFormat == "url" {
			out = append(out, `{"url":"http://`...)
			out = appendJSONEscaped(out, r.Host)
			out = append(out, imageContentPrefix...)
			out = appendHex(out, key)
			out = append(out, '-')
			out = strconv.AppendInt(out, int64(w), 10)
			out = append(out, 'x')
			out = strconv.AppendInt(out, int64(hgt), 10)
			out = append(out, `.png"`...)
		} else {
			out = append(out, `{"b64_json":"`...)
			out = base64.StdEncoding.AppendEncode(out, renderPNG(key, w, hgt, 1, 1))
			out = append(out, '"')
		}
		out = append(out, `,"revised_prompt":`...)
		out = appendJSONString(out, *b.Prompt)
		out = append(out, '}')
	}
	out = append(out, `],`...)
	out = usage(out, n)
	out = append(out, '}')
	return &otherResult{body: out, tokens: tokens}, nil
}

// parseImageSize reads "WxH" (or "auto"/"") and scales it down so that
// neither side exceeds maxImageSide, keeping the aspect ratio.
func parseImageSize(size string) (int, int, error) {
	if size == "" || size == "auto" {
		return maxImageSide, maxImageSide, nil
	}
	ws, hs, ok := strings.Cut(size, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 || w > 16384 || h > 16384 {
		return 0, 0, badf("images: size: want \"WIDTHxHEIGHT\" (e.g. 1024x1024) or \"auto\", got %q", size)
	}
	if w > maxImageSide || h > maxImageSide {
		scale := float64(maxImageSide) / float64(max(w, h))
		w = max(1, int(float64(w)*scale))
		h = max(1, int(float64(h)*scale))
	}
	return w, h, nil
}

// renderPNG draws a deterministic gradient picture for key; step/of
// fades it in for partial images.
func renderPNG(key uint64, w, h, step, of int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r0, g0, b0 := uint8(key), uint8(key>>8), uint8(key>>16)
	r1, g1, b1 := uint8(key>>24), uint8(key>>32), uint8(key>>40)
	for y := range h {
		for x := range w {
			fx := float64(x) / float64(max(w-1, 1))
			fy := float64(y) / float64(max(h-1, 1))
			lerp := func(a, b uint8, f float64) uint8 { return uint8(float64(a)*(1-f) + float64(b)*f) }
			img.SetNRGBA(x, y, color.NRGBA{lerp(r0, r1, fx), lerp(g0, g1, fy), lerp(b0, b1, (fx+fy)/2), uint8(255 * step / of)})
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	_ = enc.Encode(&buf, img) // cannot fail on a bytes.Buffer
	return buf.Bytes()
}

// serveImageContent serves the PNG a "url" response points to; the name
// encodes everything needed to draw it again.
func (s *Server) serveImageContent(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	name := strings.TrimPrefix(r.URL.Path, imageContentPrefix)
	var key uint64
	var iw, ih int
	if n, err := fmt.Sscanf(name, "%16x-%dx%d.png", &key, &iw, &ih); err != nil || n != 3 ||
		iw < 1 || ih < 1 || iw > maxImageSide || ih > maxImageSide {
		writeError(w, styleOpenAI, http.StatusNotFound, "not_found_error", "mockllm: no image "+name)
		return
	}
	png := renderPNG(key, iw, ih, 1, 1)
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(png)
	}
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	b := []byte(`{"object":"list","data":[{"id":`)
	b = appendJSONString(b, s.opts.Model)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, monoBase.Unix(), 10)
	b = append(b, `,"owned_by":"mockllm","root":`...)
	b = appendJSONString(b, s.opts.Model)
	b = append(b, `,"parent":null}]}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	b := []byte(`{"status":"ok"}`)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
