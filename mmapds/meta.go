package mmapds

import (
	"bytes"
	"fmt"

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
	// Model is the model name put in request bodies.
	Model string `msgpack:"model"`
	// Concurrency is the number of concurrent requests: the slot count of a closed loop, or a
	// ceiling over a rate; 0 means unbounded.
	Concurrency int `msgpack:"concurrency"`
	// ConcurrencyRampNs ramps the slot count linearly from 1 to Concurrency over this duration.
	ConcurrencyRampNs int64 `msgpack:"concurrency_ramp_ns"`
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
	// CorpusSHA256 identifies the prompt source (corpus or input file) bytes.
	CorpusSHA256 string `msgpack:"corpus_sha256"`
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
	// Spec is every compiler option after defaults were applied, by flag name.
	Spec map[string]any `msgpack:"spec"`
}

// encodeMeta returns the canonical msgpack encoding of m.
func encodeMeta(m *Meta) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(m); err != nil {
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
