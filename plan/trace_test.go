package plan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

// writeTrace writes a small mooncake_trace: sessions of several turns, shared hash_id
// prefixes, 16-token blocks.
func writeTrace(t *testing.T) string {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		n := 33 + i%16 // three blocks of 16, the last 1 to 16 tokens
		fmt.Fprintf(&b, `{"session_id": "s%d", "timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d, %d]}`+"\n",
			i%6, 1000+i*250, n, 3+i%5, i%2, 10+i%4, 100+i)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTraceDeterministicAcrossGOMAXPROCS(t *testing.T) {
	path := writeTrace(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var files [][]byte
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		o := testOptions(t)
		corpus, err := dataset.LoadCorpus(o.Tokenizer)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := dataset.LoadFile(dataset.FileOptions{Path: path, Type: "mooncake_trace", BlockSize: 16, Tokenizer: o.Tokenizer, Corpus: corpus})
		if err != nil {
			t.Fatal(err)
		}
		o.Dataset, o.Corpus = ds, corpus
		o.FixedScheduleAutoOffset = true
		o.Concurrency = 3
		p, res := compileOpen(t, o)
		if res.Mode != ModeFixedSchedule || len(p.Meta().InputInsight) == 0 || p.Meta().InputSHA256 == "" {
			t.Fatalf("mode %s, meta %+v", res.Mode, p.Meta())
		}
		for i := range p.Len() {
			r, body, _ := p.Record(i)
			if got := o.Tokenizer.Count(bodyText(t, body, "")); got != int(r.ISL) {
				t.Fatalf("record %d: %d tokens, ISL %d", i, got, r.ISL)
			}
			if r.Turn == 0 && r.SendOffsetNs == mmapds.NoSendOffset {
				t.Fatalf("record %d: first turn of a timed trace has no instant", i)
			}
		}
		b, err := os.ReadFile(o.Output)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("a trace plan differs between GOMAXPROCS 1 and 2")
	}
}
