package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// goldenLine is one line of testdata/tokenizer/qwen3_golden.jsonl: a text and the ids that
// HuggingFace's Rust tokenizers (0.23.2) produced for it with the Qwen3 tokenizer.
type goldenLine struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readGolden(t testing.TB) []goldenLine {
	t.Helper()
	f, err := os.Open("../testdata/tokenizer/qwen3_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []goldenLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("golden line %d: %v", n, err)
		}
		lines = append(lines, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("golden file is empty")
	}
	return lines
}

func builtin(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestGoldenQwen3 checks every golden line exactly, through every entry point.
func TestGoldenQwen3(t *testing.T) {
	tok := builtin(t)
	bad := 0
	for n, g := range readGolden(t) {
		got := tok.Encode(g.Text)
		if !slices.Equal(got, g.IDs) {
			bad++
			if bad <= 10 {
				i := 0
				for i < len(got) && i < len(g.IDs) && got[i] == g.IDs[i] {
					i++
				}
				t.Errorf("line %d %+q: ids differ from index %d:\n got  %v\n want %v", n+1, g.Text, i, got[i:min(len(got), i+12)], g.IDs[i:min(len(g.IDs), i+12)])
			}
			continue
		}
		if c := tok.Count(g.Text); c != len(g.IDs) {
			t.Errorf("line %d: Count = %d, want %d", n+1, c, len(g.IDs))
		}
		if got := tok.AppendEncode([]int{-7}, g.Text); got[0] != -7 || !slices.Equal(got[1:], g.IDs) {
			t.Errorf("line %d: AppendEncode does not append", n+1)
		}
	}
	if bad > 0 {
		t.Errorf("%d golden lines differ", bad)
	}
}
