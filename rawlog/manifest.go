package rawlog

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ManifestName is the manifest's file name inside a run directory.
const ManifestName = "run.json"

// ManifestVersion is the run.json format version.
const ManifestVersion = 1

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	// StatusKilled is a worker's status when a signal ended it.
	StatusKilled = "killed"
	// StatusRecovered is the footer status of a recovery log (WorkerInfo.RecoveryLog).
	StatusRecovered = "recovered"
	// StatusUnknown is the status of a manifest RebuildManifest made from the logs, and of
	// its workers: how the run ended was in the run.json that was lost.
	StatusUnknown = "unknown"
)

// Manifest is run.json: what was run, where, when, and how it ended. It is rewritten atomically
// as the run progresses, so a crashed run still has one (with status "running").
type Manifest struct {
	FormatVersion int    `json:"format_version"`
	Tool          string `json:"tool"`
	ToolVersion   string `json:"tool_version"`
	GoVersion     string `json:"go_version"`
	// PlanHash is the hex SHA-256 identity of the plan; PlanPath where it was read from.
	PlanHash string `json:"plan_hash"`
	PlanPath string `json:"plan_path"`
	// URLs are the base URLs requests were sent to.
	URLs []string `json:"urls"`
	// StartUnixNs is the wall-clock time of the run's monotonic zero; every *Ns time in the
	// logs is nanoseconds after it on the coordinator's monotonic clock.
	StartUnixNs int64 `json:"start_unix_ns"`
	// StartTime is StartUnixNs in RFC 3339, for people.
	StartTime string `json:"start_time"`
	// EndUnixNs is when the run finished (0 while running).
	EndUnixNs int64 `json:"end_unix_ns"`
	// Workers lists the worker processes and their logs.
	Workers []WorkerInfo `json:"workers"`
	// TelemetryLog is the GPU telemetry log's file name, empty when NVML was unavailable.
	TelemetryLog string `json:"telemetry_log,omitempty"`
	// TelemetryNote says why there is no telemetry.
	TelemetryNote string `json:"telemetry_note,omitempty"`
	// ServerMetricsNotes are the server-metrics scraper's warnings (an endpoint dropped or
	// unreachable, a page over the caps, scrapes spaced out), each said once, as on the
	// console and in server_metrics.jsonl's notes.
	ServerMetricsNotes []string `json:"server_metrics_notes,omitempty"`
	Host               string   `json:"host"`
	Kernel             string   `json:"kernel"`
	CPUModel           string   `json:"cpu_model,omitempty"`
	// CommandLine is the replay command line with secrets redacted.
	CommandLine []string `json:"command_line"`
	// Options are the replay options after defaults (secrets redacted).
	Options map[string]any `json:"options,omitempty"`
	// Status is running, complete, interrupted or failed; Error says why it failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Counts tally outcomes over all workers.
	Counts Counts `json:"counts"`
	// Shard is this run's part of a distributed run; nil when the plan was replayed whole.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Clock is the kernel's clock state at the start; nil where it cannot be read.
	Clock *ClockState `json:"clock,omitempty"`
	// Preflight is what the preflight found before the run; nil when none ran.
	Preflight *Preflight `json:"preflight,omitempty"`
	// TraceKey is the run's trace key (internal/tracectx, 32 hex digits) when every request
	// carried a W3C traceparent derived from it and its plan index; "" when none did.
	TraceKey string `json:"trace_key,omitempty"`
	// ServerTraces is what the run's OTLP trace receiver took in (--trace-receiver); nil
	// when none listened.
	ServerTraces *ServerTraces `json:"server_traces,omitempty"`
}

// ServerTraces counts what a run's OTLP trace receiver took in and kept in the run
// directory's server-traces file (package servertrace). Spans are counted as received:
// SpansReceived = SpansKept + SpansOtherTraces + SpansDroppedOverCap.
type ServerTraces struct {
	// File is the server-traces file's name in the run directory ("" when nothing was kept).
	File string `json:"file"`
	// GRPCEndpoint and HTTPEndpoint are the addresses the receiver listened on (OTLP/gRPC,
	// and OTLP/HTTP protobuf and JSON at POST /v1/traces).
	GRPCEndpoint string `json:"grpc_endpoint"`
	HTTPEndpoint string `json:"http_endpoint"`
	// GraceSeconds is how long the receiver listened after the last response at most;
	// WaitedSeconds how long it did (less once every completed request had its span).
	GraceSeconds  float64 `json:"grace_seconds"`
	WaitedSeconds float64 `json:"waited_seconds"`
	// MaxBytes caps the bytes written to File; BytesKept is what was.
	MaxBytes  int64 `json:"max_bytes"`
	BytesKept int64 `json:"bytes_kept"`
	// SpansReceived counts every span of every export request decoded; SpansKept those
	// written (spans of this run's traces); SpansOtherTraces those of traces no request of
	// this run carried (dropped); SpansDroppedOverCap this run's spans dropped because
	// File had reached MaxBytes.
	SpansReceived       int64 `json:"spans_received"`
	SpansKept           int64 `json:"spans_kept"`
	SpansOtherTraces    int64 `json:"spans_other_traces"`
	SpansDroppedOverCap int64 `json:"spans_dropped_over_cap"`
	// RequestsWithSpans is how many of the run's requests (distinct plan indices) have at
	// least one kept span.
	RequestsWithSpans int `json:"requests_with_spans"`
	// Transports counts export requests and spans received per transport ("grpc",
	// "http/protobuf", "http/json").
	Transports map[string]TraceTransportCounts `json:"transports"`
	// WriteError is why File could not be written to its end; "" when it was.
	WriteError string `json:"write_error,omitempty"`
}

