package benchclaim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/tokenizer"
)

// Shape validation defaults (docs/metrics.md "Workload shape").
const (
	// ShapeAlpha is the significance level: a distribution differs when its KS p-value is
	// below it and its statistic above ShapeMinD.
	ShapeAlpha = 0.01
	// ShapeMinD is the smallest KS statistic that counts as a material difference, so that
	// very large samples do not fail on differences nobody would act on.
	ShapeMinD = 0.05
	// ShapeReuseTolerance is the largest absolute difference of prefix reuse ratios that passes.
	ShapeReuseTolerance = 0.05
	// ShapeGapResolutionNs is the resolution inter-arrival gaps are compared at (1 ms): the
	// schedule-lag bound, and the resolution of trace timestamps.
	ShapeGapResolutionNs = 1e6
	// ShapeReuseBlock is the block size of prefix reuse when the reference has no hash_ids.
	ShapeReuseBlock = dataset.DefaultBlockSize
	// maxReuseRequests bounds the requests whose bodies are tokenized for prefix reuse.
	maxReuseRequests = 4000
)

// ShapeCompare is one distribution compared with the reference's.
type ShapeCompare struct {
	Name string // "isl", "osl", "inter_arrival", "plan_inter_arrival"
	KS   stats.KSResult
	// Skipped says why the comparison was not made ("" when it was).
	Skipped string
}

// Failed reports whether the comparison shows a difference: significant and material.
func (c ShapeCompare) Failed() bool {
	return c.Skipped == "" && c.KS.P < ShapeAlpha && c.KS.D > ShapeMinD
}

// ShapeReport is the workload shape of a run, compared with a reference when one was given,
// and the plan's own fidelity: the achieved inter-arrival gaps against the planned ones.
type ShapeReport struct {
	// Reference names the reference ("" when none was given) and RefKind what it was.
	Reference, RefKind    string
	Requests, RefRequests int
	// Compares are isl, osl and inter_arrival against the reference (none without one).
	Compares []ShapeCompare
	// Fidelity is plan_inter_arrival: achieved against planned gaps.
	Fidelity ShapeCompare
	// Reuse and RefReuse are the prefix reuse ratios (share of prompt tokens in blocks seen
	// before, in arrival order); negative when unknown. ReuseNote says how they were found.
	Reuse, RefReuse float64
	ReuseNote       string
}

func (r *ShapeReport) reuseFailed() bool {
	return r.Reuse >= 0 && r.RefReuse >= 0 && math.Abs(r.Reuse-r.RefReuse) > ShapeReuseTolerance
}

// failures says what differs.
func (r *ShapeReport) failures() []string {
	var out []string
	for _, c := range append(slices.Clone(r.Compares), r.Fidelity) {
		if c.Failed() {
			what := c.Name + " distribution differs from the reference's"
			if c.Name == "plan_inter_arrival" {
				what = "the client bent the arrival process: achieved inter-arrival gaps differ from the plan's"
			}
			out = append(out, fmt.Sprintf("%s (KS D %.3f, p %s)", what, c.KS.D, fmtP(c.KS.P)))
		}
	}
	if r.reuseFailed() {
		out = append(out, fmt.Sprintf("prefix reuse %.3f vs the reference's %.3f (tolerance ±%.2f)", r.Reuse, r.RefReuse, ShapeReuseTolerance))
	}
	return out
}

