package rendezvous

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/llmbench/llmbench/rawlog"
)

// Version is the wire protocol's version, carried by every message ("v"). Shard 0 refuses a
// shard that speaks another one: the run mixes llmbench versions.
const Version = 1

// MaxLine is the longest message accepted, newline included: a peer sending more is cut off.
const MaxLine = 64 << 10

// Bounds on the text fields a peer sends, which end up in error lines.
const (
	maxName   = 255
	maxReason = 4096
)

// MaxListed is how many missing shard indexes a waiting message and an error line list; the
// rest are counted.
const MaxListed = 32

// Message types (docs/distributed.md, "The rendezvous protocol").
const (
	TypeReady   = "ready"   // shard → shard 0: my workers are ready; who I am
	TypeWaiting = "waiting" // shard 0 → shards: who is still missing
	TypePing    = "ping"    // shard 0 → shard: measure the round trip and the clock
	TypePong    = "pong"    // shard → shard 0: the answer, with the shard's wall clock
	TypeStart   = "start"   // shard 0 → shards: the start instant
	TypeAbort   = "abort"   // shard 0 → shards: the run will not start, and why
)

// Message is one line of the protocol: a JSON object and a newline. Which fields a type
// uses is in docs/distributed.md; the others are absent.
type Message struct {
	V    int    `json:"v"`
	Type string `json:"type"`

	// ready
	Index    int                `json:"index,omitempty"`
	Count    int                `json:"count,omitempty"`
	PlanHash string             `json:"plan_hash,omitempty"`
	RunID    string             `json:"run_id,omitempty"`
	Host     string             `json:"host,omitempty"`
	Clock    *rawlog.ClockState `json:"clock,omitempty"`

	// waiting: the first MaxListed missing indexes, and how many are missing in all
	Missing      []int `json:"missing,omitempty"`
	MissingCount int   `json:"missing_count,omitempty"`

	// ping, pong
	Seq    int   `json:"seq,omitempty"`
	WallNs int64 `json:"wall_ns,omitempty"`

	// start
	StartUnixNs int64 `json:"start_unix_ns,omitempty"`
	MaxRTTNs    int64 `json:"max_rtt_ns,omitempty"`
	LeadNs      int64 `json:"lead_ns,omitempty"`
	OffsetNs    int64 `json:"offset_ns,omitempty"`
	OffsetErrNs int64 `json:"offset_err_ns,omitempty"`

	// abort
	Reason string `json:"reason,omitempty"`
}

// errVersion is a well-formed message of another protocol version.
type errVersion struct{ v int }

func (e errVersion) Error() string {
	return fmt.Sprintf("speaks rendezvous protocol version %d, this shard %d (mixed llmbench versions)", e.v, Version)
}

// ParseMessage decodes one line (without or with its newline) and checks what every message
// of its type must carry. It never panics on any input.
func ParseMessage(line []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("not a rendezvous message: %w", err)
	}
	if m.V != Version {
		return Message{}, errVersion{m.V}
	}
	switch m.Type {
	case TypeReady:
		if m.Count < 1 || m.Index < 0 {
			return Message{}, fmt.Errorf("ready: shard %d of %d is no shard", m.Index, m.Count)
		}
		if !rawlog.IsPlanHash(m.PlanHash) {
			return Message{}, fmt.Errorf("ready: plan hash %.80q: want 64 lower-case hex digits", m.PlanHash)
		}
		if len(m.Host) > maxName || len(m.RunID) > maxName {
			return Message{}, fmt.Errorf("ready: host or run id longer than %d bytes", maxName)
		}
	case TypeStart:
		if m.StartUnixNs <= 0 {
			return Message{}, errors.New("start: no start instant")
		}
	case TypePing, TypePong:
		if m.Seq <= 0 {
			return Message{}, fmt.Errorf("%s: no sequence number", m.Type)
		}
	case TypeAbort:
		if len(m.Reason) > maxReason {
			// Cut at a rune boundary, the ellipsis included within the bound.
			n := maxReason - len("…")
			for n > 0 && !utf8.RuneStart(m.Reason[n]) {
				n--
			}
			m.Reason = m.Reason[:n] + "…"
		}
	case TypeWaiting:
		if len(m.Missing) > MaxListed {
			m.Missing = m.Missing[:MaxListed]
		}
		m.MissingCount = max(m.MissingCount, len(m.Missing))
	default:
		return Message{}, fmt.Errorf("unknown message type %.40q", m.Type)
	}
	return m, nil
}

// readMessage reads one line of at most MaxLine bytes and parses it.
func readMessage(r *bufio.Reader) (Message, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return Message{}, fmt.Errorf("a line longer than %d bytes", MaxLine)
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return Message{}, errors.New("connection closed mid-message")
		}
		return Message{}, err
	}
	return ParseMessage(line)
}

// encode is m as one line.
func encode(m Message) []byte {
	m.V = Version
	b, _ := json.Marshal(m) // a Message always marshals
	return append(b, '\n')
}
