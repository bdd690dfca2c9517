package analyze

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// TokenCounter counts the tokens of output text. *tokenizer.Tokenizer satisfies it; it must be
// safe for concurrent use.
type TokenCounter interface {
	Count(s string) int
}

// Options configure Analyze. The zero value of each field means its default.
type Options struct {
	// RunDirs are the run directories to analyse together: one run, or the shards of one plan.
	RunDirs []string
	// PlanPath overrides the plan named in run.json.
	PlanPath string
	// UseServerTokenCount takes ISL and OSL from the server's usage fields instead of the
	// plan and the tokenizer (AIPerf --use-server-token-count).
	UseServerTokenCount bool
	// Tokenizer counts output tokens. When nil, LoadTokenizer is called with TokenizerSpec,
	// or with the plan's tokenizer when TokenizerSpec is empty.
	Tokenizer     TokenCounter
	TokenizerSpec string
	LoadTokenizer func(spec string) (TokenCounter, error)
	// Metrics are the metrics to compute: the built-ins and any registered at run time
	// (nil: the built-ins). Goodput's metrics must be this registry's.
	Metrics *Registry
	// Goodput are the SLOs of --goodput; none means goodput is not reported.
	Goodput []SLO
	// Where, when set, selects the profile requests every metric, count and per-request
	// export is over (--where); GroupBy, when set, also summarises each group of them
	// (--group-by). The summary records both (Summary.Selection).
	Where   *Selection
	GroupBy *Grouping
	// Rows, when set, is given every profile request the analysis is over as a row (with its
	// content events), part by part: part i < number of logs is the i-th log in run.json
	// order, the last part the planned requests no log holds. Each part's sink is asked for
	// once, on its first row, and used from one goroutine; parts are read several at once.
	Rows func(part int) (RowSink, error)
	// SliceDuration, when positive, also summarises requests per time slice (by send time,
	// slices aligned to multiples of the duration since the Unix epoch, like AIPerf).
	SliceDuration time.Duration
	// MaxScheduleLag is the verdict's bound on the p99 dispatch lag (default 1 ms).
	MaxScheduleLag time.Duration
	// MaxWorkerCPU is the verdict's bound on a worker's CPU use over the profile window, as a
	// fraction of one core (default 0.9).
	MaxWorkerCPU float64
	// ExactLimit is how many values a distribution keeps exactly (default DefaultExactLimit).
	ExactLimit int
	// Parallelism is how many logs are read at once (default GOMAXPROCS).
	Parallelism int
	// TempDir holds per-log record files while logs are read in parallel (default os.TempDir).
	TempDir string
	// ExportHTTPTrace adds each request's trace_data to the records (AIPerf's
	// --export-http-trace): send, header, first and last read, connect times, every read.
	ExportHTTPTrace bool
	// ExportPerChunkData adds trace_data with the response chunks only (every read's time
	// and size) to the records; ExportHTTPTrace includes them.
	ExportPerChunkData bool
	// OnRequest, when set, is given every sent profile request's client timing (the
	// generator validation matches them with the mock server's log: ShareCollector.Add). It is
	// called from the goroutines reading the logs, possibly several at once.
	OnRequest func(ContentTiming)
}

func (o *Options) defaults() {
	if o.MaxScheduleLag <= 0 {
		o.MaxScheduleLag = time.Millisecond
	}
	if o.MaxWorkerCPU <= 0 {
		o.MaxWorkerCPU = 0.9
	}
	if o.ExactLimit <= 0 {
		o.ExactLimit = DefaultExactLimit
	}
	if o.Parallelism <= 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
}

// ErrInput is wrapped by errors about the input (missing or inconsistent run directories,
// plan or logs), as opposed to failures writing results.
var ErrInput = errors.New("bad input")

func inputErr(format string, args ...any) error {
	return fmt.Errorf("analyze: %w", &inputError{msg: fmt.Sprintf(format, args...)})
}

type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Is(t error) bool {
	return t == ErrInput
}

// wrapInput marks err as an input error, keeping its text.
func wrapInput(err error) error {
	if err == nil || errors.Is(err, ErrInput) {
		return err
	}
	return fmt.Errorf("analyze: %w", &wrappedInput{err})
}

type wrappedInput struct{ err error }

func (e *wrappedInput) Error() string   { return e.err.Error() }
func (e *wrappedInput) Unwrap() error   { return e.err }
func (e *wrappedInput) Is(t error) bool { return t == ErrInput }

