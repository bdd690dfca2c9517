package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fixedLengths draws ISL uniformly in [lo, hi] and a fixed OSL.
type fixedLengths struct{ lo, hi, osl int }

func (f fixedLengths) Sample(r *rand.Rand) (int, int) { return f.lo + r.IntN(f.hi-f.lo+1), f.osl }

func testStreams(seed uint64) func(string) *rand.Rand {
	return func(name string) *rand.Rand {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seed)
		sum := sha256.Sum256(append(b[:], name...))
		return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	}
}

func synthOptions(t *testing.T) SyntheticOptions {
	c, err := LoadCorpus(corpusTestTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	return SyntheticOptions{
		Corpus: c, Entries: 30, Lengths: fixedLengths{20, 60, 9},
		TurnMean: 3, TurnStddev: 1, TurnDelayMeanMs: 200, TurnDelayStddevMs: 50, TurnDelayRatio: 0.5,
		SharedSystemLength: 11, UserContextLength: 7,
		Stream: testStreams(3),
	}
}

func TestSynthetic(t *testing.T) {
	o := synthOptions(t)
	ds, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	tok := o.Corpus.Tokenizer()
	if ds.Name != "synthetic" || ds.Timed || len(ds.Conversations) != 30 || ds.SourceSHA256 != o.Corpus.SHA256() {
		t.Fatalf("dataset %s timed=%v %d conversations", ds.Name, ds.Timed, len(ds.Conversations))
	}
	turnCounts := map[int]int{}
	contexts := map[string]bool{}
	for i, c := range ds.Conversations {
		turnCounts[len(c.Turns)]++
		if tok.Count(c.UserContext) != 7 || contexts[c.UserContext] {
			t.Fatalf("conversation %d: context %q not 7 tokens or repeated", i, c.UserContext)
		}
		contexts[c.UserContext] = true
		for j, turn := range c.Turns {
			if turn.System != ds.Conversations[0].Turns[0].System || tok.Count(turn.System) != 11 {
				t.Fatalf("conversation %d turn %d: system prompt not shared or not 11 tokens", i, j)
			}
			if n := tok.Count(turn.Prompt); n != turn.PromptTokens || n < 20 || n > 60 {
				t.Fatalf("conversation %d turn %d: prompt has %d tokens, recorded %d", i, j, n, turn.PromptTokens)
			}
			if turn.OSL != 9 || turn.TimestampNs != NoTime {
				t.Fatalf("turn %+v", turn)
			}
			if j == 0 && turn.DelayNs != NoTime {
				t.Fatalf("first turn has a delay %d", turn.DelayNs)
			}
			// 200±50 ms × 0.5, at least 0.5 ms.
			if j > 0 && (turn.DelayNs < 0.5e6 || turn.DelayNs > 200e6 || turn.DelayNs%0.5e6 != 0) {
				t.Fatalf("later turn delay %d ns", turn.DelayNs)
			}
		}
	}
	if len(turnCounts) < 2 {
		t.Fatalf("turn counts do not vary: %v", turnCounts)
	}
}

func TestSyntheticPrefixPool(t *testing.T) {
	o := synthOptions(t)
	o.SharedSystemLength, o.UserContextLength = 0, 0
	o.PrefixPoolSize, o.PrefixLength = 2, 13
	ds, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]int{}
	tok := o.Corpus.Tokenizer()
	for _, c := range ds.Conversations {
		first := c.Turns[0]
		if tok.Count(first.Prompt) != first.PromptTokens {
			t.Fatalf("prefixed prompt count %d recorded %d", tok.Count(first.Prompt), first.PromptTokens)
		}
		words := strings.Fields(first.Prompt)
		prefixes[strings.Join(words[:3], " ")]++
		for _, later := range c.Turns[1:] {
			if later.PromptTokens < 20 || later.PromptTokens > 60 {
				t.Fatalf("later turn has %d tokens: a prefix leaked", later.PromptTokens)
			}
		}
	}
	if len(prefixes) != 2 {
		t.Fatalf("first prompts start %d ways, want the 2 pool prefixes: %v", len(prefixes), prefixes)
	}
}

func TestSyntheticWorkersDoNotMatter(t *testing.T) {
	o := synthOptions(t)
	o.Workers = 1
	a, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Workers = 5
	b, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the dataset depends on the number of workers")
	}
	o.Stream = testStreams(4)
	c, _ := Synthetic(o)
	if reflect.DeepEqual(a, c) {
		t.Fatal("a different seed gave the same dataset")
	}
}

func TestSyntheticRejects(t *testing.T) {
	for _, mut := range []func(*SyntheticOptions){
		func(o *SyntheticOptions) { o.Entries = 0 },
		func(o *SyntheticOptions) { o.TurnMean = 0 },
		func(o *SyntheticOptions) { o.Lengths = nil },
		func(o *SyntheticOptions) { o.Corpus = nil },
		func(o *SyntheticOptions) { o.PrefixPoolSize = 3 },
		func(o *SyntheticOptions) { o.Lengths = fixedLengths{0, 0, 1} },
	} {
		o := synthOptions(t)
		mut(&o)
		if _, err := Synthetic(o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

// TestSyntheticGenOneByOne: conversations drawn one at a time while a plan schedules are
// the ones Synthetic draws at once, so a plan's first n sessions do not depend on how the
// dataset was grown; filling twice keeps the texts made before.
func TestSyntheticGenOneByOne(t *testing.T) {
	for _, prefix := range []bool{false, true} {
		o := synthOptions(t)
		if prefix {
			o.SharedSystemLength, o.UserContextLength, o.PrefixPoolSize, o.PrefixLength = 0, 0, 2, 6
		}
		want, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewSyntheticGen(o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range o.Entries {
			if err := g.Grow(1); err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				if _, err := g.Fill(); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := g.Fill()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("prefix %v: the dataset grown one by one differs from Synthetic's", prefix)
		}
	}
}
