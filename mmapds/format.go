// Package mmapds reads and writes plan files: the compiled, content-hashed workload that `plan`
// writes and `replay` maps read-only and sends zero-copy.
//
// A plan file is little-endian and laid out as
//
//	header (128 bytes) | bodies blob | records (64 bytes each) | meta (msgpack) | SHA-256 (32 bytes)
//
// The trailing SHA-256 covers every byte before it and is the plan's identity. The layout is
// documented field by field in docs/plan-format.md; a change to it bumps Version.
package mmapds

import "encoding/binary"

// Magic is the first eight bytes of every plan file.
const Magic = "LLMPLAN\x00"

// Version is the newest plan file format version. This package writes it for plans with a
// graph section (GraphVersion), version 2 for plans with media and no graph, and MinVersion
// for the rest, unchanged. It reads MinVersion to Version: version 2 gave the record's last
// four bytes a meaning (Record.Media), which version 1 files hold as zeros, so they read as
// plans without media; version 3 added the graph section (graph.go), located by header
// bytes 80 to 95, which earlier versions hold as zeros, so they read as plans without one.
const Version = GraphVersion

// MinVersion is the oldest plan file format version this package reads.
const MinVersion = 1

// HeaderSize is the size of the fixed header at the start of the file.
const HeaderSize = 128

// RecordSize is the size of one request record.
const RecordSize = 64

// HashSize is the size of the trailing SHA-256.
const HashSize = 32

// NoSendOffset marks a record whose request is sent when a concurrency slot frees (closed loop),
// not at a planned instant.
const NoSendOffset int64 = -1

// Phase tells whether a request belongs to warmup (not measured) or to the profile.
type Phase uint8

const (
	// PhaseWarmup requests run before the profile and are excluded from metrics.
	PhaseWarmup Phase = 0
	// PhaseProfile requests are measured.
	PhaseProfile Phase = 1
)

// String returns "warmup" or "profile".
func (p Phase) String() string {
	switch p {
	case PhaseWarmup:
		return "warmup"
	case PhaseProfile:
		return "profile"
	}
	return "phase?"
}

// Record flags.
const (
	// FlagLiveHistory marks a later turn whose body must be completed at run time with the real
	// previous response (--conversation-history live); its stored body is a template whose
	// splice point is given by Meta.LiveHistoryMarker.
	FlagLiveHistory uint8 = 1 << 0
)

// Record is one planned request. It is decoded by value from the mapping, so reading one
// allocates nothing.
type Record struct {
	// SendOffsetNs is the planned send instant in nanoseconds after the run's start (warmup
	// and profile share one timeline: the profile's instants continue where the warmup's
	// schedule ends), or NoSendOffset when the request has no planned instant: a first turn
	// then waits for a free concurrency slot, a later turn only for its previous turn.
	SendOffsetNs int64
	// DelayNs is how long after the previous turn of the same session completes this turn may
	// be sent; -1 for first turns, which wait for no previous turn. A later turn is sent at
	// max(SendOffsetNs, previous completion + DelayNs).
	DelayNs int64
	// CancelAfterNs cancels the request this long after it was sent; 0 means never.
	CancelAfterNs int64
	// BodyOffset and BodyLen locate the rendered HTTP request body in the bodies blob.
	BodyOffset uint64
	BodyLen    uint32
	// Index is the request's position in the plan (0-based, equal to its record number).
	Index uint32
	// Session groups the turns of one conversation; single-turn requests have their own. The
	// turns of a session are consecutive records, in turn order.
	Session uint32
	// Turn is the 0-based turn index within the session.
	Turn uint32
	// ISL is the verified input length in tokens under the plan's tokenizer.
	ISL uint32
	// OSL is the requested output length in tokens (0 when the request leaves it unset).
	OSL uint32
	// PathID indexes Meta.Paths.
	PathID uint16
	// Phase is warmup or profile.
	Phase Phase
	// Flags holds Flag* bits.
	Flags uint8
	// Media is the 1-based index into Meta.Media of the entry describing the request's
	// images, audio and video; 0 when it sends none.
	Media uint32
}

// putRecord encodes r into b, which must hold RecordSize bytes.
func putRecord(b []byte, r *Record) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(r.SendOffsetNs))
	le.PutUint64(b[8:], uint64(r.DelayNs))
	le.PutUint64(b[16:], uint64(r.CancelAfterNs))
	le.PutUint64(b[24:], r.BodyOffset)
	le.PutUint32(b[32:], r.BodyLen)
	le.PutUint32(b[36:], r.Index)
	le.PutUint32(b[40:], r.Session)
	le.PutUint32(b[44:], r.Turn)
	le.PutUint32(b[48:], r.ISL)
	le.PutUint32(b[52:], r.OSL)
	le.PutUint16(b[56:], r.PathID)
	b[58] = byte(r.Phase)
	b[59] = r.Flags
	le.PutUint32(b[60:], r.Media)
}

// getRecord decodes the RecordSize bytes of b.
func getRecord(b []byte) Record {
	le := binary.LittleEndian
	_ = b[RecordSize-1]
	return Record{
		SendOffsetNs:  int64(le.Uint64(b[0:])),
		DelayNs:       int64(le.Uint64(b[8:])),
		CancelAfterNs: int64(le.Uint64(b[16:])),
		BodyOffset:    le.Uint64(b[24:]),
		BodyLen:       le.Uint32(b[32:]),
		Index:         le.Uint32(b[36:]),
		Session:       le.Uint32(b[40:]),
		Turn:          le.Uint32(b[44:]),
		ISL:           le.Uint32(b[48:]),
		OSL:           le.Uint32(b[52:]),
		PathID:        le.Uint16(b[56:]),
		Phase:         Phase(b[58]),
		Flags:         b[59],
		Media:         le.Uint32(b[60:]),
	}
}

// header is the fixed 128-byte file header.
type header struct {
	version     uint32
	recordCount uint64
	bodiesOff   uint64
	bodiesLen   uint64
	recordsOff  uint64
	metaOff     uint64
	metaLen     uint64
	fileLen     uint64 // total length including the trailing hash
	graphOff    uint64 // version 3: the graph section, between the records and the meta
	graphLen    uint64
}

func (h *header) put(b []byte) {
	le := binary.LittleEndian
	copy(b[0:8], Magic)
	le.PutUint32(b[8:], h.version)
	le.PutUint32(b[12:], HeaderSize)
	le.PutUint32(b[16:], RecordSize)
	le.PutUint32(b[20:], 0)
	le.PutUint64(b[24:], h.recordCount)
	le.PutUint64(b[32:], h.bodiesOff)
	le.PutUint64(b[40:], h.bodiesLen)
	le.PutUint64(b[48:], h.recordsOff)
	le.PutUint64(b[56:], h.metaOff)
	le.PutUint64(b[64:], h.metaLen)
	le.PutUint64(b[72:], h.fileLen)
	le.PutUint64(b[80:], h.graphOff)
	le.PutUint64(b[88:], h.graphLen)
	for i := 96; i < HeaderSize; i++ {
		b[i] = 0
	}
}
