package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/tokenizer"
)

// Input file types (--custom-dataset-type), named as AIPerf names them.
const (
	TypeMooncake   = "mooncake_trace"
	TypeShareGPT   = "sharegpt"
	TypeSingleTurn = "single_turn"
	TypeMultiTurn  = "multi_turn"
	TypeRandomPool = "random_pool"
	TypeRawPayload = "raw_payload"
	TypeBailian    = "bailian_trace"
	TypeBurstGPT   = "burst_gpt_trace"
)

// dynamoTypes are the names a user may give Dynamo's request traces (dynamo.request.trace.v1),
// which LoadFile refuses with errDynamo: docs/datasets.md "Dynamo request traces".
var dynamoTypes = []string{"dynamo", "dynamo_trace", "dynamo_agent_trace"}

// dynamoSchema is the schema member of a Dynamo request-trace record.
const dynamoSchema = "dynamo.request.trace.v1"

// errDynamo says why Dynamo request traces are not read.
var errDynamo = errors.New(dynamoSchema + " records (Dynamo request traces) are not read: their records name a request's session and parent session " +
	"but not the request a subagent was launched after nor the one that waited for it, so the graph could only be guessed " +
	"from timestamps (docs/datasets.md \"Dynamo request traces\")")

// FileTypes returns the input file types LoadFile reads, sorted.
func FileTypes() []string {
	return []string{TypeBailian, TypeBurstGPT, TypeDAG, TypeMooncake, TypeMultiTurn, TypeRandomPool, TypeRawPayload, TypeShareGPT, TypeSingleTurn, TypeWeka}
}

// Sampling strategies (--dataset-sampling-strategy).
const (
	SamplingSequential = "sequential"
	SamplingRandom     = "random"
	SamplingShuffle    = "shuffle"
)

// Defaults and limits of LoadFile.
const (
	// DefaultBlockSize is the tokens per hash_id block of mooncake_trace (--isl-block-size).
	DefaultBlockSize = 512
	// DefaultBailianBlockSize is the tokens per hash_id block of bailian_trace.
	DefaultBailianBlockSize = 16
	// DefaultPoolConversations is how many conversations random_pool draws by default.
	DefaultPoolConversations = 100
	// MaxPromptTokens bounds one synthesized prompt, so that a corrupt length fails clearly
	// instead of exhausting memory.
	MaxPromptTokens = 1 << 24
	// DefaultMaxLineBytes bounds one line of a line-based input (every format but sharegpt's
	// JSON array and weka_trace's JSON objects), --max-line-bytes raising it. A line is one
	// request or conversation: 16 MiB holds some 4 million tokens of ordinary text, beyond
	// the context of the models served today, while one line's tokenizing (its longest word
	// takes about 24 bytes of working memory per byte) and rendering stay within a few
	// hundred MB. A longer line is refused naming its file and number, before it is parsed.
	DefaultMaxLineBytes = 16 << 20
	// MaxLineBytesLimit is the most --max-line-bytes may allow.
	MaxLineBytesLimit = 1 << 30
)

