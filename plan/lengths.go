package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/plan/dataset"
)

// NormalLengths draws ISL and OSL from independent normal distributions, rounded and at
// least 1 (AIPerf's default: --isl/--isl-stddev, --osl/--osl-stddev). An OSLMean of 0 leaves
// the output length unset.
type NormalLengths struct {
	ISLMean   int
	ISLStddev float64
	OSLMean   int
	OSLStddev float64
}

// Sample draws one (ISL, OSL) pair.
func (n NormalLengths) Sample(r *rand.Rand) (isl, osl int) {
	isl = positiveNormalInt(r, float64(n.ISLMean), n.ISLStddev)
	if n.OSLMean > 0 {
		osl = positiveNormalInt(r, float64(n.OSLMean), n.OSLStddev)
	}
	return isl, osl
}

// RangeLengths draws ISL and OSL independently and uniformly around their means, as
// --random-range-ratio R does (AIPerf PR #850, after vLLM and SGLang bench): mode "vllm"
// draws from [⌊m(1−R)⌋, ⌈m(1+R)⌉] inclusive, mode "sglang" from [⌊m(1−R)⌋, ⌊m(1+R)⌋+1).
// Both lengths are at least 1; an OSLMean of 0 leaves the output length unset.
type RangeLengths struct {
	ISLMean int
	OSLMean int
	Ratio   float64
	Mode    string
}

// Sample draws one (ISL, OSL) pair.
func (l RangeLengths) Sample(r *rand.Rand) (isl, osl int) {
	isl = max(1, l.uniform(r, l.ISLMean))
	if l.OSLMean > 0 {
		osl = max(1, l.uniform(r, l.OSLMean))
	}
	return isl, osl
}

func (l RangeLengths) uniform(r *rand.Rand, mean int) int {
	m := float64(mean)
	lo := int(math.Floor(m * (1 - l.Ratio)))
	var hi int // exclusive
	if l.Mode == "sglang" {
		hi = int(math.Floor(m*(1+l.Ratio))) + 1
	} else {
		hi = int(math.Ceil(m*(1+l.Ratio))) + 1
	}
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo)
}

// SeqPair is one component of a --seq-dist mixture: ISL and OSL means with optional normal
// standard deviations, chosen with probability Prob percent.
type SeqPair struct {
	ISL       int
	ISLStddev float64
	OSL       int
	OSLStddev float64
	Prob      float64
}

// SeqDist is a --seq-dist mixture of (ISL, OSL) pairs.
type SeqDist struct {
	Pairs []SeqPair
	cum   []float64
}

// Sample picks a pair by its probability, then draws around its means.
func (d *SeqDist) Sample(r *rand.Rand) (isl, osl int) {
	u := r.Float64() * d.cum[len(d.cum)-1]
	i := 0
	for i < len(d.cum)-1 && u >= d.cum[i] {
		i++
	}
	p := d.Pairs[i]
	return positiveNormalInt(r, float64(p.ISL), p.ISLStddev), positiveNormalInt(r, float64(p.OSL), p.OSLStddev)
}

// String writes the mixture back in the semicolon form.
func (d *SeqDist) String() string {
	var b strings.Builder
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, p := range d.Pairs {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(strconv.Itoa(p.ISL))
		if p.ISLStddev > 0 {
			b.WriteString("|" + num(p.ISLStddev))
		}
		b.WriteString("," + strconv.Itoa(p.OSL))
		if p.OSLStddev > 0 {
			b.WriteString("|" + num(p.OSLStddev))
		}
		b.WriteString(":" + num(p.Prob))
	}
	return b.String()
}

var (
	seqNum      = `(\d+(?:\.\d+)?|\.\d+)`
	seqSemi     = regexp.MustCompile(`^\s*(\d+)(?:\|` + seqNum + `)?\s*,\s*(\d+)(?:\|` + seqNum + `)?\s*:\s*` + seqNum + `\s*$`)
	seqBracket  = regexp.MustCompile(`\(\s*(\d+)(?:\|` + seqNum + `)?\s*,\s*(\d+)(?:\|` + seqNum + `)?\s*\)\s*:\s*` + seqNum)
	seqBrackets = regexp.MustCompile(`^(\s*\(\s*(\d+)(?:\|` + seqNum + `)?\s*,\s*(\d+)(?:\|` + seqNum + `)?\s*\)\s*:\s*` + seqNum + `\s*,?)+$`)
)

