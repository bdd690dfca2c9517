// Package rawlog reads and writes the raw event logs that replay workers produce and analyze
// consumes, and the run.json manifest beside them. It is the only thing the two share: analyze
// never imports the replay engine.
//
// A log file is a 16-byte file header (magic, version) followed by frames:
//
//	length uint32 LE | crc32c(payload) uint32 LE | payload
//
// Each record is one msgpack array whose first element is its Kind. A record larger than
// FramePayload (a large response body) is split over consecutive frames: bit 31 of the length
// (FrameContinued) says the record goes on in the next frame, so no frame ever exceeds what a
// reader accepts. A crash can leave a torn final record; the Reader detects it and stops
// cleanly before it, so everything written earlier stays readable. docs/run-format.md
// documents every field.
package rawlog

import (
	"fmt"
	"hash/crc32"
)

// Magic is the first eight bytes of every raw event log.
const Magic = "LLMRAW\x00\x00"

// Version is the raw log format version this package writes. Version 2 added records that
// span several frames (FrameContinued); the Reader reads versions 1 and 2.
const Version = 2

// minVersion is the oldest version the Reader reads: version 1 logs have one frame per record
// and no FrameContinued bit.
const minVersion = 1

// fileHeaderSize is the magic, the version and four reserved bytes.
const fileHeaderSize = 16

// frameHeaderSize is the length and the CRC in front of each payload.
const frameHeaderSize = 8

// MaxFrame bounds one frame's payload; larger lengths are treated as corruption.
const MaxFrame = 1 << 30

// FramePayload is the most payload bytes the Writer puts in one frame; a longer record goes
// on in further frames. It is far below MaxFrame, so any reader of this format accepts every
// frame, and it bounds the Writer's buffer whatever the size of a record.
const FramePayload = 1 << 20

// FrameContinued is set in a frame's length field (version 2) when the record goes on in the
// next frame; the length is the field without this bit.
const FrameContinued = 1 << 31

// MaxRecord bounds a record assembled from several frames; a longer one is corruption. It
// holds the largest Request record replay writes (a response body capped well below 4 GiB
// and its read table).
const MaxRecord = 1 << 33

// headerFields is the array length of a Header record this version writes, kind included.
// Logs from before PlanPath, Planned and Workers had 6.
const headerFields = 9

// gpuFields is the array length of a GPUSample record this version writes, kind included.
const gpuFields = 12

// sentFields is the array length of a Sent record, kind included.
const sentFields = 3

// requestFields is the array length of a Request record this version writes, kind included.
// Version 1 logs from before URLIndex and the Connect times had 15; logs from before
// Reconnects, FirstWriteStartNs and ServerClosed had 18.
const requestFields = 21

// requestFieldsConnect is the array length of a Request record with URLIndex and the Connect
// times but without the reconnect fields.
const requestFieldsConnect = 18

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Kind identifies a record.
type Kind uint8

const (
	// KindHeader is the first record of every log: who wrote it.
	KindHeader Kind = 1
	// KindRequest is one planned request and everything observed about it.
	KindRequest Kind = 2
	// KindCPU is a sample of the writing process's CPU time.
	KindCPU Kind = 3
	// KindGPU is one GPU telemetry sample.
	KindGPU Kind = 4
	// KindFooter closes a log that was shut down cleanly.
	KindFooter Kind = 5
	// KindSent marks a request as started: written, and in the kernel, before any byte of
	// the request reaches the socket. A Sent record without a Request record for the same
	// index means the request was in flight when its worker died.
	KindSent Kind = 6
)

// Outcome is how a planned request ended. Every planned request ends with exactly one.
type Outcome uint8

const (
	// OutcomeCompleted: sent, and the response was read to its end (any HTTP status).
	OutcomeCompleted Outcome = 1
	// OutcomeFailed: sent, and a transport error, timeout or protocol error ended it.
	OutcomeFailed Outcome = 2
	// OutcomeCancelled: sent, and cancelled by the plan's cancel-after delay.
	OutcomeCancelled Outcome = 3
	// OutcomeNotSent: never sent, because the run was interrupted first, the plan's duration
	// had elapsed, or the worker died (or never started) before sending it.
	OutcomeNotSent Outcome = 4
	// OutcomeAborted: sent, and cut off because the run was interrupted (grace period over).
	OutcomeAborted Outcome = 5
)

var outcomeNames = [...]string{"", "completed", "failed", "cancelled", "not_sent", "aborted"}

// SkippedErr is the Err of the not_sent record of a request that was not sent because
// request failed, which it depends on (a graph node that needs its parents' success).
func SkippedErr(failed uint32) string {
	return fmt.Sprintf("not sent: request %d, which it depends on, did not complete", failed)
}

// SkippedFor returns the request a not_sent record's Err (SkippedErr) names, and whether it
// is such a record.
func SkippedFor(err string) (uint32, bool) {
	var n uint32
	if _, e := fmt.Sscanf(err, "not sent: request %d, which it depends on, did not complete", &n); e != nil || SkippedErr(n) != err {
		return 0, false
	}
	return n, true
}

// String returns the outcome's name as used in exports.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return "unknown"
}