// FileOptions says which input file LoadFile reads and how it builds prompts.
type FileOptions struct {
	// Path is the input file (--input-file); random_pool and raw_payload also take a folder.
	Path string
	// Type is the input format (--custom-dataset-type, one of FileTypes); "" detects it from
	// the content and fails, naming the candidates, when the content is ambiguous.
	Type string
	// BlockSize is the tokens per hash_id block (--isl-block-size); 0 means the format's
	// default: DefaultBlockSize, or DefaultBailianBlockSize for bailian_trace.
	BlockSize int
	// Tokenizer is the plan's tokenizer: prompts are synthesized and counted under it.
	Tokenizer *tokenizer.Tokenizer
	// Corpus is the token source of synthesized prompts; nil means LoadCorpus(Tokenizer).
	Corpus *Corpus
	// Seed makes every synthesized prompt and every sample reproducible (--random-seed).
	Seed uint64
	// SamplingStrategy is how random_pool draws its entries (--dataset-sampling-strategy):
	// sequential, random (with replacement) or shuffle (without replacement, reshuffled when
	// exhausted); "" means random, as AIPerf does. Other formats keep the file's order and
	// leave sampling to the compiler.
	SamplingStrategy string
	// NumConversations is how many conversations random_pool draws (--num-sessions,
	// --conversation-num); 0 means DefaultPoolConversations.
	NumConversations int
	// Synthesis rescales mooncake_trace and bailian_trace rows (--synthesis-*); other
	// formats refuse an active one.
	Synthesis Synthesis
	// IdleGapCapNs > 0 shortens every gap between consecutive request starts of a
	// weka_trace session that is longer to this (--trace-idle-gap-cap-seconds); later
	// requests move earlier by the difference. Other formats refuse it.
	IdleGapCapNs int64
	// MaxLineBytes bounds one line of a line-based input (--max-line-bytes); 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

// maxLine returns the line bound in force.
func (o *FileOptions) maxLine() int {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// LineError is a bad record of an input file: the error names the file, the line (1-based)
// and the format.
type LineError struct {
	Path string
	Line int // 0 when the error concerns the file as a whole
	Type string
	Err  error
}

// Error says what is wrong and where: "dataset: TYPE PATH line N: ...".
func (e *LineError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("dataset: %s %s: %v", e.Type, e.Path, e.Err)
	}
	return fmt.Sprintf("dataset: %s %s line %d: %v", e.Type, e.Path, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// LoadFile reads an input file into a Dataset. Prompts given as lengths (mooncake_trace,
// bailian_trace, burst_gpt_trace) are synthesized from the corpus so that each encodes to
// exactly its length under opts.Tokenizer, and requests that share leading hash_ids share
// byte-identical prefixes (see prefix.go). A bad record fails with a *LineError.
func LoadFile(opts FileOptions) (*Dataset, error) {
	if opts.Path == "" {
		return nil, errors.New("dataset: no input file (--input-file)")
	}
	if opts.BlockSize < 0 {
		return nil, fmt.Errorf("dataset: --isl-block-size %d: must not be negative", opts.BlockSize)
	}
	switch opts.SamplingStrategy {
	case "", SamplingSequential, SamplingRandom, SamplingShuffle:
	default:
		return nil, fmt.Errorf("dataset: --dataset-sampling-strategy %q: want sequential, random or shuffle", opts.SamplingStrategy)
	}
	if err := opts.Synthesis.Check(); err != nil {
		return nil, err
	}
	if opts.NumConversations < 0 {
		return nil, fmt.Errorf("dataset: --num-sessions %d: must not be negative", opts.NumConversations)
	}
	if opts.MaxLineBytes < 0 || opts.MaxLineBytes > MaxLineBytesLimit {
		return nil, fmt.Errorf("dataset: --max-line-bytes %d: want bytes in [0, %d]", opts.MaxLineBytes, MaxLineBytesLimit)
	}
	in, err := readInput(opts.Path)
	if err != nil {
		return nil, err
	}
	typ := opts.Type
	if typ == "" {
		if typ, err = detectType(in, opts.maxLine()); err != nil {
			return nil, err
		}
	} else if slices.Contains(dynamoTypes, typ) {
		return nil, fmt.Errorf("dataset: --custom-dataset-type %s: %w", typ, errDynamo)
	} else if !slices.Contains(FileTypes(), typ) {
		return nil, fmt.Errorf("dataset: --custom-dataset-type %q: want one of %s", typ, strings.Join(FileTypes(), ", "))
	}
	if in.dir && typ != TypeRandomPool && typ != TypeRawPayload && typ != TypeWeka {
		return nil, fmt.Errorf("dataset: %s is a folder; only random_pool, raw_payload and weka_trace read folders", opts.Path)
	}
	if opts.IdleGapCapNs < 0 || opts.IdleGapCapNs > 0 && typ != TypeWeka {
		return nil, fmt.Errorf("dataset: --trace-idle-gap-cap-seconds applies to weka_trace inputs (got %s)", typ)
	}
	if opts.Synthesis.Active() && typ != TypeMooncake && typ != TypeBailian {
		return nil, fmt.Errorf("dataset: the --synthesis-* flags other than --synthesis-speedup-ratio apply to mooncake_trace and bailian_trace (got %s)", typ)
	}
	if typ != TypeShareGPT && typ != TypeWeka { // the JSON documents are not read by line
		for _, f := range in.files {
			if line, n := longLine(f.data, opts.maxLine()); line > 0 {
				return nil, &LineError{Path: f.path, Line: line, Type: typ, Err: errLongLine(n, opts.maxLine())}
			}
		}
	}
	l := &loader{opts: opts, in: in, typ: typ}
	var ds *Dataset
	switch typ {
	case TypeMooncake:
		ds, err = l.mooncake()
	case TypeShareGPT:
		ds, err = l.shareGPT()
	case TypeSingleTurn:
		ds, err = l.singleTurn()
	case TypeMultiTurn:
		ds, err = l.multiTurn()
	case TypeRandomPool:
		ds, err = l.randomPool()
	case TypeRawPayload:
		ds, err = l.rawPayload()
	case TypeBailian:
		ds, err = l.bailian()
	case TypeBurstGPT:
		ds, err = l.burstGPT()
	case TypeWeka:
		ds, err = l.weka()
	case TypeDAG:
		ds, err = l.dag()
	}
	if err != nil {
		return nil, err
	}
	ds.Name = typ
	ds.SourceSHA256 = in.sha
	return ds, nil
}

// inputFileData is one file of the input.
type inputFileData struct {
	path string
	data []byte
}

// inputData is what LoadFile read: one file, or the regular files of a folder in name order.
type inputData struct {
	path  string
	dir   bool
	files []inputFileData
	sha   string // of the file, or of the folder's names and contents in order
}

func readInput(path string) (*inputData, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: input file: %w", err)
	}
	in := &inputData{path: path}
	h := sha256.New()
	if !st.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("dataset: input file: %w", err)
		}
		h.Write(data)
		in.files = []inputFileData{{path: path, data: data}}
		in.sha = hex.EncodeToString(h.Sum(nil))
		return in, nil
	}
	in.dir = true
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: input folder: %w", err)
	}
	for _, e := range ents { // ReadDir sorts by name
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(path, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("dataset: input folder: %w", err)
		}
		// Length-prefix the name and the content so that no two folders hash alike.
		fmt.Fprintf(h, "%d:%s%d:", len(e.Name()), e.Name(), len(data))
		h.Write(data)
		in.files = append(in.files, inputFileData{path: p, data: data})
	}
	if len(in.files) == 0 {
		return nil, &fs.PathError{Op: "dataset: input folder", Path: path, Err: errors.New("holds no files")}
	}
	in.sha = hex.EncodeToString(h.Sum(nil))
	return in, nil
}