// ParseSeqDist parses a --seq-dist mixture in AIPerf's three forms (probabilities are
// percentages summing to 100):
//
//	semicolon  "128,64:25;512|20,128|5:75"
//	bracket    "[(128,64):25,(512|20,128|5):75]"
//	JSON       {"pairs":[{"isl":128,"osl":64,"prob":25},{"isl":512,"isl_stddev":20,"osl":128,"osl_stddev":5,"prob":75}]}
func ParseSeqDist(s string) (*SeqDist, error) {
	s = strings.TrimSpace(s)
	var pairs []SeqPair
	switch {
	case s == "":
		return nil, fmt.Errorf("--seq-dist is empty")
	case strings.HasPrefix(s, "{"):
		var doc struct {
			Pairs []map[string]float64 `json:"pairs"`
		}
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return nil, fmt.Errorf("--seq-dist %q: invalid JSON: %v", s, err)
		}
		for i, m := range doc.Pairs {
			for _, k := range []string{"isl", "osl", "prob"} {
				if _, ok := m[k]; !ok {
					return nil, fmt.Errorf("--seq-dist: pair %d has no %q", i, k)
				}
			}
			pairs = append(pairs, SeqPair{ISL: int(m["isl"]), ISLStddev: m["isl_stddev"], OSL: int(m["osl"]), OSLStddev: m["osl_stddev"], Prob: m["prob"]})
		}
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		inner := s[1 : len(s)-1]
		if !seqBrackets.MatchString(inner) {
			return nil, fmt.Errorf("--seq-dist %q: want [(ISL,OSL):PROB,...]", s)
		}
		for _, m := range seqBracket.FindAllStringSubmatch(inner, -1) {
			pairs = append(pairs, seqPair(m[1:]))
		}
	default:
		for _, part := range strings.Split(s, ";") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			m := seqSemi.FindStringSubmatch(part)
			if m == nil {
				return nil, fmt.Errorf("--seq-dist: %q is not ISL[|SD],OSL[|SD]:PROB", strings.TrimSpace(part))
			}
			pairs = append(pairs, seqPair(m[1:]))
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("--seq-dist %q has no pairs", s)
	}
	d := &SeqDist{Pairs: pairs, cum: make([]float64, len(pairs))}
	total := 0.0
	for i, p := range pairs {
		switch {
		case p.ISL <= 0 || p.OSL <= 0:
			return nil, fmt.Errorf("--seq-dist: pair %d: ISL and OSL must be > 0 (got %d,%d)", i, p.ISL, p.OSL)
		case p.ISL > dataset.MaxPromptTokens || p.OSL > dataset.MaxPromptTokens:
			return nil, fmt.Errorf("--seq-dist: pair %d: ISL and OSL must be at most %d tokens (got %d,%d)", i, dataset.MaxPromptTokens, p.ISL, p.OSL)
		case !(p.ISLStddev >= 0 && p.ISLStddev <= dataset.MaxPromptTokens) || !(p.OSLStddev >= 0 && p.OSLStddev <= dataset.MaxPromptTokens):
			return nil, fmt.Errorf("--seq-dist: pair %d: standard deviations must be in [0, %d] tokens", i, dataset.MaxPromptTokens)
		case !(p.Prob >= 0 && p.Prob <= 100):
			return nil, fmt.Errorf("--seq-dist: pair %d: probability must be a percentage in [0,100] (got %v)", i, p.Prob)
		}
		total += p.Prob
		d.cum[i] = total
	}
	if math.Abs(total-100) > 1e-6 {
		return nil, fmt.Errorf("--seq-dist: probabilities must sum to 100 (got %v)", total)
	}
	return d, nil
}

// seqPair builds a pair from the five submatches isl, isl_sd, osl, osl_sd, prob.
func seqPair(m []string) SeqPair {
	f := func(s string) float64 {
		v, _ := strconv.ParseFloat(s, 64) // the regexp admits only numbers; "" is 0
		return v
	}
	return SeqPair{ISL: int(f(m[0])), ISLStddev: f(m[1]), OSL: int(f(m[2])), OSLStddev: f(m[3]), Prob: f(m[4])}
}

// positiveNormalInt draws round(N(mean, stddev)), at least 1 (AIPerf's
// sample_positive_normal_integer).
func positiveNormalInt(r *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v += stddev * r.NormFloat64()
	}
	return max(1, int(math.Round(v)))
}