// run is one run directory.
type run struct {
	dir string
	m   *rawlog.Manifest
}

// logJob is one log file to read.
type logJob struct {
	run       int
	path      string
	worker    int // WorkerInfo.ID, or -1 for the telemetry log
	planned   int
	telemetry bool
	// recovery marks the not_sent records replay wrote for a worker that died: requests,
	// but no worker activity of their own.
	recovery bool
}

// lostWhat says what is lost when none of the job's log can be read.
func (j logJob) lostWhat() string {
	if j.telemetry {
		return "the run has no GPU telemetry"
	}
	return fmt.Sprintf("its %d planned requests are counted as lost", j.planned)
}

// input is everything opened before the logs are read.
type input struct {
	runs     []run
	plan     *mmapds.Plan
	offer    mmapds.Offer // what the plan's profile offers: its own rate, its repeated bodies
	planPath string
	meta     *mmapds.Meta
	ep       *endpoint.Endpoint
	tok      TokenCounter
	tokName  string
	jobs     []logJob
	planned  int          // Σ WorkerInfo.Planned
	notes    []string     // about the input, for Summary.Notes (a rebuilt run.json)
	shards   *ShardReport // the runs are the shards of a distributed run; nil otherwise
}

// PlanEndpoint is the endpoint a plan's responses are parsed with: its API type, and for raw
// and template plans where the output text is (--response-field).
func PlanEndpoint(meta *mmapds.Meta) (*endpoint.Endpoint, error) {
	ep, err := endpoint.Lookup(meta.Endpoint)
	if err != nil {
		return nil, err
	}
	if f := meta.ResponseField(); f != "" {
		ep.ResponseField = f
	}
	return ep, nil
}

func openInput(o *Options) (*input, error) {
	if len(o.RunDirs) == 0 {
		return nil, inputErr("no run directory given")
	}
	in := &input{}
	seen := map[string]bool{}
	dirs, err := expandRunDirs(o.RunDirs)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err == nil && seen[abs] {
			return nil, inputErr("%s: run directory given twice", dir)
		}
		seen[abs] = true
		m, note, err := readManifest(dir)
		if err != nil {
			return nil, err
		}
		if note != "" {
			in.notes = append(in.notes, note)
		}
		if len(in.runs) > 0 && m.PlanHash != in.runs[0].m.PlanHash {
			a, b := rawlog.HashPrefixes(m.PlanHash, in.runs[0].m.PlanHash)
			return nil, inputErr("%s: plan %s differs from %s's plan %s: only shards of one plan can be analysed together",
				filepath.Join(dir, rawlog.ManifestName), a, in.runs[0].dir, b)
		}
		in.runs = append(in.runs, run{dir: dir, m: m})
	}
	if in.shards, err = checkShards(in.runs); err != nil {
		return nil, err
	}
	if in.shards != nil {
		in.shards.judgeClocks(o)
		in.notes = append(in.notes, in.shards.notes()...)
	}
	path, err := resolvePlan(o.PlanPath, in.runs[0])
	if err != nil {
		return nil, err
	}
	in.planPath = path
	// The plan's whole content is hashed: its stored identity alone would not show a plan
	// edited after the run (its records would silently change the results).
	plan, err := mmapds.Open(path, mmapds.Options{})
	if err != nil {
		if errors.Is(err, mmapds.ErrFormat) {
			return nil, inputErr("%v; %s was made from plan %s: pass that plan, unchanged, with --plan",
				err, filepath.Join(in.runs[0].dir, rawlog.ManifestName), in.runs[0].m.PlanHash)
		}
		return nil, wrapInput(err)
	}
	in.plan = plan
	in.meta = plan.Meta()
	if in.offer, err = plan.Offer(); err != nil {
		plan.Close()
		return nil, wrapInput(err)
	}
	if err := checkRuns(in.runs, plan, path); err != nil {
		plan.Close()
		return nil, err
	}
	ep, err := PlanEndpoint(in.meta)
	if err != nil {
		plan.Close()
		return nil, inputErr("%s: %v", path, err)
	}
	in.ep = ep
	for ri, r := range in.runs {
		for _, w := range r.m.Workers {
			// A worker that died has a recovery log too, written by replay: the requests it
			// never sent, as not_sent records. Each log is one job with its share of the
			// worker's planned requests, so what neither holds counts as lost.
			in.jobs = append(in.jobs, logJob{run: ri, path: filepath.Join(r.dir, w.Log), worker: w.ID, planned: w.Planned - w.Recovered})
			if w.RecoveryLog != "" {
				in.jobs = append(in.jobs, logJob{run: ri, path: filepath.Join(r.dir, w.RecoveryLog), worker: w.ID, planned: w.Recovered, recovery: true})
			}
			in.planned += w.Planned
		}
		if r.m.TelemetryLog != "" {
			in.jobs = append(in.jobs, logJob{run: ri, path: filepath.Join(r.dir, r.m.TelemetryLog), worker: -1, telemetry: true})
		}
	}
	if ep.ProducesTokens && !o.UseServerTokenCount {
		switch {
		case o.Tokenizer != nil:
			in.tok = o.Tokenizer
			in.tokName = o.TokenizerSpec
		default:
			spec := o.TokenizerSpec
			if spec == "" {
				spec = in.meta.Tokenizer
			}
			if spec == "" {
				plan.Close()
				return nil, inputErr("%s: the plan names no tokenizer; pass --tokenizer or --use-server-token-count", path)
			}
			if o.LoadTokenizer == nil {
				plan.Close()
				return nil, inputErr("no tokenizer loader to load %q", spec)
			}
			tok, err := o.LoadTokenizer(spec)
			if err != nil {
				plan.Close()
				return nil, inputErr("tokenizer %q: %v (pass --tokenizer or --use-server-token-count)", spec, err)
			}
			in.tok, in.tokName = tok, spec
		}
		if in.tokName == "" {
			in.tokName = in.meta.Tokenizer
		}
	}
	return in, nil
}

