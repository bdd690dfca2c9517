// Package tracectx owns the W3C trace context every planned request carries: a run's
// trace key, and from it each request's trace id, parent span id and traceparent header.
//
// The ids are a bijection of the request's plan index under the run's key, so the send path
// builds a header with no allocation and no table, and a trace receiver (or analyze) maps a
// span's trace id back to the request it belongs to, or knows it belongs to no request of
// this run, without any state. It imports nothing of this repository.
package tracectx

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// Key identifies one run's trace ids. The zero Key means no trace context is sent.
type Key [16]byte

// NewKey derives a run's key from what identifies the run: the plan's hash, the run's start
// instant and the distributed run id (the same on every shard, so the shards of one run
// share a key; "" for a run of one). Two runs of one plan get different keys.
func NewKey(planHash string, startUnixNs int64, runID string) Key {
	h := sha256.New()
	h.Write([]byte("llmbench trace key v1\x00"))
	h.Write([]byte(planHash))
	h.Write([]byte{0})
	if runID != "" {
		// Shards of one distributed run start at one agreed instant but may disagree on
		// it by clock skew; the run id alone names them.
		h.Write([]byte(runID))
	} else {
		h.Write(strconv.AppendInt(nil, startUnixNs, 10))
	}
	var k Key
	copy(k[:], h.Sum(nil))
	if k.IsZero() {
		k[15] = 1
	}
	return k
}

// IsZero tells whether k is the zero Key (no trace context).
func (k Key) IsZero() bool { return k == Key{} }

// String is the key in 32 lowercase hex digits, as run.json records it.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// ParseKey reads String's form back.
func ParseKey(s string) (Key, error) {
	var k Key
	if len(s) != 32 {
		return k, fmt.Errorf("trace key %q: want 32 hex digits", s)
	}
	if _, err := hex.Decode(k[:], []byte(s)); err != nil {
		return k, fmt.Errorf("trace key %q: %v", s, err)
	}
	return k, nil
}

func (k Key) halves() (hi, lo uint64) {
	return binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint64(k[8:])
}

// TraceID is the trace id of the request at plan index i: the key's first half, then a
// bijective mix of the key's second half and i. Never all zero (W3C forbids it).
func (k Key) TraceID(i uint32) [16]byte {
	hi, lo := k.halves()
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], mix(lo^uint64(i)))
	if id == ([16]byte{}) {
		id[0] = 1 // only for a key whose first half is zero; Index then finds nothing
	}
	return id
}

// SpanID is the parent span id the request's traceparent names: the client's span.
// Never all zero.
func (k Key) SpanID(i uint32) [8]byte {
	hi, lo := k.halves()
	var id [8]byte
	s := mix(hi ^ mix(lo^uint64(i)) ^ 0x9e3779b97f4a7c15)
	if s == 0 {
		s = 1
	}
	binary.BigEndian.PutUint64(id[:], s)
	return id
}

// Index maps a trace id back to the plan index of the request that carried it; ok is false
// when the id is not one of this run's.
func (k Key) Index(traceID [16]byte) (i uint32, ok bool) {
	if k.IsZero() {
		return 0, false
	}
	hi, lo := k.halves()
	if binary.BigEndian.Uint64(traceID[:8]) != hi {
		return 0, false
	}
	x := unmix(binary.BigEndian.Uint64(traceID[8:])) ^ lo
	if x > 0xffffffff {
		return 0, false
	}
	return uint32(x), true
}

// HeaderName is the header AppendTraceparent's value goes in.
const HeaderName = "traceparent"

// TraceparentLen is the length of a traceparent value: "00-" 32 hex "-" 16 hex "-01".
const TraceparentLen = 55

// AppendTraceparent appends the request's traceparent value (version 00, sampled) to dst.
// It allocates nothing when dst has TraceparentLen bytes of room.
func (k Key) AppendTraceparent(dst []byte, i uint32) []byte {
	tid, sid := k.TraceID(i), k.SpanID(i)
	dst = append(dst, '0', '0', '-')
	dst = appendHex(dst, tid[:])
	dst = append(dst, '-')
	dst = appendHex(dst, sid[:])
	return append(dst, '-', '0', '1')
}

const hexDigits = "0123456789abcdef"

func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// ParseTraceID reads a trace id in hex (32 digits, either case), as OTLP JSON and the
// per-request export write it.
func ParseTraceID(s string) (id [16]byte, err error) {
	if len(s) != 32 {
		return id, fmt.Errorf("trace id %q: want 32 hex digits", s)
	}
	_, err = hex.Decode(id[:], []byte(s))
	return id, err
}

// mix is splitmix64's finaliser: a bijection of uint64.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// unmix inverts mix.
func unmix(z uint64) uint64 {
	z ^= z>>31 ^ z>>62
	z *= 0x319642b2d24d8ec3 // inverse of 0x94d049bb133111eb mod 2^64
	z ^= z>>27 ^ z>>54
	z *= 0x96de1b173f119089 // inverse of 0xbf58476d1ce4e5b9 mod 2^64
	z ^= z>>30 ^ z>>60
	return z
}
