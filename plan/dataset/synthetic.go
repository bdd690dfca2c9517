package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/llmbench/llmbench/plan/internal/parallel"
)

// LengthSampler draws the token lengths of one synthetic turn.
type LengthSampler interface {
	// Sample returns the prompt length in tokens (> 0) and the requested output length
	// (0 leaves it unset).
	Sample(r *rand.Rand) (isl, osl int)
}

// SyntheticOptions configure Synthetic. Lengths are in tokens, delays in milliseconds.
type SyntheticOptions struct {
	// Corpus is the prompt source, tokenized under the plan's tokenizer.
	Corpus *Corpus
	// Entries is the number of conversations (--num-dataset-entries); a plan samples them.
	Entries int
	// Lengths draws each turn's prompt length and requested output length.
	Lengths LengthSampler
	// TurnMean and TurnStddev draw the number of turns per conversation (normal, at least 1).
	TurnMean   int
	TurnStddev float64
	// TurnDelayMeanMs and TurnDelayStddevMs draw the think time before each later turn
	// (normal, at least 1 ms when the mean is > 0); TurnDelayRatio scales it.
	TurnDelayMeanMs   float64
	TurnDelayStddevMs float64
	TurnDelayRatio    float64
	// SharedSystemLength > 0 adds one system prompt of that many tokens to every conversation.
	SharedSystemLength int
	// UserContextLength > 0 adds a distinct user context of that many tokens per conversation.
	UserContextLength int
	// PrefixPoolSize prefixes of PrefixLength tokens are generated; each conversation's first
	// prompt starts with one drawn at random (AIPerf's prefix prompt pool).
	PrefixPoolSize int
	PrefixLength   int
	// BatchSize > 1 gives every turn that many texts (Turn.Texts, each of a drawn length),
	// for the embeddings APIs' input lists (--prompt-batch-size).
	BatchSize int
	// Rankings, when set, makes every turn a ranking request (a query and passages) instead
	// of a prompt; Lengths is then not used.
	Rankings *RankingsShape
	// Stream returns the random stream of a named component; streams of different names are
	// independent, so adding a component never shifts another's draws.
	Stream func(component string) *rand.Rand
	// Workers bounds the goroutines generating prompt text (0 = GOMAXPROCS). The result does
	// not depend on it.
	Workers int
}

// RankingsShape sizes synthetic ranking requests (AIPerf's --rankings-* flags): passages per
// request and tokens per passage and per query, each round(N(mean, stddev)) and at least 1.
type RankingsShape struct {
	PassagesMean, PassageTokensMean, QueryTokensMean       int
	PassagesStddev, PassageTokensStddev, QueryTokensStddev float64
}

// promptTask is one piece of text to generate: exactly n tokens from its own stream.
type promptTask struct {
	seed uint64
	n    int
	text string
}

// Synthetic generates Entries conversations of corpus prompts with exact token counts.
//
// Every random draw (turn counts, lengths, delays, prefix choices, and one seed per prompt)
// is made first, in order, from its component's stream; the prompt texts are then produced
// in parallel, each from its own seed. The dataset therefore depends only on the options and
// the streams, never on the number of workers.
func Synthetic(opts SyntheticOptions) (*Dataset, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	g, err := NewSyntheticGen(opts)
	if err != nil {
		return nil, err
	}
	if err := g.Grow(opts.Entries); err != nil {
		return nil, err
	}
	return g.Fill()
}

// SyntheticGen generates synthetic conversations on demand: Grow draws the next
// conversations (turn counts, lengths, delays, prefix choices and one seed per prompt), Fill
// then writes every drawn conversation's prompt texts. A plan that gives each request its own
// conversation grows the dataset while it schedules and pays for the text of those it sends,
// no more. Each component draws from its own stream in conversation order, so the first n
// conversations are the same whether they were drawn at once or one by one.
type SyntheticGen struct {
	opts                                               SyntheticOptions
	ds                                                 *Dataset
	turnRNG, delayRNG, lengthRNG, promptRNG, prefixRNG *rand.Rand
	rankRNG, contextRNG                                *rand.Rand
	tasks                                              []promptTask
	system                                             int
	prefixes                                           []int
	contexts                                           []int
	plan                                               [][]turnTasks
	filled                                             int // conversations whose texts are written
}

// turnTasks are the indices in SyntheticGen.tasks of one turn's texts (-1: none).
type turnTasks struct {
	prompt, prefix, query int
	passages, batch       []int
}