// describe is the report in one line.
func (r *ShapeReport) describe() string {
	var parts []string
	for _, c := range append(slices.Clone(r.Compares), r.Fidelity) {
		if c.Skipped != "" {
			parts = append(parts, c.Name+" not compared ("+c.Skipped+")")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s KS D %.3f p %s", c.Name, c.KS.D, fmtP(c.KS.P)))
	}
	switch {
	case r.Reuse >= 0 && r.RefReuse >= 0:
		parts = append(parts, fmt.Sprintf("prefix reuse %.3f vs %.3f", r.Reuse, r.RefReuse))
	case r.Reuse >= 0:
		parts = append(parts, fmt.Sprintf("prefix reuse %.3f", r.Reuse))
	}
	return strings.Join(parts, "; ")
}

// figures are the report's numbers by name.
func (r *ShapeReport) figures() map[string]float64 {
	f := map[string]float64{"requests": float64(r.Requests)}
	if r.Reference != "" {
		f["reference_requests"] = float64(r.RefRequests)
	}
	for _, c := range append(slices.Clone(r.Compares), r.Fidelity) {
		if c.Skipped == "" {
			f[c.Name+"_ks_d"], f[c.Name+"_ks_p"] = round4(c.KS.D), c.KS.P
		}
	}
	if r.Reuse >= 0 {
		f["prefix_reuse"] = round4(r.Reuse)
	}
	if r.RefReuse >= 0 {
		f["reference_prefix_reuse"] = round4(r.RefReuse)
	}
	return f
}

// fmtP formats a p-value; one below float64's resolution of 1 − u shows as < 1e-15.
func fmtP(p float64) string {
	if p < 1e-15 {
		return "< 1e-15"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// shapeData is one side of a comparison.
type shapeData struct {
	isl, osl, gaps []float64
	gapsWhy        string // why there are no gaps
	// plannedSentGaps are the achieved gaps of the requests the plan gave send instants (in
	// a multi-turn plan, the first turns; later turns follow completions).
	plannedSentGaps []float64
	plannedCount    int // requests with a planned send instant
	reuse           float64
	reuseNote       string
}

// ShapeOptions configure ValidateShape.
type ShapeOptions struct {
	// Reference is a dataset file in any format plan reads (TYPE:PATH forces its type), a
	// plan file or a run directory; "" reports the shape unvalidated.
	Reference string
	// Tokenizer tokenizes request bodies and reference prompts for prefix reuse; nil loads
	// the plan's (LoadTokenizer).
	Tokenizer *tokenizer.Tokenizer
	// LoadTokenizer loads a tokenizer by spec (the plan's); nil means tokenizer.Load.
	LoadTokenizer func(spec string) (*tokenizer.Tokenizer, error)
}

// ValidateShape reports the workload shape of the analysed run s and compares it with the
// reference. Errors about the reference name it.
func ValidateShape(s *analyze.Summary, o ShapeOptions) (*ShapeReport, error) {
	if len(s.ShapeSamples()) == 0 {
		return nil, errors.New("analyze: --validate-shape: the run has no valid profile requests to take the shape of")
	}
	load := o.LoadTokenizer
	if load == nil {
		load = tokenizer.Load
	}
	tok := o.Tokenizer
	if tok == nil && o.Reference != "" {
		// One tokenizer for both sides: the run's plan's (a reference without token counts
		// is counted under it, as plan would have).
		if p, err := mmapds.Open(s.PlanPath, mmapds.Options{SkipHash: true}); err == nil {
			tok, _ = load(p.Meta().Tokenizer)
			p.Close()
		}
	}
	run, plan, err := summaryShape(s, tok, load, o.Reference != "")
	if err != nil {
		return nil, err
	}
	r := &ShapeReport{Requests: len(s.ShapeSamples()), Reuse: run.reuse, RefReuse: -1, ReuseNote: run.reuseNote}
	r.Fidelity = ShapeCompare{Name: "plan_inter_arrival"}
	switch {
	case run.plannedCount == 0:
		r.Fidelity.Skipped = "the plan has no planned send instants (closed loop: arrivals follow completions)"
	case len(plan) == 0:
		r.Fidelity.Skipped = fmt.Sprintf("only %d request has a planned send instant (a gap needs two)", run.plannedCount)
	default:
		// Only requests with planned instants: later turns of a session follow completions.
		r.Fidelity.KS = stats.KS2(run.plannedSentGaps, plan)
	}
	if o.Reference == "" {
		return r, nil
	}
	ref, kind, err := referenceShape(o.Reference, tok, load)
	if err != nil {
		return nil, err
	}
	r.Reference, r.RefKind, r.RefRequests, r.RefReuse = o.Reference, kind, len(ref.isl), ref.reuse
	r.Compares = []ShapeCompare{{Name: "isl", KS: stats.KS2(run.isl, ref.isl)}, {Name: "osl", KS: stats.KS2(run.osl, ref.osl)}}
	gc := ShapeCompare{Name: "inter_arrival"}
	switch {
	case len(ref.gaps) == 0:
		gc.Skipped = "the reference has no timestamps"
		if ref.gapsWhy != "" {
			gc.Skipped = ref.gapsWhy
		}
	case len(run.gaps) == 0:
		gc.Skipped = "the run sent fewer than two requests"
	default:
		gc.KS = stats.KS2(run.gaps, ref.gaps)
	}
	r.Compares = append(r.Compares, gc)
	return r, nil
}

// gapsOf are the gaps between sorted instants (ns), at ShapeGapResolutionNs, in ms.
func gapsOf(ts []int64) []float64 {
	slices.Sort(ts)
	var out []float64
	for i := 1; i < len(ts); i++ {
		out = append(out, math.Round(float64(ts[i]-ts[i-1])/ShapeGapResolutionNs))
	}
	return out
}

// runShape is the run's side: ISL, OSL, achieved gaps and prefix reuse from its samples and
// plan, and the planned gaps of the same requests.
func runShape(samples []analyze.ShapeSample, p *mmapds.Plan, tok *tokenizer.Tokenizer, load func(string) (*tokenizer.Tokenizer, error), reuse bool) (*shapeData, []float64, error) {
	d := &shapeData{reuse: -1}
	sent := make([]int64, 0, len(samples))
	var planned, plannedSent []int64
	for _, x := range samples {
		d.isl, d.osl = append(d.isl, x.ISL), append(d.osl, x.OSL)
		sent = append(sent, x.SendUnixNs)
		if x.IntendedNs != mmapds.NoSendOffset && x.IntendedNs >= 0 {
			planned = append(planned, x.IntendedNs)
			plannedSent = append(plannedSent, x.SendUnixNs)
		}
	}
	d.gaps = gapsOf(sent)
	d.plannedCount = len(planned)
	var planGaps []float64
	if len(planned) >= 2 {
		planGaps = gapsOf(planned)
		d.plannedSentGaps = gapsOf(plannedSent)
	}
	if !reuse {
		return d, planGaps, nil
	}
	if tok == nil {
		var err error
		if tok, err = load(p.Meta().Tokenizer); err != nil {
			d.reuseNote = fmt.Sprintf("prefix reuse unknown: tokenizer %s: %v", p.Meta().Tokenizer, err)
			return d, planGaps, nil
		}
	}
	idx := make([]uint32, 0, len(samples))
	for _, x := range samples {
		idx = append(idx, x.Index)
	}
	slices.Sort(idx)
	if len(idx) > maxReuseRequests {
		idx = idx[:maxReuseRequests]
		d.reuseNote = fmt.Sprintf("prefix reuse over the first %d requests", maxReuseRequests)
	}
	rc := newReuseCounter(ShapeReuseBlock)
	var ids []int
	for _, i := range idx {
		_, body, err := p.Record(int(i))
		if err != nil {
			return nil, nil, fmt.Errorf("analyze: --validate-shape: %w", err)
		}
		ids = tok.AppendEncode(ids[:0], string(body))
		rc.addTokens(ids)
	}
	d.reuse = rc.ratio()
	return d, planGaps, nil
}

// reuseCounter measures prefix reuse as Mooncake's hash_ids define it: a prompt is cut into
// blocks, each block's id hashes it with every block before it, and a block counts as reused
// when its id was seen in an earlier request. The ratio is reused tokens over all tokens.
type reuseCounter struct {
	block         int
	seen          map[uint64]struct{}
	reused, total int64
	seed          maphash.Seed
}

func newReuseCounter(block int) *reuseCounter {
	return &reuseCounter{block: block, seen: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
}

// addTokens adds one request given as tokens: block ids are chained hashes.
func (c *reuseCounter) addTokens(ids []int) {
	var prev uint64
	var buf [8]byte
	var ids64 []int64
	for start := 0; start < len(ids); start += c.block {
		var h maphash.Hash
		h.SetSeed(c.seed)
		binary.LittleEndian.PutUint64(buf[:], prev)
		h.Write(buf[:])
		for _, t := range ids[start:min(start+c.block, len(ids))] {
			binary.LittleEndian.PutUint64(buf[:], uint64(t))
			h.Write(buf[:])
		}
		prev = h.Sum64()
		ids64 = append(ids64, int64(prev))
	}
	c.addBlocks(ids64, len(ids))
}

// addBlocks adds one request given as block ids (hash_ids) and its token count: every block
// holds c.block tokens but the last, which holds the rest.
func (c *reuseCounter) addBlocks(hashIDs []int64, tokens int) {
	for k, h := range hashIDs {
		n := c.block
		if k == len(hashIDs)-1 {
			n = max(tokens-c.block*k, 0)
		}
		if _, ok := c.seen[uint64(h)]; ok {
			c.reused += int64(n)
		}
		c.total += int64(n)
	}
	for _, h := range hashIDs {
		c.seen[uint64(h)] = struct{}{}
	}
}

func (c *reuseCounter) ratio() float64 {
	if c.total == 0 {
		return -1
	}
	return float64(c.reused) / float64(c.total)
}

// splitReference splits a --validate-shape reference into its forced dataset type ("" for
// none) and its path.
func splitReference(ref string) (typ, path string) {
	if t, p, ok := strings.Cut(ref, ":"); ok && slices.Contains(dataset.FileTypes(), t) {
		return t, p
	}
	return "", ref
}

// CheckReference checks, before a run, that a --validate-shape reference names something
// that exists; what it holds is read after the run.
func CheckReference(ref string) error {
	_, path := splitReference(ref)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("--validate-shape %s: %w", ref, err)
	}
	return nil
}

// referenceShape reads the reference: a run directory, a plan file, or a dataset file.
func referenceShape(ref string, tok *tokenizer.Tokenizer, load func(string) (*tokenizer.Tokenizer, error)) (*shapeData, string, error) {
	bad := func(err error) (*shapeData, string, error) {
		return nil, "", fmt.Errorf("analyze: --validate-shape %s: %w", ref, err)
	}
	typ, path := splitReference(ref)
	st, err := os.Stat(path)
	if err != nil {
		return bad(err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, rawlog.ManifestName)); err == nil {
			return runReference(path, tok, load)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return bad(err)
		}
	}
	if typ == "" && !st.IsDir() {
		if p, err := mmapds.Open(path, mmapds.Options{SkipHash: true}); err == nil {
			defer p.Close()
			return planReference(p, tok, load)
		}
	}
	if tok == nil {
		if tok, err = load("builtin"); err != nil {
			return bad(err)
		}
	}
	ds, err := dataset.LoadFile(dataset.FileOptions{Path: path, Type: typ, Tokenizer: tok})
	if err != nil {
		return bad(err)
	}
	d := &shapeData{reuse: -1}
	block := ds.BlockSize
	if block <= 0 {
		block = ShapeReuseBlock
	}
	rc := newReuseCounter(block)
	var ts []int64
	var ids []int
	for _, c := range ds.Conversations {
		for _, t := range c.Turns {
			d.isl, d.osl = append(d.isl, float64(t.PromptTokens)), append(d.osl, float64(t.OSL))
			if t.TimestampNs != dataset.NoTime {
				ts = append(ts, t.TimestampNs)
			}
			if len(d.isl) <= maxReuseRequests {
				if len(t.HashIDs) > 0 {
					rc.addBlocks(t.HashIDs, t.PromptTokens)
				} else {
					ids = tok.AppendEncode(ids[:0], t.Prompt)
					rc.addTokens(ids)
				}
			}
		}
	}
	if ds.Timed && len(ts) == len(d.isl) {
		d.gaps = gapsOf(ts)
	}
	d.reuse = rc.ratio()
	return d, ds.Name, nil
}

// planReference is the shape a plan file asks for: ISL, requested OSL, planned gaps.
func planReference(p *mmapds.Plan, tok *tokenizer.Tokenizer, load func(string) (*tokenizer.Tokenizer, error)) (*shapeData, string, error) {
	var samples []analyze.ShapeSample
	for i := 0; i < p.Len(); i++ {
		rec, _, err := p.Record(i)
		if err != nil {
			return nil, "", fmt.Errorf("analyze: --validate-shape: %w", err)
		}
		if rec.Phase != mmapds.PhaseProfile {
			continue
		}
		samples = append(samples, analyze.ShapeSample{Index: uint32(i), ISL: float64(rec.ISL), OSL: float64(rec.OSL),
			SendUnixNs: rec.SendOffsetNs, IntendedNs: rec.SendOffsetNs})
	}
	d, _, err := runShape(samples, p, tok, load, true)
	if err != nil {
		return nil, "", err
	}
	if len(samples) > 0 && samples[0].IntendedNs == mmapds.NoSendOffset {
		d.gaps, d.gapsWhy = nil, "the reference plan is a closed loop: it plans no send instants"
	}
	return d, "plan", nil
}

// runReference analyses another run and takes its shape.
func runReference(dir string, tok *tokenizer.Tokenizer, load func(string) (*tokenizer.Tokenizer, error)) (*shapeData, string, error) {
	opts := analyze.Options{RunDirs: []string{dir}, LoadTokenizer: func(spec string) (analyze.TokenCounter, error) { return load(spec) }}
	if tok != nil {
		opts.Tokenizer = tok
	}
	s, err := analyze.Analyze(opts, nil)
	if err != nil {
		return nil, "", fmt.Errorf("analyze: --validate-shape %s: %w", dir, err)
	}
	if len(s.ShapeSamples()) == 0 {
		return nil, "", fmt.Errorf("analyze: --validate-shape %s: the reference run has no valid profile requests", dir)
	}
	d, _, err := summaryShape(s, tok, load, true)
	if err != nil {
		return nil, "", err
	}
	return d, "run", nil
}

// summaryShape is runShape over an analysed run's samples and plan.
func summaryShape(s *analyze.Summary, tok *tokenizer.Tokenizer, load func(string) (*tokenizer.Tokenizer, error), reuse bool) (*shapeData, []float64, error) {
	p, err := mmapds.Open(s.PlanPath, mmapds.Options{SkipHash: true})
	if err != nil {
		return nil, nil, fmt.Errorf("analyze: --validate-shape: %w", err)
	}
	defer p.Close()
	return runShape(s.ShapeSamples(), p, tok, load, reuse)
}
