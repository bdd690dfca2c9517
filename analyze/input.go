package analyze

import (
	"runtime"
	"time"

	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
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
	// generator validation matches them with the mock server's log: benchclaim.ShareCollector.Add). It is
	// called from the goroutines reading the logs, possibly several at once.
	OnRequest func(ContentTiming)
	// RecordMetadata, when set, appends fields (each `,"name":value`) to the metadata of
	// the per-request export's record of the request at plan index i (a server span joined
	// to it: analyze/servertime). Called from several goroutines at once.
	RecordMetadata func(i uint32, dst []byte) []byte
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
// plan or logs), as opposed to failures writing results. It is rundir's: the run
// directories are the first input checked.
var ErrInput = rundir.ErrInput

// inputErr and wrapInput make the input errors of the checks analyze makes itself (options
// against the logs, the logs against the plan), rundir's kind.
var (
	inputErr  = rundir.Errorf
	wrapInput = rundir.Wrap
)

// input is everything opened before the logs are read.
type input struct {
	runs     []rundir.Run
	plan     *mmapds.Plan
	offer    mmapds.Offer // what the plan's profile offers: its own rate, its repeated bodies
	planPath string
	meta     *mmapds.Meta
	ep       *endpoint.Endpoint
	tok      TokenCounter
	tokName  string
	jobs     []rundir.Log
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
	in := &input{}
	var err error
	if in.runs, in.notes, err = rundir.Open(o.RunDirs); err != nil {
		return nil, err
	}
	if in.shards, err = checkShards(in.runs); err != nil {
		return nil, err
	}
	if in.shards != nil {
		in.shards.judgeClocks(o)
		in.notes = append(in.notes, in.shards.notes()...)
	}
	plan, path, err := rundir.OpenPlan(o.PlanPath, in.runs[0])
	if err != nil {
		return nil, err
	}
	in.planPath = path
	in.plan = plan
	in.meta = plan.Meta()
	if in.offer, err = plan.Offer(); err != nil {
		plan.Close()
		return nil, wrapInput(err)
	}
	if err := rundir.CheckPlan(in.runs, plan, path); err != nil {
		plan.Close()
		return nil, err
	}
	ep, err := PlanEndpoint(in.meta)
	if err != nil {
		plan.Close()
		return nil, inputErr("%s: %v", path, err)
	}
	in.ep = ep
	in.jobs, in.planned = rundir.Logs(in.runs)
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

// ContentTiming is one sent profile request as its client logged it, handed to
// Options.OnRequest (the generator validation's benchclaim.ShareCollector): its session
// and turn, when its write began and returned, and the read instant of each content event
// (run clock, ns).
type ContentTiming struct {
	Index         uint32
	Session, Turn uint32
	WriteStartNs  int64
	WriteEndNs    int64
	// ContentNs are the read instants of the request's content events in order (a whole
	// JSON body is one, at its last read); nil for a request that did not complete validly. The slice is reused once the call returns.
	ContentNs []int64
}