// loader carries one LoadFile call's state.
type loader struct {
	opts FileOptions
	in   *inputData
	typ  string
	syn  *promptSynth
}

// lineErr wraps err as a *LineError of the loader's format.
func (l *loader) lineErr(path string, line int, err error) error {
	return &LineError{Path: path, Line: line, Type: l.typ, Err: err}
}

func (l *loader) lineErrf(path string, line int, format string, args ...any) error {
	return l.lineErr(path, line, fmt.Errorf(format, args...))
}

// tok returns the tokenizer, failing when the caller gave none.
func (l *loader) tok() (*tokenizer.Tokenizer, error) {
	if l.opts.Tokenizer == nil {
		return nil, fmt.Errorf("dataset: %s needs a tokenizer (--tokenizer)", l.typ)
	}
	return l.opts.Tokenizer, nil
}

// synth returns the prompt synthesizer, building it on first use.
func (l *loader) synth() (*promptSynth, error) {
	if l.syn != nil {
		return l.syn, nil
	}
	tok, err := l.tok()
	if err != nil {
		return nil, err
	}
	c := l.opts.Corpus
	if c == nil {
		if c, err = LoadCorpus(tok); err != nil {
			return nil, err
		}
	}
	if c.Tokenizer() != tok {
		return nil, errors.New("dataset: the corpus was tokenized with another tokenizer than the plan's")
	}
	if l.syn, err = promptSynthFor(tok, c); err != nil {
		return nil, err
	}
	return l.syn, nil
}