// TraceTransportCounts are the export requests and spans received over one transport.
type TraceTransportCounts struct {
	Requests int64 `json:"requests"`
	Spans    int64 `json:"spans"`
}

// WorkerInfo describes one worker process.
type WorkerInfo struct {
	ID  int    `json:"id"`
	PID int    `json:"pid"`
	CPU int    `json:"cpu"`
	Log string `json:"log"`
	// Planned is the number of plan records in this worker's part.
	Planned int `json:"planned"`
	// Status is how the worker ended: complete, interrupted, failed or killed.
	Status string `json:"status"`
	// Lost counts planned requests the worker started (its log has their Sent record) but
	// whose Request record is in no log: they were in flight when the worker died, and how
	// they ended is unknown.
	Lost int `json:"lost"`
	// RecoveryLog names the log the coordinator wrote for a worker that died (or never
	// started): one not_sent Request record for each planned request the worker never sent.
	// Empty when there is none. Readers read it along with Log.
	RecoveryLog string `json:"recovery_log,omitempty"`
	// Recovered is the number of Request records in RecoveryLog; Log holds at most
	// Planned - Recovered.
	Recovered int `json:"recovered,omitempty"`
	// MaxRSSBytes is the worker process's peak resident set size (Linux VmHWM, which the
	// worker reports before it ends), 0 when unknown (it died, never started, or runs
	// elsewhere than Linux).
	MaxRSSBytes int64 `json:"max_rss_bytes,omitempty"`
	// Calibration is what the worker measured of its machine before its first send; nil
	// when it did not (older runs, workers run in-process, systems other than Linux).
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Calibration is a worker's measure of its machine's floor, taken on its pinned CPU before
// the run's first send: how late a timer wakes it, what a loopback TCP round trip costs (one
// thread: write, read, write, read), and what one bare system call costs. A run's schedule
// lag is judged against these (docs/metrics.md).
type Calibration struct {
	// TimerLagP50Ns, TimerLagP99Ns and TimerLagMaxNs are how late a timerfd armed for an
	// absolute instant woke the worker, over TimerSamples sleeps.
	TimerLagP50Ns int64 `json:"timer_lag_p50_ns"`
	TimerLagP99Ns int64 `json:"timer_lag_p99_ns"`
	TimerLagMaxNs int64 `json:"timer_lag_max_ns"`
	TimerSamples  int   `json:"timer_samples"`
	// LoopbackRTTP50Ns and LoopbackRTTP99Ns are one loopback round trip of one byte.
	LoopbackRTTP50Ns int64 `json:"loopback_rtt_p50_ns"`
	LoopbackRTTP99Ns int64 `json:"loopback_rtt_p99_ns"`
	// SyscallNs is the median cost of one bare system call (getppid).
	SyscallNs int64 `json:"syscall_ns"`
}

// Counts tally request outcomes. Every planned request is in exactly one of the others:
// Planned = Completed + Failed + Cancelled + Aborted + NotSent + Lost.
type Counts struct {
	Planned   int `json:"planned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Aborted   int `json:"aborted"`
	NotSent   int `json:"not_sent"`
	Lost      int `json:"lost"`
	// ClientFailed is how many of the Failed failed on the client's own side (their Err
	// starts "client error: "): out of file descriptors or local ports, or a connection the
	// client got back to too late. They measure the machine that ran replay, not the server.
	ClientFailed int `json:"client_failed,omitempty"`
}

// WriteManifest writes m to dir/run.json atomically (temporary file, then rename).
func WriteManifest(dir string, m *Manifest) error {
	m.FormatVersion = ManifestVersion
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("rawlog: encode manifest: %w", err)
	}
	tmp := filepath.Join(dir, ManifestName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ManifestName)); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	return nil
}

// CreateManifest writes m as dir/run.json only when dir has none: the file is created
// exclusively (O_CREATE|O_EXCL, atomic on local file systems and on NFS from version 3), so
// of several runs given one directory exactly one gets it. The error wraps fs.ErrExist when
// another run holds the directory; nothing was written then. The content is synced before
// it returns; a run.json that could not be written whole is removed. Later writes of the
// same run go through WriteManifest.
func CreateManifest(dir string, m *Manifest) (err error) {
	m.FormatVersion = ManifestVersion
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("rawlog: encode manifest: %w", err)
	}
	path := filepath.Join(dir, ManifestName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("rawlog: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	return nil
}

// ErrManifest is wrapped by the error about a run.json that is damaged: bytes that do not
// decode as JSON (cut short by a crash, garbled on disk), which RebuildManifest can stand in
// for. A run.json that decodes but is inconsistent (Validate), or of a format version this
// build does not know, is refused without it: it was written that way.
var ErrManifest = errors.New("damaged run.json")

// ReadManifest reads dir/run.json and checks it (ParseManifest).
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rawlog: %w", err)
	}
	return ParseManifest(b, path)
}

// ParseManifest decodes a run.json document, checks its version and validates it; name (the
// file's path) is used in errors.
func ParseManifest(b []byte, name string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("rawlog: %s: %w: %w", name, ErrManifest, err)
	}
	if m.FormatVersion != ManifestVersion {
		if m.FormatVersion == 0 {
			return nil, fmt.Errorf("rawlog: %s: no format_version: not a run.json", name)
		}
		return nil, fmt.Errorf("rawlog: %s: run.json format version %d is not supported (this build reads version %d)", name, m.FormatVersion, ManifestVersion)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("rawlog: %s: %w", name, err)
	}
	return &m, nil
}

// Validate checks what a reader relies on and what the manifest alone can check: a plan
// hash, distinct worker ids, log names that are plain file names in the run directory, and
// per-worker counts that fit together (0 <= recovered, lost <= planned; a recovery log
// exactly when recovered > 0). Checks against the plan (planned versus its record count)
// are the reader's, which has the plan.
func (m *Manifest) Validate() error {
	if !IsPlanHash(m.PlanHash) {
		if m.PlanHash == "" {
			return errors.New("no plan_hash: the plan cannot be identified")
		}
		return fmt.Errorf("plan_hash %q is not a hex SHA-256", m.PlanHash)
	}
	if m.StartUnixNs < 0 || m.EndUnixNs < 0 {
		return fmt.Errorf("start_unix_ns %d / end_unix_ns %d: negative", m.StartUnixNs, m.EndUnixNs)
	}
	if err := checkLogName("telemetry_log", m.TelemetryLog, true); err != nil {
		return err
	}
	ids := map[int]bool{}
	names := map[string]bool{}
	for i, w := range m.Workers {
		where := fmt.Sprintf("workers[%d] (id %d)", i, w.ID)
		if w.ID < 0 || ids[w.ID] {
			return fmt.Errorf("%s: id negative or given twice", where)
		}
		ids[w.ID] = true
		if err := checkLogName(where+": log", w.Log, false); err != nil {
			return err
		}
		if err := checkLogName(where+": recovery_log", w.RecoveryLog, true); err != nil {
			return err
		}
		for _, n := range []string{w.Log, w.RecoveryLog} {
			if n != "" && names[n] {
				return fmt.Errorf("%s: log %q named twice", where, n)
			}
			names[n] = true
		}
		if w.Planned < 0 || w.Lost < 0 || w.Lost > w.Planned {
			return fmt.Errorf("%s: planned %d, lost %d: want 0 <= lost <= planned", where, w.Planned, w.Lost)
		}
		if w.Recovered < 0 || w.Recovered > w.Planned || (w.Recovered > 0) != (w.RecoveryLog != "") {
			return fmt.Errorf("%s: recovery log %q with %d records does not fit its %d planned requests", where, w.RecoveryLog, w.Recovered, w.Planned)
		}
	}
	c := m.Counts
	for _, n := range [...]int{c.Planned, c.Completed, c.Failed, c.Cancelled, c.Aborted, c.NotSent, c.Lost} {
		if n < 0 {
			return fmt.Errorf("counts %+v: negative", c)
		}
	}
	return nil
}

// checkLogName accepts a plain file name (no directory part), or "" when optional.
func checkLogName(what, name string, optional bool) error {
	switch {
	case name == "" && optional:
		return nil
	case name == "":
		return fmt.Errorf("%s: no file name", what)
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0):
		return fmt.Errorf("%s %q: not a file name in the run directory", what, name)
	}
	return nil
}

// IsPlanHash reports whether s is a plan identity as run.json and log headers write it:
// 64 lower-case hex digits.
func IsPlanHash(s string) bool {
	if len(s) != 64 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// HashPrefixes shortens two hex hashes for a message saying they differ: the shortest
// prefixes, of at least 12 digits, that are not equal (the whole strings when one is a
// prefix of the other).
func HashPrefixes(a, b string) (string, string) {
	n := 12
	for n < len(a) && n < len(b) && a[:n] == b[:n] {
		n++
	}
	return a[:min(n, len(a))], b[:min(n, len(b))]
}

// Log file names replay gives a worker's log and its recovery log, and the telemetry log.
const (
	workerLogPrefix  = "worker-"
	workerLogSuffix  = ".rawlog"
	recoveryLogTail  = ".recovered.rawlog"
	telemetryLogName = "telemetry.rawlog"
)

// RebuildManifest makes a manifest for a run directory whose run.json is damaged (ErrManifest),
// from the headers of its logs: worker-NNN.rawlog (each header gives the worker, its pid,
// CPU, shard size, the plan's hash and path and the run's start), worker-NNN.recovered.rawlog
// (counted), and telemetry.rawlog. What only run.json held (URLs, command line, options, end
// time, outcome counts) stays empty, and the run's and workers' status is StatusUnknown.
//
// A worker log whose header cannot be read is still listed, with 0 planned requests, so that
// its reader reports the damage; at least one header must be readable, and all readable ones
// must agree on the plan and the start. Logs too old to hold Planned leave it 0.
func RebuildManifest(dir string) (*Manifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("rawlog: rebuild run.json: %w", err)
	}
	m := &Manifest{FormatVersion: ManifestVersion, Tool: "llmbench replay", Status: StatusUnknown}
	byID := map[int]*WorkerInfo{}
	var headers []Header
	var firstErr error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if name == telemetryLogName {
			m.TelemetryLog = name
			continue
		}
		recovery := strings.HasSuffix(name, recoveryLogTail)
		num := strings.TrimSuffix(strings.TrimSuffix(name, recoveryLogTail), workerLogSuffix)
		if !strings.HasPrefix(name, workerLogPrefix) || !strings.HasSuffix(name, workerLogSuffix) {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(num, workerLogPrefix))
		if err != nil || id < 0 {
			continue
		}
		w := byID[id]
		if w == nil {
			w = &WorkerInfo{ID: id, CPU: -1, Status: StatusUnknown}
			byID[id] = w
		}
		path := filepath.Join(dir, name)
		if recovery {
			s, err := Summarize(path)
			if err != nil {
				return nil, fmt.Errorf("rawlog: rebuild run.json: %w", err)
			}
			w.RecoveryLog, w.Recovered = name, s.Requests
			// The recovery log's header has the dead worker's part size too: what tells
			// it for a worker that never wrote a log of its own.
			w.Planned = max(w.Planned, s.Header.Planned)
			continue
		}
		w.Log = name
		r, err := Open(path)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		h := r.Header()
		r.Close()
		if h.Worker != id {
			return nil, fmt.Errorf("rawlog: rebuild run.json: %s: header says worker %d", path, h.Worker)
		}
		w.PID, w.CPU = h.PID, h.CPU
		w.Planned = max(w.Planned, h.Planned)
		headers = append(headers, h)
	}
	if len(headers) == 0 {
		if firstErr != nil {
			return nil, fmt.Errorf("rawlog: rebuild run.json: no worker log header is readable: %w", firstErr)
		}
		return nil, fmt.Errorf("rawlog: rebuild run.json: %s: %w: no worker logs", dir, fs.ErrNotExist)
	}
	h0 := headers[0]
	m.PlanHash, m.PlanPath, m.StartUnixNs = h0.PlanHash, h0.PlanPath, h0.StartUnixNs
	for _, h := range headers[1:] {
		if h.PlanHash != h0.PlanHash || h.StartUnixNs != h0.StartUnixNs {
			return nil, fmt.Errorf("rawlog: rebuild run.json: workers %d and %d disagree on the plan or the start: not one run", h0.Worker, h.Worker)
		}
	}
	ids := make([]int, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		w := byID[id]
		if w.Log == "" {
			// Only a recovery log: the worker never wrote its own.
			w.Log = fmt.Sprintf("%s%03d%s", workerLogPrefix, id, workerLogSuffix)
		}
		if w.Recovered > w.Planned {
			w.Planned = w.Recovered
		}
		m.Workers = append(m.Workers, *w)
		m.Counts.Planned += w.Planned
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("rawlog: rebuild run.json: %w", err)
	}
	return m, nil
}
