package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench/llmbench/mmapds"
)

// Summary is what `plan inspect` reports about a plan file. Its JSON names are a stable
// interface for scripts: hash, request_count, spec and requests in particular.
type Summary struct {
	Hash              string            `json:"hash"`
	RequestCount      int               `json:"request_count"`
	WarmupCount       int               `json:"warmup_count"`
	ProfileCount      int               `json:"profile_count"`
	SessionCount      int               `json:"session_count"`
	DistinctBodies    int               `json:"distinct_bodies"`
	FileSize          int64             `json:"file_size"`
	ToolVersion       string            `json:"tool_version"`
	Endpoint          string            `json:"endpoint"`
	Method            string            `json:"method"`
	Paths             []string          `json:"paths"`
	Headers           map[string]string `json:"headers"`
	Streaming         bool              `json:"streaming"`
	Model             string            `json:"model"`
	Dataset           string            `json:"dataset"`
	TimingMode        string            `json:"timing_mode"`
	ArrivalPattern    string            `json:"arrival_pattern,omitempty"`
	Concurrency       int               `json:"concurrency"`
	ConcurrencyRampNs int64             `json:"concurrency_ramp_ns"`
	DurationNs        int64             `json:"duration_ns"`
	PlannedDurationNs *int64            `json:"planned_duration_ns"` // profile: last instant − first; null for a closed loop
	// OfferedRate is the rate the plan's own profile instants offer (mmapds.Offer.Rate; 0 for
	// a closed loop), NominalRate the rate asked for (--request-rate, --user-centric-rate).
	OfferedRate float64 `json:"offered_rate"`
	NominalRate float64 `json:"nominal_rate,omitempty"`
	// RepeatedRequests counts the profile requests whose body an earlier request sent;
	// OfferedReuse is their share of the profile's prompt tokens.
	RepeatedRequests    int            `json:"repeated_requests"`
	OfferedReuse        float64        `json:"offered_reuse"`
	Tokenizer           string         `json:"tokenizer"`
	TokenizerSHA256     string         `json:"tokenizer_sha256"`
	CorpusSHA256        string         `json:"corpus_sha256"`
	InputSHA256         string         `json:"input_sha256,omitempty"`
	Seed                uint64         `json:"seed"`
	ConversationHistory string         `json:"conversation_history"`
	LiveHistoryMarker   string         `json:"live_history_marker,omitempty"`
	Reproducible        bool           `json:"reproducible"`
	Cancelled           int            `json:"cancelled"`
	ISL                 Stats          `json:"isl"`
	OSL                 Stats          `json:"osl"`
	Media               *MediaSummary  `json:"media,omitempty"`
	InputInsight        map[string]any `json:"input_insight,omitempty"`
	// PrefixReuse is the offered prefix reuse of the profile's records (Meta); nil in plans
	// written before the compiler computed it.
	PrefixReuse *PrefixReuseView `json:"prefix_reuse,omitempty"`
	Spec        map[string]any   `json:"spec"`
	Requests    []RequestView    `json:"requests"`
	// Agents and Nodes describe a graph plan (agentic workloads; inspect_graph.go): every
	// agent, and every record with its session, agent, parents and ISL/OSL. Absent for
	// other plans.
	Agents []mmapds.Agent `json:"agents,omitempty"`
	Nodes  []NodeView     `json:"nodes,omitempty"`

	lastSession uint32
	offer       mmapds.Offer
}