// blockSize returns the hash_id block size for the format.
func (l *loader) blockSize(def int) (int, error) {
	bs := l.opts.BlockSize
	if bs == 0 {
		bs = def
	}
	if bs < 2 {
		return 0, fmt.Errorf("dataset: --isl-block-size %d: a block needs at least 2 tokens (a separator and content)", bs)
	}
	if bs > MaxPromptTokens {
		return 0, fmt.Errorf("dataset: --isl-block-size %d: at most %d", bs, MaxPromptTokens)
	}
	return bs, nil
}

// rng returns a generator for one purpose and index, independent of every other, so a
// record's synthesized prompt depends only on the seed and the record.
func (l *loader) rng(purpose string, index uint64) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(purpose); i++ {
		h = (h ^ uint64(purpose[i])) * 1099511628211
	}
	return rand.New(rand.NewPCG(splitmix64(l.opts.Seed^h), splitmix64(index+0x9e3779b97f4a7c15)))
}

// splitmix64 is the splitmix64 finalizer: a bijection of uint64 that scatters nearby inputs.
func splitmix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// forEachLine calls f with every non-blank line of data and its 1-based number.
func forEachLine(data []byte, f func(line int, b []byte) error) error {
	n := 0
	for len(data) > 0 {
		n++
		var b []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			b, data = data[:i], data[i+1:]
		} else {
			b, data = data, nil
		}
		if n == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		if err := f(n, b); err != nil {
			return err
		}
	}
	return nil
}

// longLine returns the 1-based number and length of the first line of data longer than max
// bytes (its line break not counted), or 0 when there is none.
func longLine(data []byte, max int) (line, n int) {
	for l := 1; len(data) > 0; l++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > max {
			return l, i
		}
		data = data[min(i+1, len(data)):]
	}
	return 0, 0
}

// errLongLine says that a line of n bytes is over the bound max.
func errLongLine(n, max int) error {
	return fmt.Errorf("a line of %d bytes is longer than the %d-byte line limit (--max-line-bytes raises it; docs/datasets.md \"Line limit\")", n, max)
}

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// decodeObject unmarshals one JSON object into v, with errors that say which field was wrong.
func decodeObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if !json.Valid(b) {
			return jsonError(json.Unmarshal(b, new(any)))
		}
		return errors.New("want a JSON object")
	}
	return jsonError(json.Unmarshal(b, v))
}

// jsonError rewrites encoding/json's errors into what a user can act on.
func jsonError(err error) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s: got a JSON %s, want %s", field, te.Value, jsonKind(te.Type.String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %v", se)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"), goType == "json.Number":
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"), strings.HasPrefix(goType, "dataset."):
		return "an object"
	}
	return goType
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// msToNs converts a JSON number of milliseconds (int or float) to nanoseconds.
func msToNs(field string, n json.Number) (int64, error) {
	return scaleToNs(field, n, 1e6)
}

// secToNs converts a JSON number of seconds to nanoseconds.
func secToNs(field string, n json.Number) (int64, error) {
	return scaleToNs(field, n, 1e9)
}

func scaleToNs(field string, n json.Number, perUnit int64) (int64, error) {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if i < 0 {
			return 0, fmt.Errorf("%s %s: must not be negative", field, s)
		}
		if i > math.MaxInt64/perUnit {
			return 0, fmt.Errorf("%s %s: too large", field, s)
		}
		return i * perUnit, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s %q: want a number", field, s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%s %s: must not be negative", field, s)
	}
	ns := math.Round(f * float64(perUnit))
	if ns >= math.MaxInt64 {
		return 0, fmt.Errorf("%s %s: too large", field, s)
	}
	return int64(ns), nil
}

// optNumber converts an optional JSON number to nanoseconds, or NoTime when absent.
func optNs(field string, n *json.Number, conv func(string, json.Number) (int64, error)) (int64, error) {
	if n == nil {
		return NoTime, nil
	}
	return conv(field, *n)
}

