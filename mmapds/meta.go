package mmapds

import (
	"bytes"
	"fmt"
	"math"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Meta is the plan-wide part of a plan file: what replay needs to send the records and what
// analyze needs to interpret them, plus the whole resolved spec for the record. It is stored as
// msgpack with sorted map keys, so equal values give equal bytes.
type Meta struct {
	// ToolVersion is the version of the plan compiler that wrote the file.
	ToolVersion string `msgpack:"tool_version"`
	// Endpoint is the endpoint type name (see package endpoint), e.g. "chat".
	Endpoint string `msgpack:"endpoint"`
	// Paths are the URL paths requests are sent to; Record.PathID indexes them.
	Paths []string `msgpack:"paths"`
	// Method is the HTTP method, normally "POST".
	Method string `msgpack:"method"`
	// Headers are fixed request headers (Content-Type, Accept, endpoint-specific ones). Secrets
	// never appear here: replay adds credentials at run time.
	Headers map[string]string `msgpack:"headers"`
	// Streaming tells whether requests ask for a streamed response.
	Streaming bool `msgpack:"streaming"`
	// Model is the model name put in request bodies, or a comma-separated list of them
	// (--model a,b) that the plan picked from per dataset turn.
	Model string `msgpack:"model"`
	// TimingMode says how send instants were planned: "concurrency" (closed loop: every
	// first turn waits for a free slot), "request_rate" (first turns at instants drawn from
	// the arrival process), "fixed_schedule" (instants from the input's timestamps) or
	// "user_centric" (each user's turns on a fixed per-user grid).
	TimingMode string `msgpack:"timing_mode"`
	// ArrivalPattern is the request_rate arrival process: "constant", "poisson" or "gamma".
	ArrivalPattern string `msgpack:"arrival_pattern,omitempty"`
	// Dataset is the input kind ("synthetic", "mooncake_trace", ...).
	Dataset string `msgpack:"dataset"`
	// Concurrency is the number of sessions in flight: the slot count of a closed loop, or a
	// ceiling over planned instants (a request whose instant comes while every slot is busy
	// waits for one); 0 means unbounded.
	Concurrency int `msgpack:"concurrency"`
	// ConcurrencyRampNs ramps the slot count linearly from 1 to Concurrency over this duration,
	// from the profile's start.
	ConcurrencyRampNs int64 `msgpack:"concurrency_ramp_ns"`
	// PrefillConcurrency caps the requests in prefill (sent, no response body byte back yet);
	// 0 means none. PrefillConcurrencyRampNs ramps it from 1 like ConcurrencyRampNs.
	PrefillConcurrency       int   `msgpack:"prefill_concurrency,omitempty"`
	PrefillConcurrencyRampNs int64 `msgpack:"prefill_concurrency_ramp_ns,omitempty"`
	// WarmupConcurrency, WarmupConcurrencyRampNs, WarmupPrefillConcurrency and
	// WarmupPrefillConcurrencyRampNs are the warmup's caps and ramps, from the run's start;
	// 0 means the profile's.
	WarmupConcurrency              int   `msgpack:"warmup_concurrency,omitempty"`
	WarmupConcurrencyRampNs        int64 `msgpack:"warmup_concurrency_ramp_ns,omitempty"`
	WarmupPrefillConcurrency       int   `msgpack:"warmup_prefill_concurrency,omitempty"`
	WarmupPrefillConcurrencyRampNs int64 `msgpack:"warmup_prefill_concurrency_ramp_ns,omitempty"`
	// WarmupCount and ProfileCount count the records of each phase; warmup records come first.
	WarmupCount int `msgpack:"warmup_count"`
	// ProfileCount is the number of profile-phase records.
	ProfileCount int `msgpack:"profile_count"`
	// DurationNs is the planned profile duration when the plan was sized by duration, else 0.
	DurationNs int64 `msgpack:"duration_ns"`
	// OfferedRate is the planned request rate in requests per second (0 for a closed loop).
	OfferedRate float64 `msgpack:"offered_rate"`
	// Tokenizer names the tokenizer ISL was verified with; TokenizerSHA256 identifies its bytes.
	Tokenizer       string `msgpack:"tokenizer"`
	TokenizerSHA256 string `msgpack:"tokenizer_sha256"`
	// CorpusSHA256 identifies the embedded corpus text that synthetic prompts, synthesized
	// replies and trace blocks are drawn from.
	CorpusSHA256 string `msgpack:"corpus_sha256"`
	// InputSHA256 identifies the input file's bytes (--input-file); empty for synthetic plans.
	InputSHA256 string `msgpack:"input_sha256,omitempty"`
	// Seed is the random seed everything was drawn from.
	Seed uint64 `msgpack:"seed"`
	// ConversationHistory is "compiled" (bodies hold the whole history) or "live" (replay
	// splices the real previous response at LiveHistoryMarker).
	ConversationHistory string `msgpack:"conversation_history"`
	// LiveHistoryMarker is the byte string in a FlagLiveHistory body that replay replaces
	// with the JSON-escaped previous response text.
	LiveHistoryMarker string `msgpack:"live_history_marker,omitempty"`
	// Reproducible is false when bodies depend on run-time responses.
	Reproducible bool `msgpack:"reproducible"`
	// InputInsight summarizes the input file as `aiperf analyze-trace` does (ISL/OSL
	// statistics, prefix groups, reuse ratio, infinite-prefix-cache hit rate); absent for
	// synthetic plans.
	InputInsight map[string]any `msgpack:"input_insight,omitempty"`
	// PrefixReuseBlockTokens is the block size of the offered prefix reuse, which the
	// compiler computes from the tokens of the rendered prompts (plan/dataset reuse.go):
	// each graph node's Reuse, and ProfileReusedTokens of ProfilePromptTokens over the
	// profile's records. 0 in plans written before, whose graph nodes counted hash ids.
	PrefixReuseBlockTokens int   `msgpack:"prefix_reuse_block_tokens,omitempty"`
	ProfileReusedTokens    int64 `msgpack:"profile_reused_tokens,omitempty"`
	ProfilePromptTokens    int64 `msgpack:"profile_prompt_tokens,omitempty"`
	// Spec is every compiler option after defaults were applied, by flag name.
	Spec map[string]any `msgpack:"spec"`
	// Media describes the images, audio and video of the requests that send any: one
	// entry per distinct body with media, which Record.Media indexes from 1. Absent when
	// no request has media.
	Media []MediaEntry `msgpack:"media,omitempty"`
	// Agents are the conversations of a graph plan's sessions (graph.go): the graph node
	// of each record names one. Absent for plans without a graph.
	Agents []Agent `msgpack:"agents,omitempty"`
}

// MediaEntry is what one request body sends besides text: how many media of each kind,
// their encoded bytes (before base64) and each item's size. ISL counts text only.
type MediaEntry struct {
	Images int `msgpack:"images" json:"images"`
	Audios int `msgpack:"audios" json:"audios"`
	Videos int `msgpack:"videos" json:"videos"`
	// Bytes is the encoded media bytes of the entry, summed (URLs count 0).
	Bytes int64 `msgpack:"bytes" json:"bytes"`
	// AudioSeconds is the summed duration of the audio clips.
	AudioSeconds float64 `msgpack:"audio_seconds" json:"audio_seconds"`
	// Items lists the media in body order.
	Items []MediaItem `msgpack:"items" json:"items"`
}

// MediaItem is one image, audio clip or video of a request.
type MediaItem struct {
	// Kind is image, audio or video.
	Kind string `msgpack:"kind" json:"kind"`
	// Format is png, jpeg, gif, wav, mp3, webm, mp4, or url for a passed-through URL.
	Format string `msgpack:"format" json:"format"`
	// Bytes is the encoded size (0 for a URL).
	Bytes int `msgpack:"bytes" json:"bytes"`
	// Width and Height are the pixel size of an image or video (0 when unknown).
	Width  int `msgpack:"width,omitempty" json:"width,omitempty"`
	Height int `msgpack:"height,omitempty" json:"height,omitempty"`
	// Seconds is an audio clip's or video's duration (0 when unknown).
	Seconds float64 `msgpack:"seconds,omitempty" json:"seconds,omitempty"`
}

// ResponseField is where a raw or template plan's responses hold their output text
// (--response-field, kept in Spec by its flag name, or as the --extra-inputs key
// response_field, which wins); "" to detect it.
func (m *Meta) ResponseField() string {
	for _, k := range [...]string{"response_field", "response-field"} {
		if f, ok := m.Spec[k].(string); ok && f != "" {
			return f
		}
	}
	return ""
}

// UserGrid returns a "user_centric" plan's users N (--num-users, kept in Spec) and rate R
// (OfferedRate, --user-centric-rate); 0, 0 for any other plan. User u's sessions enter on
// the grid profile start + (u + k·N)/R seconds (see UserOf).
func (m *Meta) UserGrid() (users int, rate float64) {
	if m.TimingMode != "user_centric" || !(m.OfferedRate > 0) {
		return 0, 0
	}
	switch v := m.Spec["num-users"].(type) {
	case int64:
		users = int(v)
	case uint64:
		users = int(min(v, math.MaxInt32))
	case int:
		users = v
	case int8:
		users = int(v)
	case int16:
		users = int(v)
	case int32:
		users = int(v)
	case uint8:
		users = int(v)
	case uint16:
		users = int(v)
	case uint32:
		users = int(v)
	case float64:
		if v == math.Trunc(v) && v > 0 && v <= math.MaxInt32 {
			users = int(v)
		}
	}
	if users <= 0 {
		return 0, 0
	}
	return users, m.OfferedRate
}

// UserOf is the user (0..users-1) whose session enters at instant atNs of a user_centric
// plan whose profile starts at startNs (its smallest profile send offset: user 0's first
// session): round((atNs-startNs)·rate/1e9) mod users, exact on the plan's grid, where every
// user's sessions enter at startNs + (u + k·users)/rate seconds.
func UserOf(atNs, startNs int64, users int, rate float64) int {
	k := int64(math.Round(float64(atNs-startNs) * rate / 1e9))
	u := k % int64(users)
	if u < 0 {
		u += int64(users)
	}
	return int(u)
}

// MediaOf returns the media entry of r, or nil when r sends none (or its index is out of
// range, which Plan.Validate reports).
func (m *Meta) MediaOf(r *Record) *MediaEntry {
	if r.Media == 0 || int64(r.Media) > int64(len(m.Media)) {
		return nil
	}
	return &m.Media[r.Media-1]
}

// encodeMeta returns the canonical msgpack encoding of m.
func encodeMeta(m *Meta) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	// msgpack sorts the keys of map[string]any, map[string]string and map[string]bool only;
	// free-form values (typed maps nested in Spec or InputInsight) are rewritten into those
	// shapes first so that map iteration order never reaches the bytes.
	c := *m
	c.Spec = canonicalMap(m.Spec)
	c.InputInsight = canonicalMap(m.InputInsight)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("mmapds: encode meta: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeMeta decodes a Meta from its msgpack encoding.
func decodeMeta(b []byte) (*Meta, error) {
	var m Meta
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("mmapds: decode meta: %w", err)
	}
	return &m, nil
}

// canonicalMap returns m with every nested map turned into map[string]any and every nested
// slice (other than []byte) into []any, recursively.
func canonicalMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = canonical(v)
	}
	return out
}

func canonical(v any) any {
	switch x := v.(type) {
	case nil, bool, string, []byte, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return v
	case map[string]any:
		return canonicalMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			k := iter.Key()
			key := fmt.Sprint(k.Interface())
			if k.Kind() == reflect.String {
				key = k.String()
			}
			out[key] = canonical(iter.Value().Interface())
		}
		return out
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = canonical(rv.Index(i).Interface())
		}
		return out
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
		return canonical(rv.Elem().Interface())
	}
	return v
}
