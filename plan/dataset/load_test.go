package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/tokenizer"
)

// fileTestdata is the repository's shared test data folder for input files.
const fileTestdata = "../../testdata/dataset"

var fileEnvOnce struct {
	sync.Once
	tok *tokenizer.Tokenizer
	c   *Corpus
	err error
}

// fileEnv returns the builtin Qwen3 tokenizer and its corpus, loaded once per test binary.
func fileEnv(t testing.TB) (*tokenizer.Tokenizer, *Corpus) {
	t.Helper()
	fileEnvOnce.Do(func() {
		fileEnvOnce.tok, fileEnvOnce.err = tokenizer.Builtin()
		if fileEnvOnce.err == nil {
			fileEnvOnce.c, fileEnvOnce.err = LoadCorpus(fileEnvOnce.tok)
		}
	})
	if fileEnvOnce.err != nil {
		t.Fatal(fileEnvOnce.err)
	}
	return fileEnvOnce.tok, fileEnvOnce.c
}

// loadFixture loads testdata/dataset/name with the builtin tokenizer.
func loadFixture(t testing.TB, name string, mod func(*FileOptions)) (*Dataset, error) {
	t.Helper()
	tok, c := fileEnv(t)
	opts := FileOptions{Path: filepath.Join(fileTestdata, name), Tokenizer: tok, Corpus: c, Seed: 7}
	if mod != nil {
		mod(&opts)
	}
	return LoadFile(opts)
}

// writeTemp writes content to a file in a test folder and returns its path.
func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDetectType(t *testing.T) {
	tests := []struct {
		fixture string
		want    string
	}{
		{"mooncake_conversation_trace.jsonl", TypeMooncake},
		{"mooncake_small.jsonl", TypeMooncake},
		{"sharegpt_small.json", TypeShareGPT},
		{"single_turn.jsonl", TypeSingleTurn},
		{"multi_turn.jsonl", TypeMultiTurn},
		{"random_pool", TypeRandomPool},
		{"random_pool_single.jsonl", TypeSingleTurn}, // a pool file is indistinguishable, as in AIPerf
		{"raw_payload.jsonl", TypeRawPayload},
		{"raw_payload_dir", TypeRawPayload},
		{"bailian_small.jsonl", TypeBailian},
		{"burstgpt_small.csv", TypeBurstGPT},
		{"weka", TypeWeka},
		{"weka/trace_a.json", TypeWeka},
		{"dag_branching.jsonl", TypeDAG},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			in, err := readInput(filepath.Join(fileTestdata, tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			got, err := detectType(in, DefaultMaxLineBytes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("detected %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDetectTypeFailsClearly(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"ambiguous messages", `{"messages": [{"role": "user", "content": "hi"}]}`, "could be mooncake_trace or raw_payload"},
		{"two formats", `{"input_length": 5, "text": "x"}`, "ambiguous format: could be mooncake_trace or single_turn"},
		{"unknown members", `{"foo": 1, "bar": 2}`, "cannot tell the format from the members [bar foo]"},
		{"not json", "hello world\n", "neither a JSON object"},
		{"bad json", `{"input_length": }`, "line 1: cannot tell the format"},
		{"empty", "\n\n", "is empty"},
		{"array of other", `[{"a": 1}]`, "no \"conversations\""},
		{"dynamo trace", `{"schema": "dynamo.request.trace.v1", "event_type": "request_end", "agent_context": {"session_id": "s"}}`,
			"in.jsonl line 1: dynamo.request.trace.v1 records (Dynamo request traces) are not read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, c := fileEnv(t)
			_, err := LoadFile(FileOptions{Path: writeTemp(t, "in.jsonl", tc.content), Tokenizer: tok, Corpus: c})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestExplicitTypeWins(t *testing.T) {
	// The same file read as random_pool instead of the detected single_turn.
	ds, err := loadFixture(t, "random_pool_single.jsonl", func(o *FileOptions) {
		o.Type = TypeRandomPool
		o.NumConversations = 9
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != TypeRandomPool || len(ds.Conversations) != 9 {
		t.Fatalf("got %s with %d conversations, want random_pool with 9", ds.Name, len(ds.Conversations))
	}
}

func TestLoadFileOptionErrors(t *testing.T) {
	tok, c := fileEnv(t)
	good := filepath.Join(fileTestdata, "mooncake_small.jsonl")
	tests := []struct {
		name string
		opts FileOptions
		want string
	}{
		{"no path", FileOptions{Tokenizer: tok}, "no input file"},
		{"missing file", FileOptions{Path: filepath.Join(t.TempDir(), "nope.jsonl"), Tokenizer: tok}, "no such file"},
		{"bad type", FileOptions{Path: good, Type: "csv", Tokenizer: tok}, `--custom-dataset-type "csv"`},
		{"dynamo", FileOptions{Path: good, Type: "dynamo_trace", Tokenizer: tok}, "--custom-dataset-type dynamo_trace: dynamo.request.trace.v1 records (Dynamo request traces) are not read"},
		{"bad strategy", FileOptions{Path: good, SamplingStrategy: "roundrobin", Tokenizer: tok}, "--dataset-sampling-strategy"},
		{"block size 1", FileOptions{Path: good, BlockSize: 1, Tokenizer: tok, Corpus: c}, "--isl-block-size 1"},
		{"negative block size", FileOptions{Path: good, BlockSize: -3, Tokenizer: tok}, "--isl-block-size -3"},
		{"no tokenizer", FileOptions{Path: good}, "needs a tokenizer"},
		{"folder for a trace", FileOptions{Path: filepath.Join(fileTestdata, "random_pool"), Type: TypeMooncake, Tokenizer: tok}, "is a folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFile(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLineErrorFormat(t *testing.T) {
	err := error(&LineError{Path: "t.jsonl", Line: 2, Type: TypeMooncake, Err: errors.New("hash_ids imply at least 513 tokens, input_length is 10")})
	want := "dataset: mooncake_trace t.jsonl line 2: hash_ids imply at least 513 tokens, input_length is 10"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("errors.As: %v", le)
	}
}

func TestSourceSHA256(t *testing.T) {
	a, err := loadFixture(t, "single_turn.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum of the fixture, computed independently by the test.
	data, err := os.ReadFile(filepath.Join(fileTestdata, "single_turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256Hex(data); a.SourceSHA256 != want {
		t.Errorf("SourceSHA256 %s, want %s", a.SourceSHA256, want)
	}
	// A folder's digest changes when any file's content changes.
	dir := t.TempDir()
	for _, f := range []struct{ name, body string }{{"a.jsonl", `{"text": "one"}`}, {"b.jsonl", `{"text": "two"}`}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in1, err := readInput(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(`{"text": "twO"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in2, err := readInput(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in1.sha == in2.sha {
		t.Error("folder digest did not change with its content")
	}
}