// sessionKey turns a JSON session id (string or number) into a string; "" when absent.
func sessionKey(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", errors.New("session_id: want a string or a number")
}

// sessionSet groups turns into conversations by session id, in order of first appearance;
// a turn without a session id is a conversation of its own with a generated id.
type sessionSet struct {
	convs []Conversation
	index map[string]int  // input session id → conversation
	taken map[string]bool // every SessionID given out
	lines [][]int         // each turn's line, for errors about a conversation
}

func (s *sessionSet) add(id string, line int, t Turn) {
	if s.index == nil {
		s.index = make(map[string]int)
		s.taken = make(map[string]bool)
	}
	if id != "" {
		if i, ok := s.index[id]; ok {
			s.convs[i].Turns = append(s.convs[i].Turns, t)
			s.lines[i] = append(s.lines[i], line)
			return
		}
		s.index[id] = len(s.convs)
	}
	sid := id
	if sid == "" {
		sid = "line-" + strconv.Itoa(line)
	}
	for s.taken[sid] {
		sid += "+" // session ids stay unique even when an input's id looks generated
	}
	s.taken[sid] = true
	s.convs = append(s.convs, Conversation{SessionID: sid, Turns: []Turn{t}})
	s.lines = append(s.lines, []int{line})
}

// checkTimed enforces what a fixed schedule needs: when any turn has a timestamp, every
// conversation's first turn has one. It reports whether the turns are timed.
func (l *loader) checkTimed(path string, s *sessionSet) (bool, error) {
	timed := false
	for _, c := range s.convs {
		for _, t := range c.Turns {
			if t.TimestampNs != NoTime {
				timed = true
			}
		}
	}
	if !timed {
		return false, nil
	}
	for i, c := range s.convs {
		if c.Turns[0].TimestampNs == NoTime {
			return false, l.lineErrf(path, s.lines[i][0], "no timestamp, but other records have one (a timed input needs one on the first turn of every session)")
		}
	}
	return true, nil
}

// detectType tells the format from the content, failing when it cannot; maxLine bounds the
// first line of a line-based file.
func detectType(in *inputData, maxLine int) (string, error) {
	if in.dir {
		for _, f := range in.files { // a trace folder: its .json files, whatever else it holds
			if strings.EqualFold(filepath.Ext(f.path), ".json") && looksWeka(bytes.TrimSpace(trimBOM(f.data))) {
				return TypeWeka, nil
			}
		}
	}
	f := in.files[0]
	typ, err := detectFile(f, maxLine)
	if err != nil || !in.dir {
		return typ, err
	}
	// A folder: its first file tells (random_pool entries look like single_turn lines).
	switch typ {
	case TypeRawPayload, TypeWeka:
		return typ, nil
	case TypeSingleTurn, TypeRandomPool:
		return TypeRandomPool, nil
	}
	return "", fmt.Errorf("dataset: %s: a folder holds random_pool, raw_payload or weka_trace files, but %s looks like %s; pass --custom-dataset-type", in.path, f.path, typ)
}