// Stats summarizes token lengths over the profile phase.
type Stats struct {
	Min    int     `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P50    int     `json:"p50"`
	P90    int     `json:"p90"`
	P99    int     `json:"p99"`
	Max    int     `json:"max"`
}

// MediaSummary totals the media of the profile requests (absent when none sends any).
type MediaSummary struct {
	Requests     int     `json:"requests"` // profile requests with media
	Images       int     `json:"images"`
	Audios       int     `json:"audios"`
	Videos       int     `json:"videos"`
	Bytes        int64   `json:"bytes"`         // encoded media bytes sent, before base64
	AudioSeconds float64 `json:"audio_seconds"` // audio sent
	// Entries and StoredBytes count the distinct media entries of the file and their bytes.
	Entries     int   `json:"entries"`
	StoredBytes int64 `json:"stored_bytes"`
}

// RequestView is one record with its body, as `plan inspect --requests` shows it.
type RequestView struct {
	Index         int                `json:"index"`
	Phase         string             `json:"phase"`
	Session       uint32             `json:"session"`
	Turn          uint32             `json:"turn"`
	SendOffsetNs  *int64             `json:"send_offset_ns"` // null: waits for a free slot or its previous turn
	DelayNs       *int64             `json:"delay_ns"`       // null: a first turn
	ISL           uint32             `json:"isl"`
	OSL           uint32             `json:"osl"`
	CancelAfterNs int64              `json:"cancel_after_ns"`
	Path          string             `json:"path"`
	LiveHistory   bool               `json:"live_history"`
	Media         *mmapds.MediaEntry `json:"media,omitempty"` // number, size and bytes of its media
	Body          json.RawMessage    `json:"body"`            // the body as JSON, or a JSON string when it is not JSON
}

// PrefixReuseView is a plan's offered prefix reuse: of the profile records' PromptTokens
// (ISL, summed), ReusedTokens are leading BlockTokens-token blocks of their prompts' tokens
// that an earlier record's prompt began with.
type PrefixReuseView struct {
	BlockTokens  int   `json:"block_tokens"`
	ReusedTokens int64 `json:"reused_tokens"`
	PromptTokens int64 `json:"prompt_tokens"`
}

// Summarize reads every record of p (O(n)) and the first requests records in full (-1: all).
func Summarize(p *mmapds.Plan, requests int) (*Summary, error) {
	m := p.Meta()
	s := &Summary{
		Hash: p.HashHex(), RequestCount: p.Len(), FileSize: p.Size(),
		ToolVersion: m.ToolVersion, Endpoint: m.Endpoint, Method: m.Method, Paths: m.Paths, Headers: m.Headers,
		Streaming: m.Streaming, Model: m.Model, Dataset: m.Dataset, TimingMode: m.TimingMode,
		ArrivalPattern: m.ArrivalPattern, Concurrency: m.Concurrency, ConcurrencyRampNs: m.ConcurrencyRampNs,
		DurationNs: m.DurationNs, Tokenizer: m.Tokenizer,
		TokenizerSHA256: m.TokenizerSHA256, CorpusSHA256: m.CorpusSHA256, InputSHA256: m.InputSHA256,
		Seed: m.Seed, ConversationHistory: m.ConversationHistory, LiveHistoryMarker: m.LiveHistoryMarker,
		Reproducible: m.Reproducible, InputInsight: m.InputInsight, Spec: m.Spec, Requests: []RequestView{},
	}
	if s.Spec == nil {
		s.Spec = map[string]any{}
	}
	if m.PrefixReuseBlockTokens > 0 {
		s.PrefixReuse = &PrefixReuseView{BlockTokens: m.PrefixReuseBlockTokens, ReusedTokens: m.ProfileReusedTokens, PromptTokens: m.ProfilePromptTokens}
	}
	offer, err := p.Offer()
	if err != nil {
		return nil, err
	}
	s.offer = offer
	s.OfferedRate, s.DistinctBodies, s.RepeatedRequests = offer.Rate(), offer.Bodies, offer.Repeats
	s.OfferedReuse = math.Round(offer.ReuseRatio()*1e4) / 1e4
	switch m.TimingMode {
	case ModeRequestRate, ModeUserCentric:
		s.NominalRate = m.OfferedRate
	}
	var isl, osl []int
	for i := range p.Len() {
		r, _, err := p.Record(i)
		if err != nil {
			return nil, err
		}
		if i == 0 || r.Session != s.lastSession {
			s.SessionCount++ // a session's records are consecutive
		}
		s.lastSession = r.Session
		if r.Phase == mmapds.PhaseWarmup {
			s.WarmupCount++
			continue
		}
		s.ProfileCount++
		isl = append(isl, int(r.ISL))
		osl = append(osl, int(r.OSL))
		if r.CancelAfterNs > 0 {
			s.Cancelled++
		}
		if e := m.MediaOf(&r); e != nil {
			if s.Media == nil {
				s.Media = &MediaSummary{}
			}
			s.Media.Requests++
			s.Media.Images += e.Images
			s.Media.Audios += e.Audios
			s.Media.Videos += e.Videos
			s.Media.Bytes += e.Bytes
			s.Media.AudioSeconds += e.AudioSeconds
		}
	}
	if s.Media != nil {
		s.Media.Entries = len(m.Media)
		for _, e := range m.Media {
			s.Media.StoredBytes += e.Bytes
		}
	}
	if err := s.graph(p); err != nil {
		return nil, err
	}
	if offer.Planned > 0 {
		span := offer.LastNs - offer.FirstNs
		s.PlannedDurationNs = &span
	}
	s.ISL, s.OSL = stats(isl), stats(osl)
	if requests < 0 || requests > p.Len() {
		requests = p.Len()
	}
	for i := range requests {
		v, err := View(p, i)
		if err != nil {
			return nil, err
		}
		s.Requests = append(s.Requests, v)
	}
	return s, nil
}

// View returns record i of p with its body.
func View(p *mmapds.Plan, i int) (RequestView, error) {
	r, body, err := p.Record(i)
	if err != nil {
		return RequestView{}, err
	}
	v := RequestView{
		Index: int(r.Index), Phase: r.Phase.String(), Session: r.Session, Turn: r.Turn,
		ISL: r.ISL, OSL: r.OSL, CancelAfterNs: r.CancelAfterNs, Path: p.Meta().Paths[r.PathID],
		LiveHistory: r.Flags&mmapds.FlagLiveHistory != 0, Media: p.Meta().MediaOf(&r),
	}
	if r.SendOffsetNs != mmapds.NoSendOffset {
		v.SendOffsetNs = &r.SendOffsetNs
	}
	if r.DelayNs >= 0 {
		v.DelayNs = &r.DelayNs
	}
	if json.Valid(body) {
		v.Body = json.RawMessage(body)
	} else {
		v.Body, _ = json.Marshal(string(body))
	}
	return v, nil
}

func stats(v []int) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	slices.Sort(v)
	sum, sq := 0.0, 0.0
	for _, x := range v {
		sum += float64(x)
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (float64(x) - mean) * (float64(x) - mean)
	}
	pct := func(p float64) int { return v[min(len(v)-1, int(math.Ceil(p*float64(len(v))))-1)] }
	return Stats{
		Min: v[0], Max: v[len(v)-1], Mean: math.Round(mean*1000) / 1000,
		Stddev: math.Round(math.Sqrt(sq/float64(len(v)))*1000) / 1000,
		P50:    pct(0.50), P90: pct(0.90), P99: pct(0.99),
	}
}

// WriteJSON writes s as one indented JSON object.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes s for people.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	// The first lines say what a person asks first (scripts/demo.sh shows 16): which plan,
	// which model and endpoint, what load, how many requests and bodies, their lengths.
	row("hash", "%s", s.Hash)
	if strings.Contains(s.Model, ",") {
		row("model", "%s (one per dataset turn, %v)", s.Model, s.Spec["model-selection-strategy"])
	} else {
		row("model", "%s", s.Model)
	}
	stream := ""
	if s.Streaming {
		stream = ", streaming"
	}
	row("endpoint", "%s %s %s%s", s.Endpoint, s.Method, strings.Join(s.Paths, " "), stream)
	row("load", "%s", s.timing())
	row("requests", "%d (%d warmup, %d profile), %d sessions, %d cancelled", s.RequestCount, s.WarmupCount, s.ProfileCount, s.SessionCount, s.Cancelled)
	if note := s.offer.RepeatNote(); note != "" {
		row("bodies", "%d distinct: %s", s.DistinctBodies, note)
	} else {
		row("bodies", "%d distinct, none repeated", s.DistinctBodies)
	}
	if r := s.PrefixReuse; r != nil && r.PromptTokens > 0 {
		row("reuse", "offered prefix reuse %.2f %% of profile prompt tokens (%d of %d): leading %d-token blocks an earlier prompt began with", 100*float64(r.ReusedTokens)/float64(r.PromptTokens), r.ReusedTokens, r.PromptTokens, r.BlockTokens)
	}
	row("ISL", "%s", s.ISL)
	row("OSL", "%s", s.OSL)
	if s.OfferedRate > 0 {
		nominal := ""
		if s.NominalRate > 0 {
			nominal = fmt.Sprintf(", nominal %.3f req/s", s.NominalRate)
		}
		row("offered rate", "%.3f req/s (the plan's instants: %d gaps over %v)%s", s.OfferedRate, s.offer.Planned-1, s.offer.Span().Round(time.Millisecond), nominal)
	}
	switch {
	case s.PlannedDurationNs != nil:
		row("duration", "%v from the first to the last planned profile instant", time.Duration(*s.PlannedDurationNs))
	case s.DurationNs > 0:
		row("duration", "%v (closed loop: replay stops issuing at the duration)", time.Duration(s.DurationNs))
	default:
		row("duration", "closed loop: set by the server's speed")
	}
	row("tool", "%s", s.ToolVersion)
	row("tokenizer", "%s (sha256 %s)", s.Tokenizer, short(s.TokenizerSHA256))
	row("dataset", "%s (corpus sha256 %s%s)", s.Dataset, short(s.CorpusSHA256), map[bool]string{true: ", input sha256 " + short(s.InputSHA256), false: ""}[s.InputSHA256 != ""])
	row("seed", "%d", s.Seed)
	hist := s.ConversationHistory
	if !s.Reproducible {
		hist += fmt.Sprintf(" (bodies completed at run time at %q; not reproducible)", s.LiveHistoryMarker)
	}
	row("history", "%s", hist)
	if md := s.Media; md != nil {
		row("media", "%d profile requests send %d images, %d audio clips (%.1f s), %d videos: %d bytes; %d distinct entries store %d bytes",
			md.Requests, md.Images, md.Audios, md.AudioSeconds, md.Videos, md.Bytes, md.Entries, md.StoredBytes)
	}
	row("file", "%d bytes", s.FileSize)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.InputInsight) > 0 {
		fmt.Fprintln(w, "input:")
		writeTree(w, "  ", s.InputInsight)
	}
	fmt.Fprintln(w, "spec:")
	keys := make([]string, 0, len(s.Spec))
	for k := range s.Spec {
		if rateOnly[k] && s.TimingMode != ModeRequestRate {
			continue // recorded at its default; a closed loop has no arrival process
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  --%s=%v\n", k, s.Spec[k])
	}
	s.writeGraph(w)
	if len(s.Requests) > 0 {
		fmt.Fprintf(w, "requests (first %d):\n", len(s.Requests))
	}
	for _, r := range s.Requests {
		send, delay := "on a free slot", "-"
		if r.SendOffsetNs != nil {
			send = "at " + time.Duration(*r.SendOffsetNs).String()
		} else if r.Turn > 0 {
			send = "after its previous turn"
		}
		if r.DelayNs != nil {
			delay = time.Duration(*r.DelayNs).String()
		}
		fmt.Fprintf(w, "  #%d %s session %d turn %d send %s delay %s isl %d osl %d", r.Index, r.Phase, r.Session, r.Turn, send, delay, r.ISL, r.OSL)
		if r.CancelAfterNs > 0 {
			fmt.Fprintf(w, " cancel after %v", time.Duration(r.CancelAfterNs))
		}
		if r.LiveHistory {
			fmt.Fprint(w, " live-history")
		}
		if e := r.Media; e != nil {
			fmt.Fprintf(w, " media %d images %d audio %d video, %d bytes:", e.Images, e.Audios, e.Videos, e.Bytes)
			for _, it := range e.Items {
				fmt.Fprintf(w, " %s/%s %dB", it.Kind, it.Format, it.Bytes)
				if it.Width > 0 {
					fmt.Fprintf(w, " %dx%d", it.Width, it.Height)
				}
				if it.Seconds > 0 {
					fmt.Fprintf(w, " %.2fs", it.Seconds)
				}
			}
		}
		body := []byte(r.Body)
		if r.Media != nil {
			body = elideBase64(body)
		}
		fmt.Fprintf(w, " %s\n    %s\n", r.Path, body)
	}
	return nil
}

// rateOnly are the spec's flags that only a request-rate plan uses: the text leaves them out
// of other plans, where a default "--arrival-pattern=poisson" would misdescribe a closed loop
// (the JSON keeps the spec as recorded).
var rateOnly = map[string]bool{"arrival-pattern": true, "arrival-smoothness": true, "request-rate-ramp-duration": true}

func (s *Summary) timing() string {
	conc := "unbounded"
	if s.Concurrency > 0 {
		conc = fmt.Sprint(s.Concurrency)
	}
	var b strings.Builder
	switch s.TimingMode {
	case ModeConcurrency:
		fmt.Fprintf(&b, "closed loop, concurrency %s", conc)
	case ModeRequestRate:
		fmt.Fprintf(&b, "request rate %g req/s (%s arrivals), concurrency %s", s.NominalRate, s.ArrivalPattern, conc)
	case ModeUserCentric:
		fmt.Fprintf(&b, "user-centric %g req/s, concurrency %s", s.NominalRate, conc)
	case ModeFixedSchedule:
		fmt.Fprintf(&b, "fixed schedule, concurrency %s", conc)
	default:
		b.WriteString(s.TimingMode)
	}
	if s.ConcurrencyRampNs > 0 {
		fmt.Fprintf(&b, ", concurrency ramp %v", time.Duration(s.ConcurrencyRampNs))
	}
	return b.String()
}

// String formats the stats on one line.
func (st Stats) String() string {
	return fmt.Sprintf("min %d  mean %.1f  sd %.1f  p50 %d  p90 %d  p99 %d  max %d", st.Min, st.Mean, st.Stddev, st.P50, st.P90, st.P99, st.Max)
}

// elideBase64 shortens every data URL's payload and input_audio data in a body to its first
// 16 characters and its length, for people: a 1 MiB image is 1.4 MB of base64. (--json
// keeps the bodies whole.)
func elideBase64(b []byte) []byte {
	markers := [...][]byte{[]byte(";base64,"), []byte(`"input_audio":{"data":"`)}
	var out []byte
	for {
		i, n := -1, 0
		for _, m := range markers {
			if k := bytes.Index(b, m); k >= 0 && (i < 0 || k < i) {
				i, n = k, len(m)
			}
		}
		if i < 0 {
			return append(out, b...)
		}
		i += n
		j := i
		for j < len(b) && b[j] != '"' {
			j++
		}
		out = append(out, b[:i]...)
		if n := j - i; n > 32 {
			out = append(out, b[i:i+16]...)
			out = fmt.Appendf(out, "…(%d base64 chars)", n)
		} else {
			out = append(out, b[i:j]...)
		}
		b = b[j:]
	}
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// writeTree prints a nested map, keys sorted, one value per line.
func writeTree(w io.Writer, indent string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := m[k].(type) {
		case map[string]any:
			fmt.Fprintf(w, "%s%s:\n", indent, k)
			writeTree(w, indent+"  ", v)
		case float64:
			fmt.Fprintf(w, "%s%s: %s\n", indent, k, strconv.FormatFloat(v, 'g', 6, 64))
		default:
			fmt.Fprintf(w, "%s%s: %v\n", indent, k, v)
		}
	}
}