// readManifest reads dir/run.json; a damaged one (cut short, garbled: rawlog.ErrManifest) is
// rebuilt from the logs' headers, and note then says so. One that decodes but is
// inconsistent is bad input: it was written that way, and the logs cannot say which is right.
func readManifest(dir string) (m *rawlog.Manifest, note string, err error) {
	m, err = rawlog.ReadManifest(dir)
	if err == nil || !errors.Is(err, rawlog.ErrManifest) {
		return m, "", wrapInput(err)
	}
	rm, rerr := rawlog.RebuildManifest(dir)
	if rerr != nil {
		return nil, "", inputErr("%v; rebuilding it from the logs failed too: %v", err, rerr)
	}
	note = fmt.Sprintf("%v: REBUILT from the headers of %d worker logs (plan, start, workers, shard sizes); the URLs, command line, options and run status it held are unknown",
		err, len(rm.Workers))
	return rm, note, nil
}

// checkRuns checks the runs' manifests against the plan at path: the identity each run.json
// recorded is the plan's (whose content Open verified), and the workers' shards fit in it.
func checkRuns(runs []run, plan *mmapds.Plan, path string) error {
	total := 0
	for _, r := range runs {
		where := filepath.Join(r.dir, rawlog.ManifestName)
		if r.m.PlanHash != plan.HashHex() {
			a, b := rawlog.HashPrefixes(r.m.PlanHash, plan.HashHex())
			return inputErr("%s: run was made from plan %s but %s is plan %s (pass the right one with --plan)", where, a, path, b)
		}
		for _, w := range r.m.Workers {
			if w.Planned > plan.Len() {
				return inputErr("%s: worker %d has %d planned requests; the plan has %d records", where, w.ID, w.Planned, plan.Len())
			}
			total += w.Planned
			if total > plan.Len() {
				return inputErr("%s: the workers have %d planned requests or more; the plan has %d records", where, total, plan.Len())
			}
		}
		if c := r.m.Counts.Planned; c > plan.Len() {
			return inputErr("%s: counts.planned %d; the plan has %d records", where, c, plan.Len())
		}
	}
	return nil
}

// resolvePlan finds the plan file: the override, or run.json's plan_path taken as given and,
// when relative and absent, relative to the run directory.
func resolvePlan(override string, r run) (string, error) {
	if override != "" {
		return override, nil
	}
	p := r.m.PlanPath
	if p == "" {
		return "", inputErr("%s: no plan_path; pass --plan", filepath.Join(r.dir, rawlog.ManifestName))
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if q := filepath.Join(r.dir, p); fileExists(q) {
		return q, nil
	}
	if q := filepath.Join(r.dir, filepath.Base(p)); fileExists(q) {
		return q, nil
	}
	return "", inputErr("%s: plan %s not found (pass --plan)", filepath.Join(r.dir, rawlog.ManifestName), p)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