func detectFile(f inputFileData, maxLine int) (string, error) {
	data := bytes.TrimPrefix(f.data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return "", fmt.Errorf("dataset: %s is empty", f.path)
	}
	if first, line := firstLine(data); len(first) > maxLine && trimmed[0] != '[' && !looksWeka(trimmed) {
		// Refused before it is parsed: only the JSON documents (sharegpt, weka_trace) may
		// hold longer lines.
		return "", fmt.Errorf("dataset: %s line %d: %w", f.path, line, errLongLine(len(first), maxLine))
	}
	if trimmed[0] == '[' {
		if looksShareGPT(trimmed) {
			return TypeShareGPT, nil
		}
		return "", fmt.Errorf("dataset: %s: a JSON array, but its first entry has no \"conversations\" (ShareGPT); pass --custom-dataset-type", f.path)
	}
	if looksWeka(trimmed) {
		return TypeWeka, nil
	}
	first, line := firstLine(data)
	if len(first) > 0 && first[0] != '{' {
		if isBurstGPTHeader(first) {
			return TypeBurstGPT, nil
		}
		return "", fmt.Errorf("dataset: %s line %d: neither a JSON object (JSONL) nor a BurstGPT CSV header; pass --custom-dataset-type", f.path, line)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(first, &obj); err != nil {
		return "", fmt.Errorf("dataset: %s line %d: cannot tell the format: %v", f.path, line, jsonError(err))
	}
	var schema string
	if json.Unmarshal(obj["schema"], &schema) == nil && schema == dynamoSchema {
		return "", fmt.Errorf("dataset: %s line %d: %w", f.path, line, errDynamo)
	}
	typ, err := detectRecord(obj)
	if err != nil {
		return "", fmt.Errorf("dataset: %s line %d: %v; pass --custom-dataset-type", f.path, line, err)
	}
	return typ, nil
}

// looksWeka reports whether data is one JSON object with a weka_trace's members (it may span
// many lines, unlike a JSONL record).
func looksWeka(data []byte) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return false
	}
	_, reqs := obj["requests"]
	_, scope := obj["hash_id_scope"]
	return reqs && scope
}

// looksDAG reports whether a record with turns is a dag_jsonl conversation: one of its
// turns branches (forks, spawns) or it spawns before its first turn.
func looksDAG(obj map[string]json.RawMessage) bool {
	if _, ok := obj["pre_session_spawns"]; ok {
		return true
	}
	var turns []map[string]json.RawMessage
	if json.Unmarshal(obj["turns"], &turns) != nil {
		return false
	}
	for _, t := range turns {
		_, f := t["forks"]
		_, s := t["spawns"]
		if f || s {
			return true
		}
	}
	return false
}

// firstLine returns the first non-blank line and its number.
func firstLine(data []byte) ([]byte, int) {
	var first []byte
	var n int
	errStop := errors.New("stop")
	_ = forEachLine(data, func(line int, b []byte) error {
		first, n = b, line
		return errStop
	})
	return first, n
}

// detectRecord tells the JSONL format from the members of its first record.
func detectRecord(obj map[string]json.RawMessage) (string, error) {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := obj[k]; ok {
				return true
			}
		}
		return false
	}
	if raw, ok := obj["type"]; ok {
		var t string
		if json.Unmarshal(raw, &t) == nil && slices.Contains(FileTypes(), t) {
			return t, nil // AIPerf lets a record name its own type
		}
	}
	var cands []string
	if has("chat_id") && has("parent_chat_id", "turn") {
		cands = append(cands, TypeBailian)
	}
	if has("turns") {
		if looksDAG(obj) {
			cands = append(cands, TypeDAG)
		} else {
			cands = append(cands, TypeMultiTurn)
		}
	}
	if has("input_length", "hash_ids", "text_input", "payload") && !has("chat_id") {
		cands = append(cands, TypeMooncake)
	}
	if has("text", "texts", "image", "images", "audio", "audios", "video", "videos") {
		cands = append(cands, TypeSingleTurn)
	}
	if has("messages") && !has("input_length", "text_input", "payload", "turns") {
		mooncakeOnly := has("timestamp", "delay", "session_id", "output_length", "message_mode", "extra", "context_mode")
		bodyOnly := false
		for k := range obj {
			switch k {
			case "messages", "tools", "timestamp", "delay", "session_id", "output_length", "message_mode", "extra", "context_mode":
			default:
				bodyOnly = true // a member a request body has and a mooncake record does not
			}
		}
		switch {
		case mooncakeOnly && !bodyOnly:
			cands = append(cands, TypeMooncake)
		case bodyOnly && !mooncakeOnly:
			cands = append(cands, TypeRawPayload)
		default:
			return "", errors.New("a \"messages\" record could be mooncake_trace or raw_payload")
		}
	}
	cands = slices.Compact(cands)
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("cannot tell the format from the members [%s]", strings.Join(keys, " "))
	}
	return "", fmt.Errorf("ambiguous format: could be %s", strings.Join(cands, " or "))
}