// Header is the first record of a log.
type Header struct {
	// Worker is the worker number (0-based); -1 for the coordinator's telemetry log.
	Worker int
	// PID is the writing process's id.
	PID int
	// CPU is the CPU the worker is pinned to, or -1.
	CPU int
	// PlanHash is the hex SHA-256 of the plan being replayed.
	PlanHash string
	// StartUnixNs is the wall-clock time of the run's monotonic zero, in Unix nanoseconds.
	StartUnixNs int64

	// Fields below were added after the first six array elements, so that a damaged run.json
	// can be rebuilt from the worker logs (RebuildManifest); a record written without them
	// decodes with PlanPath "" and Planned and Workers -1 (unknown).

	// PlanPath is the plan's path as run.json's plan_path gives it.
	PlanPath string
	// Planned is the number of plan records in the worker's part (run.json workers[].planned).
	Planned int
	// Workers is the number of worker processes in the run.
	Workers int
}

// Request is everything a worker observed about one planned request. All *Ns times are
// nanoseconds on the run's monotonic clock (0 = the run's start instant); -1 means "did not
// happen". Slices alias the Reader's buffers and are valid until the next call to Next.
type Request struct {
	// Index is the record number in the plan.
	Index uint32
	// Outcome says how the request ended.
	Outcome Outcome
	// Status is the HTTP status code, 0 when no response header arrived.
	Status int
	// ConnReused tells whether the request went over a connection used before.
	ConnReused bool
	// IntendedNs is the planned send instant (-1 for closed-loop requests, which have none).
	IntendedNs int64
	// ReadyNs is when the worker could first send it: the planned instant, the previous turn's
	// completion plus delay, or when a concurrency slot freed, whichever came last.
	ReadyNs int64
	// WriteStartNs and WriteEndNs bracket writing the request (headers and body) to the socket.
	WriteStartNs int64
	WriteEndNs   int64
	// HeaderNs is when the response status line and headers had been read.
	HeaderNs int64
	// EndNs is when the request ended, whatever its outcome.
	EndNs int64
	// ReadNs[i] is when the i-th read of the response body returned.
	ReadNs []int64
	// ReadEnd[i] is the end offset in Body of the bytes the i-th read delivered (after
	// removing transfer encoding); reads that delivered only framing add nothing.
	ReadEnd []uint32
	// Body is the response body, transfer decoding removed.
	Body []byte
	// Err describes a transport error or the reason for the outcome; empty when completed.
	Err string

	// Fields below were added after the first fifteen array elements; a record written
	// without them decodes with URLIndex 0 and Connect*Ns -1.

	// URLIndex indexes Manifest.URLs: the base URL the request went to.
	URLIndex int
	// ConnectStartNs and ConnectEndNs bracket opening a new connection for this request
	// (TCP connect plus TLS handshake); both are -1 when an open connection was reused.
	ConnectStartNs int64
	ConnectEndNs   int64

	// Fields below were added after the first eighteen array elements; a record written
	// without them decodes with Reconnects 0, FirstWriteStartNs -1 and ServerClosed false.

	// Reconnects counts the times the request was written on a reused connection that the
	// server had already closed (EOF or reset before any response byte) and was sent again on
	// a new one: 0 or 1. The other fields describe the attempt that went through.
	Reconnects int
	// FirstWriteStartNs is when the first attempt began writing, on the connection found
	// closed; -1 without a reconnect. The client acted then: dispatch lag counts from it.
	FirstWriteStartNs int64
	// ServerClosed says the request went on a new connection because of the server: the
	// connection it would have reused had been closed by the server (Reconnects > 0, or found
	// closed while idle), or the server closes every connection after its response and the
	// worker stopped reusing connections to that URL (learned from the preflight or from a
	// connection closed right after its first response).
	ServerClosed bool
}

// CPUSample is the cumulative CPU time of the writing process at TimeNs.
type CPUSample struct {
	TimeNs int64
	UserNs int64
	SysNs  int64
}

// GPUSample is one NVML reading of one GPU. Fields NVML could not read are -1.
type GPUSample struct {
	TimeNs int64
	// GPU is the device index; UUID its NVML UUID.
	GPU  int
	UUID string
	// PowerMilliwatts is the power draw as NVML's nvmlDeviceGetPowerUsage reports it (what
	// nvidia-smi shows as power.draw and DCGM as DCGM_FI_DEV_POWER_USAGE, which AIPerf reads):
	// on Ampere and newer GPUs an average over the last second.
	PowerMilliwatts int64
	// EnergyMillijoules is the device's total energy counter since driver load.
	EnergyMillijoules int64
	// GPUUtilPct and MemUtilPct are NVML utilisation rates in percent.
	GPUUtilPct int64
	MemUtilPct int64
	// MemUsedBytes is framebuffer memory in use.
	MemUsedBytes int64
	// SMClockMHz is the current SM clock.
	SMClockMHz int64
	// TempC is the GPU temperature in degrees Celsius.
	TempC int64

	// Fields below were added after the first eleven array elements; a record written without
	// them decodes with -1.

	// PowerInstantMilliwatts is the instantaneous power draw (NVML field
	// NVML_FI_DEV_POWER_INSTANT, nvidia-smi's power.draw.instant).
	PowerInstantMilliwatts int64
}

// Sent says that a worker started sending a request: the record is in the kernel before any
// byte of the request is written to the socket, so after a SIGKILL a request with a Sent
// record and no Request record was in flight, and one with neither was never sent.
type Sent struct {
	// Index is the record number in the plan.
	Index uint32
	// TimeNs is when the request was handed to its connection (run clock).
	TimeNs int64
}

// Footer closes a cleanly shut-down log.
type Footer struct {
	// TimeNs is when the log was closed.
	TimeNs int64
	// Requests is the number of Request records written.
	Requests int
	// Status is "complete" or "interrupted" for a worker's log, StatusRecovered for the
	// coordinator's recovery log of a worker that died.
	Status string
}
