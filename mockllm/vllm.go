package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
)

// vLLM's request validation (Options.Strict) and its model check (Options.ServedModelNames):
// what vLLM's OpenAI server refuses, refused here in its words, so that a client's request that
// passes the mock passes vLLM too. The rules are vLLM's pydantic request models
// (vllm/entrypoints/openai/protocol.py) and SamplingParams._verify_args
// (vllm/sampling_params.py); unknown fields are accepted, as vLLM accepts them (it only logs
// them).

// vLLM's error types (its ErrorResponse.type).
const (
	vllmBadRequest = "BadRequestError"
	vllmNotFound   = "NotFoundError"
)

// checkModel answers 404 as vLLM does when ServedModelNames is set and the request names
// another model; it reports whether the request may go on. A request without a model gets
// the first served name (vLLM's default), set by plan.
func (s *Server) checkModel(w http.ResponseWriter, style errStyle, model string) bool {
	if len(s.opts.ServedModelNames) == 0 || model == "" || slices.Contains(s.opts.ServedModelNames, model) {
		return true
	}
	s.m.badRequests.Add(1)
	writeError(w, style, http.StatusNotFound, vllmNotFound, "The model `"+model+"` does not exist.")
	return false
}

// vllmFields are the fields vLLM's chat and completions request models type-check, kept raw
// so that each is checked for its JSON type the way pydantic does.
type vllmFields struct {
	Model               json.RawMessage `json:"model"`
	Stream              json.RawMessage `json:"stream"`
	StreamOptions       json.RawMessage `json:"stream_options"`
	MaxTokens           json.RawMessage `json:"max_tokens"`
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	MinTokens           json.RawMessage `json:"min_tokens"`
	N                   json.RawMessage `json:"n"`
	Temperature         json.RawMessage `json:"temperature"`
	TopP                json.RawMessage `json:"top_p"`
	TopK                json.RawMessage `json:"top_k"`
	MinP                json.RawMessage `json:"min_p"`
	PresencePenalty     json.RawMessage `json:"presence_penalty"`
	FrequencyPenalty    json.RawMessage `json:"frequency_penalty"`
	RepetitionPenalty   json.RawMessage `json:"repetition_penalty"`
	Seed                json.RawMessage `json:"seed"`
	IgnoreEOS           json.RawMessage `json:"ignore_eos"`
	Logprobs            json.RawMessage `json:"logprobs"`
	TopLogprobs         json.RawMessage `json:"top_logprobs"`
	Stop                json.RawMessage `json:"stop"`
}