// NewSyntheticGen checks opts and returns a generator of no conversations yet. opts.Entries
// is not used (Grow says how many).
func NewSyntheticGen(opts SyntheticOptions) (*SyntheticGen, error) {
	if opts.Entries <= 0 {
		opts.Entries = 1 // check's bound is Synthetic's; the generator grows on demand
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	g := &SyntheticGen{
		opts:       opts,
		ds:         &Dataset{Name: "synthetic", SourceSHA256: opts.Corpus.SHA256()},
		turnRNG:    opts.Stream("dataset.synthetic.turn_count"),
		delayRNG:   opts.Stream("dataset.synthetic.turn_delay"),
		lengthRNG:  opts.Stream("dataset.synthetic.length"),
		promptRNG:  opts.Stream("dataset.synthetic.prompt"),
		prefixRNG:  opts.Stream("dataset.synthetic.prefix"),
		contextRNG: opts.Stream("dataset.synthetic.user_context"),
		system:     -1,
	}
	if opts.Rankings != nil {
		g.rankRNG = opts.Stream("dataset.synthetic.rankings")
	}
	if opts.SharedSystemLength > 0 {
		g.system = g.task(opts.Stream("dataset.synthetic.system"), opts.SharedSystemLength)
	}
	g.prefixes = make([]int, opts.PrefixPoolSize)
	if opts.PrefixPoolSize > 0 {
		r := opts.Stream("dataset.synthetic.prefix_pool")
		for i := range g.prefixes {
			g.prefixes[i] = g.task(r, opts.PrefixLength)
		}
	}
	return g, nil
}

func (g *SyntheticGen) task(r *rand.Rand, n int) int {
	g.tasks = append(g.tasks, promptTask{seed: r.Uint64(), n: n})
	return len(g.tasks) - 1
}

// Dataset is the dataset being generated: its conversations have their structure once
// drawn, and their texts once Fill has run.
func (g *SyntheticGen) Dataset() *Dataset { return g.ds }

// Len is the number of conversations drawn.
func (g *SyntheticGen) Len() int { return len(g.ds.Conversations) }

// Grow draws n more conversations.
func (g *SyntheticGen) Grow(n int) error {
	opts := &g.opts
	for range n {
		i := len(g.ds.Conversations)
		ctx := -1
		if opts.UserContextLength > 0 {
			ctx = g.task(g.contextRNG, opts.UserContextLength)
		}
		g.contexts = append(g.contexts, ctx)
		c := Conversation{SessionID: fmt.Sprintf("session_%06d", i)}
		nTurns := synthPositiveNormal(g.turnRNG, float64(opts.TurnMean), opts.TurnStddev)
		c.Turns = make([]Turn, nTurns)
		tts := make([]turnTasks, nTurns)
		for t := range c.Turns {
			turn := &c.Turns[t]
			turn.TimestampNs, turn.DelayNs = NoTime, NoTime
			if t > 0 && opts.TurnDelayMeanMs > 0 {
				d, err := synthDelayNs(g.delayRNG, opts)
				if err != nil {
					return fmt.Errorf("dataset: synthetic entry %d turn %d: %w", i, t, err)
				}
				turn.DelayNs = d
			}
			if rk := opts.Rankings; rk != nil {
				tt := turnTasks{prompt: -1, prefix: -1, query: g.task(g.promptRNG, synthPositiveNormal(g.rankRNG, float64(rk.QueryTokensMean), rk.QueryTokensStddev))}
				tt.passages = make([]int, synthPositiveNormal(g.rankRNG, float64(rk.PassagesMean), rk.PassagesStddev))
				for p := range tt.passages {
					tt.passages[p] = g.task(g.promptRNG, synthPositiveNormal(g.rankRNG, float64(rk.PassageTokensMean), rk.PassageTokensStddev))
				}
				tts[t] = tt
				continue
			}
			isl, osl := opts.Lengths.Sample(g.lengthRNG)
			if isl <= 0 {
				return fmt.Errorf("dataset: synthetic entry %d turn %d: prompt length %d must be > 0", i, t, isl)
			}
			turn.OSL = max(osl, 0)
			tt := turnTasks{prompt: g.task(g.promptRNG, isl), prefix: -1, query: -1}
			for range opts.BatchSize - 1 {
				n, _ := opts.Lengths.Sample(g.lengthRNG)
				if n <= 0 {
					return fmt.Errorf("dataset: synthetic entry %d turn %d: prompt length %d must be > 0", i, t, n)
				}
				tt.batch = append(tt.batch, g.task(g.promptRNG, n))
			}
			if t == 0 && len(g.prefixes) > 0 {
				tt.prefix = g.prefixes[g.prefixRNG.IntN(len(g.prefixes))]
			}
			tts[t] = tt
		}
		g.ds.Conversations = append(g.ds.Conversations, c)
		g.plan = append(g.plan, tts)
	}
	return nil
}

// Fill writes the prompt texts of the conversations drawn since the last Fill and returns
// the dataset.
func (g *SyntheticGen) Fill() (*Dataset, error) {
	opts := &g.opts
	// Texts already made (a conversation filled before, the shared system prompt and
	// prefixes) are kept.
	todo := g.tasks
	err := parallel.Indexed(len(todo), opts.Workers, func(k int) error {
		t := &todo[k]
		if t.text != "" {
			return nil
		}
		text, err := opts.Corpus.Prompt(rand.New(rand.NewPCG(t.seed, uint64(t.n))), t.n)
		if err != nil {
			return fmt.Errorf("dataset: synthetic prompt %d: %w", k, err)
		}
		t.text = text
		return nil
	})
	if err != nil {
		return nil, err
	}

	tok := opts.Corpus.Tokenizer()
	ds, tasks, from := g.ds, g.tasks, g.filled
	// Joining a prefix and a prompt can merge tokens at the seam, so those counts are
	// measured; everything else is exact by construction.
	err = parallel.Indexed(len(ds.Conversations)-from, opts.Workers, func(k int) error {
		i := from + k
		c := &ds.Conversations[i]
		if g.contexts[i] >= 0 {
			c.UserContext = tasks[g.contexts[i]].text
		}
		for t := range c.Turns {
			turn, tt := &c.Turns[t], g.plan[i][t]
			if tt.query >= 0 {
				turn.Query = tasks[tt.query].text
				turn.Passages = make([]string, len(tt.passages))
				for p, k := range tt.passages {
					turn.Passages[p] = tasks[k].text
				}
				continue
			}
			if g.system >= 0 {
				turn.System = tasks[g.system].text
			}
			turn.Prompt, turn.PromptTokens = tasks[tt.prompt].text, tasks[tt.prompt].n
			if tt.prefix >= 0 {
				turn.Prompt = tasks[tt.prefix].text + " " + turn.Prompt
				turn.PromptTokens = tok.Count(turn.Prompt)
			}
			if len(tt.batch) > 0 {
				turn.Texts = append(make([]string, 0, len(tt.batch)+1), turn.Prompt)
				for _, k := range tt.batch {
					turn.Texts = append(turn.Texts, tasks[k].text)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	g.filled = len(ds.Conversations)
	return ds, nil
}

func (o *SyntheticOptions) check() error {
	switch {
	case o.Corpus == nil:
		return errors.New("dataset: synthetic: no corpus")
	case o.Lengths == nil && o.Rankings == nil:
		return errors.New("dataset: synthetic: no length sampler")
	case o.Stream == nil:
		return errors.New("dataset: synthetic: no random streams")
	case o.Entries <= 0:
		return fmt.Errorf("dataset: synthetic: %d entries, want > 0", o.Entries)
	case o.TurnMean <= 0:
		return fmt.Errorf("dataset: synthetic: turn mean %d, want > 0", o.TurnMean)
	case o.PrefixPoolSize > 0 && o.PrefixLength <= 0:
		return fmt.Errorf("dataset: synthetic: prefix pool of %d needs a prefix length > 0", o.PrefixPoolSize)
	}
	return nil
}

// synthDelayNs draws the think time before a later turn; one that does not fit in int64
// nanoseconds is an error, never a wrapped-around value (the compiler bounds the rest).
func synthDelayNs(r *rand.Rand, o *SyntheticOptions) (int64, error) {
	ms := float64(synthPositiveNormal(r, o.TurnDelayMeanMs, o.TurnDelayStddevMs)) * o.TurnDelayRatio
	ns := math.Round(ms * float64(time.Millisecond))
	if !(ns >= 0 && ns < math.MaxInt64) {
		return 0, fmt.Errorf("think time of %g ms (--conversation-turn-delay-mean, -stddev and -ratio) does not fit in int64 nanoseconds", ms)
	}
	return int64(ns), nil
}

// synthPositiveNormal draws round(N(mean, stddev)), at least 1 (AIPerf's
// sample_positive_normal_integer).
func synthPositiveNormal(r *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v += stddev * r.NormFloat64()
	}
	return max(1, int(math.Round(v)))
}
