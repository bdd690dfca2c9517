package dataset

import (
	"fmt"
	"math"
)

// Synthesis rescales the rows of a trace (mooncake_trace, bailian_trace) before their prompts
// are built, as AIPerf's synthesizer does (--synthesis-*). The zero value changes nothing.
//
// A length row's input splits into its core, the leading run of hash_ids that another row
// also has (never the last block, which holds the remainder), and its leaf, the rest. The
// multipliers act on those parts, so rows that shared a prefix still share one.
type Synthesis struct {
	// PromptLenMultiplier scales each length row's leaf tokens (the whole length without
	// hash_ids); a longer leaf gets fresh hash_ids, a shorter one drops its last ones.
	// 0 or 1 keeps the lengths.
	PromptLenMultiplier float64
	// PrefixLenMultiplier stretches each core: c shared blocks become round(c·M) (at least
	// 1), the new block at position j standing for the old one at ⌊j/M⌋, so rows that shared
	// their first p blocks share the stretched ones. 0 or 1 keeps the cores.
	PrefixLenMultiplier float64
	// PrefixRootMultiplier > 1 makes that many independent copies of the prefix trees and
	// puts each session (a row without session_id is its own) on one copy drawn from the
	// seed: its hash_ids are renamed per copy, so prefixes are shared within a copy only.
	PrefixRootMultiplier int
	// OutputLenMultiplier scales every recorded output_length (at least 1); 0 or 1 keeps them.
	OutputLenMultiplier float64
	// MaxISL > 0 drops the rows whose input is longer, after the multipliers.
	MaxISL int
	// MaxOSL > 0 caps every output length, after the multiplier.
	MaxOSL int
}

// scales reports whether m changes a length.
func scales(m float64) bool { return m != 0 && m != 1 }

// Active reports whether s changes anything.
func (s *Synthesis) Active() bool {
	return scales(s.PromptLenMultiplier) || scales(s.PrefixLenMultiplier) || s.PrefixRootMultiplier > 1 ||
		scales(s.OutputLenMultiplier) || s.MaxISL > 0 || s.MaxOSL > 0
}

// Check validates the values, naming the flag.
func (s *Synthesis) Check() error {
	mult := []struct {
		flag string
		v    float64
	}{
		{"--synthesis-prompt-len-multiplier", s.PromptLenMultiplier},
		{"--synthesis-prefix-len-multiplier", s.PrefixLenMultiplier},
		{"--synthesis-output-len-multiplier", s.OutputLenMultiplier},
	}
	for _, m := range mult {
		if m.v < 0 || math.IsNaN(m.v) || m.v > 1e6 {
			return fmt.Errorf("dataset: %s must be in (0,1e6] (got %v)", m.flag, m.v)
		}
	}
	if s.PrefixRootMultiplier < 0 || s.PrefixRootMultiplier > 1<<20 {
		return fmt.Errorf("dataset: --synthesis-prefix-root-multiplier must be in [1,%d] (got %d)", 1<<20, s.PrefixRootMultiplier)
	}
	if s.MaxISL < 0 || s.MaxOSL < 0 || s.MaxISL > MaxPromptTokens || s.MaxOSL > MaxPromptTokens {
		return fmt.Errorf("dataset: --synthesis-max-isl and --synthesis-max-osl must be in [0,%d] (got %d and %d)", MaxPromptTokens, s.MaxISL, s.MaxOSL)
	}
	return nil
}

// apply rescales rows in place; bs is the hash block size, tail whether hash_ids may cover
// only a prefix of the input (bailian_trace), and root(i) the prefix-tree copy of row i.
func (s *Synthesis) apply(rows []traceRow, bs int, tail bool, root func(i int) int) error {
	if scales(s.OutputLenMultiplier) {
		for i := range rows {
			if rows[i].osl > 0 {
				rows[i].osl = max(1, int(min(math.Round(float64(rows[i].osl)*s.OutputLenMultiplier), MaxPromptTokens)))
			}
		}
	}
	if s.MaxOSL > 0 {
		for i := range rows {
			rows[i].osl = min(rows[i].osl, s.MaxOSL)
		}
	}
	if !scales(s.PromptLenMultiplier) && !scales(s.PrefixLenMultiplier) && s.PrefixRootMultiplier <= 1 {
		return nil
	}
	uses := make(map[int64]int)
	var next int64
	for i := range rows {
		for _, id := range rows[i].hashIDs {
			uses[id]++
			next = max(next, id+1)
		}
	}
	// fresh names new blocks: the same key always gets the same id, above the trace's own.
	type key struct {
		id   int64
		sub  int // position in a stretched core, or -1
		tree int // prefix-tree copy
	}
	ids := make(map[key]int64)
	fresh := func(k key) int64 {
		if v, ok := ids[k]; ok {
			return v
		}
		ids[k] = next
		next++
		return next - 1
	}
	pm, lm := s.PromptLenMultiplier, s.PrefixLenMultiplier
	if !scales(pm) {
		pm = 1
	}
	if !scales(lm) {
		lm = 1
	}
	for i := range rows {
		r := &rows[i]
		if r.mode != modeLength {
			continue
		}
		core := 0
		for core < len(r.hashIDs)-1 && uses[r.hashIDs[core]] > 1 {
			core++
		}
		leaf := r.inputLen - core*bs
		newCore := core
		if core > 0 && lm != 1 {
			newCore = max(1, int(math.Round(float64(core)*lm)))
		}
		newLeaf := leaf
		if pm != 1 {
			newLeaf = max(1, int(math.Round(float64(leaf)*pm)))
		}
		if n := newCore*bs + newLeaf; n > MaxPromptTokens {
			return fmt.Errorf("line %d: the --synthesis-* multipliers make input_length %d, more than %d", r.line, n, MaxPromptTokens)
		}
		r.inputLen = newCore*bs + newLeaf
		if len(r.hashIDs) == 0 {
			continue
		}
		c := 0
		if s.PrefixRootMultiplier > 1 {
			c = root(i)
		}
		need := (newLeaf + bs - 1) / bs
		out := make([]int64, 0, newCore+need)
		for j := range newCore {
			var id int64
			switch {
			case newCore != core:
				id = fresh(key{r.hashIDs[min(int(float64(j)/lm), core-1)], j, c})
			case c > 0:
				id = fresh(key{r.hashIDs[j], -1, c})
			default:
				id = r.hashIDs[j]
			}
			out = append(out, id)
		}
		have := r.hashIDs[core:]
		for _, id := range have[:min(len(have), need)] {
			if c > 0 {
				id = fresh(key{id, -1, c})
			}
			out = append(out, id)
		}
		for !tail && len(out) < newCore+need {
			out = append(out, fresh(key{-1, len(ids), c})) // a new leaf block: a key no other takes
		}
		r.hashIDs = out
	}
	return nil
}