// vllmValidate checks a chat or completions body as vLLM would, before the mock's own parse
// (which reads what the mock needs and says it in its own words). model is the request
// model's class name in vLLM's pydantic messages: ChatCompletionRequest or CompletionRequest.
func vllmValidate(body []byte, model string) error {
	var f vllmFields
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&f); err != nil {
		return nil // not a JSON object: the mock's parse says so
	}
	v := vllmCheck{model: model}
	v.str("model", f.Model)
	stream := v.boolean("stream", f.Stream)
	v.boolean("ignore_eos", f.IgnoreEOS)
	if present(f.StreamOptions) {
		if f.StreamOptions[0] != '{' {
			v.typ("stream_options", "Input should be a valid dictionary or instance of StreamOptions")
		} else if !stream && v.err == nil {
			v.fail("Stream options can only be defined when `stream=True`.")
		}
	}
	n, hasN := v.integer("n", f.N)
	maxTokens, hasMax := v.integer("max_tokens", f.MaxTokens)
	if mct, ok := v.integer("max_completion_tokens", f.MaxCompletionTokens); ok {
		maxTokens, hasMax = mct, true // vLLM's chat prefers max_completion_tokens
	}
	minTokens, hasMin := v.integer("min_tokens", f.MinTokens)
	temp, hasTemp := v.number("temperature", f.Temperature)
	topP, hasTopP := v.number("top_p", f.TopP)
	topK, hasTopK := v.integer("top_k", f.TopK)
	minP, hasMinP := v.number("min_p", f.MinP)
	pp, hasPP := v.number("presence_penalty", f.PresencePenalty)
	fp, hasFP := v.number("frequency_penalty", f.FrequencyPenalty)
	rp, hasRP := v.number("repetition_penalty", f.RepetitionPenalty)
	v.integer("seed", f.Seed)
	if model == "ChatCompletionRequest" {
		v.boolean("logprobs", f.Logprobs)
	} else if lp, ok := v.integer("logprobs", f.Logprobs); ok && lp < 0 && v.err == nil {
		v.fail(fmt.Sprintf("logprobs must be non-negative, got %d.", lp))
	}
	v.integer("top_logprobs", f.TopLogprobs)
	v.stop(f.Stop)
	if v.err != nil {
		return v.err
	}
	// SamplingParams._verify_args, in its order.
	switch {
	case hasN && n < 1:
		return v.failf("n must be at least 1, got %d.", n)
	case hasPP && (pp < -2 || pp > 2):
		return v.failf("presence_penalty must be in [-2, 2], got %s.", pyFloat(pp))
	case hasFP && (fp < -2 || fp > 2):
		return v.failf("frequency_penalty must be in [-2, 2], got %s.", pyFloat(fp))
	case hasRP && rp <= 0:
		return v.failf("repetition_penalty must be greater than zero, got %s.", pyFloat(rp))
	case hasTemp && temp < 0:
		return v.failf("temperature must be non-negative, got %s.", pyFloat(temp))
	case hasTopP && (topP <= 0 || topP > 1):
		return v.failf("top_p must be in (0, 1], got %s.", pyFloat(topP))
	case hasTopK && topK < -1:
		return v.failf("top_k must be 0 (disable), or at least 1, got %d.", topK)
	case hasMinP && (minP < 0 || minP > 1):
		return v.failf("min_p must be in [0, 1], got %s.", pyFloat(minP))
	case hasMax && maxTokens < 1:
		return v.failf("max_tokens must be at least 1, got %d.", maxTokens)
	case hasMin && minTokens < 0:
		return v.failf("min_tokens must be greater than or equal to 0, got %d.", minTokens)
	case hasMin && hasMax && minTokens > maxTokens:
		return v.failf("min_tokens must be less than or equal to max_tokens=%d, got %d.", maxTokens, minTokens)
	}
	return nil
}

// vllmCheck collects the first error of a body's field checks.
type vllmCheck struct {
	model string
	err   error
}

func (v *vllmCheck) fail(msg string) {
	if v.err == nil {
		v.err = &badRequest{msg}
	}
}

func (v *vllmCheck) failf(format string, args ...any) error {
	v.fail(fmt.Sprintf(format, args...))
	return v.err
}

// typ reports an ill-typed field as pydantic words it.
func (v *vllmCheck) typ(field, msg string) {
	v.fail(fmt.Sprintf("1 validation error for %s: %s: %s", v.model, field, msg))
}

// present reports whether a field was given a value other than null (vLLM's optional fields
// take null as absent).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (v *vllmCheck) str(field string, raw json.RawMessage) {
	if present(raw) && raw[0] != '"' {
		v.typ(field, "Input should be a valid string")
	}
}

// boolean reads a bool field: JSON true or false (pydantic also takes the strings it knows,
// which no client of ours sends).
func (v *vllmCheck) boolean(field string, raw json.RawMessage) bool {
	if !present(raw) {
		return false
	}
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	v.typ(field, "Input should be a valid boolean")
	return false
}

// number reads a float field: a JSON number.
func (v *vllmCheck) number(field string, raw json.RawMessage) (float64, bool) {
	if !present(raw) {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || raw[0] == '"' {
		v.typ(field, "Input should be a valid number")
		return 0, false
	}
	return x, true
}

// integer reads an int field: a JSON number with no fractional part (pydantic takes 2.0 as 2
// but refuses 2.5).
func (v *vllmCheck) integer(field string, raw json.RawMessage) (int64, bool) {
	if !present(raw) {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || raw[0] == '"' {
		v.typ(field, "Input should be a valid integer")
		return 0, false
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<62 {
		v.typ(field, "Input should be a valid integer, got a number with a fractional part")
		return 0, false
	}
	return int64(x), true
}

// stop reads stop: a string or a list of strings.
func (v *vllmCheck) stop(raw json.RawMessage) {
	if !present(raw) || raw[0] == '"' {
		return
	}
	var ss []string
	if json.Unmarshal(raw, &ss) != nil {
		v.typ("stop", "Input should be a valid string or a list of strings")
	}
}

// pyFloat writes a float as Python's str does (1.5, 2.0, -3.0).
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if x == math.Trunc(x) && !bytes.ContainsAny([]byte(s), "e") {
		s += ".0"
	}
	return s
}
