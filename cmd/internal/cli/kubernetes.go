package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/deploy/kubernetes"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay"
)

// RunKubernetes is `replay kubernetes`: it prints the manifests of a distributed run
// (package deploy/kubernetes) for `kubectl apply -f -`. Flags after "--" go to every shard's
// replay. Exit status 0, or 2 on bad input.
func RunKubernetes(args []string, stdout, stderr io.Writer, now time.Time) int {
	fs := NewFlagSet("replay kubernetes")
	fs.SetOutput(stderr)
	plan := fs.String("plan", "", "plan file to replay (hashed here; delivered in a ConfigMap when small)")
	shards := fs.Int("shards", 0, "number of shards, one pod per node")
	urls := fs.StringArrayP("url", "u", nil, "server base URL as the pods reach it (repeatable)")
	image := fs.String("image", "", "container image holding replay and analyze in "+kubernetes.ImageBinDir+" (deploy/container/Containerfile)")
	startIn := fs.Duration("start-in", kubernetes.DefaultStartIn, "the shards' shared t = 0 is this long after now")
	startAt := fs.String("start-at", "", "the shards' shared t = 0 as RFC 3339 (instead of --start-in)")
	runID := fs.String("run-id", "", "run name: objects, labels and the results folder (default llmbench-<plan hash prefix>-<unix time>)")
	ns := fs.String("namespace", "", "namespace of every object (default: kubectl's)")
	results := fs.String("results-claim", kubernetes.DefaultResultsClaim, "ReadWriteMany PersistentVolumeClaim the shards write <run-id>/shard-<I>/ to")
	planClaim := fs.String("plan-claim", "", "PersistentVolumeClaim holding the plan, for plans too large for a ConfigMap")
	planClaimPath := fs.String("plan-claim-path", "", "the plan's path inside --plan-claim (default plan.llmplan)")
	cpu := fs.String("cpu", kubernetes.DefaultCPU, "whole CPUs per replay pod (requests = limits: Guaranteed)")
	mem := fs.String("memory", kubernetes.DefaultMemory, "memory per replay pod (requests = limits)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: replay kubernetes --plan FILE --shards N --url URL --image IMAGE [flags] [-- REPLAY_FLAGS...]\n\n%s", fs.FlagUsages())
	}
	bad := func(err error) int {
		fmt.Fprintln(stderr, OneLine("replay kubernetes", err))
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return bad(ParseError(fs, err))
	}
	switch {
	case *plan == "":
		return bad(errors.New("--plan is required"))
	case *shards < 1:
		return bad(fmt.Errorf("--shards %d: want at least 1", *shards))
	case len(*urls) == 0:
		return bad(errors.New("--url is required"))
	case *image == "":
		return bad(errors.New("--image is required"))
	}
	if err := checkShardArgs(fs.Args()); err != nil {
		return bad(err)
	}
	p, err := mmapds.Open(*plan, mmapds.Options{})
	if err != nil {
		return bad(err)
	}
	o := kubernetes.Options{PlanHash: p.HashHex(), PlanSize: p.Size(), Shards: *shards, URLs: *urls, Image: *image,
		RunID: *runID, Namespace: *ns, ResultsClaim: *results, PlanClaim: *planClaim, PlanClaimPath: *planClaimPath,
		CPU: *cpu, Memory: *mem, ReplayArgs: fs.Args()}
	sessions, conc := planShape(p)
	p.Close()
	if *shards > sessions {
		return bad(fmt.Errorf("--shards %d: the plan has only %d sessions", *shards, sessions))
	}
	if conc > 0 && *shards > conc {
		return bad(fmt.Errorf("--shards %d: the plan's concurrency %d cannot be split over more shards than that", *shards, conc))
	}
	o.StartAt = now.Add(*startIn)
	if *startAt != "" {
		if o.StartAt, err = ParseStartAt(*startAt, now); err != nil {
			return bad(err)
		}
	}
	if err := replay.CheckStartAhead(o.StartAt, now); err != nil { // every shard would refuse it
		return bad(fmt.Errorf("--start-in/--%w", err))
	}
	if o.RunID == "" {
		o.RunID = fmt.Sprintf("llmbench-%s-%d", o.PlanHash[:8], now.Unix())
	}
	if o.PlanClaim == "" {
		b, err := os.ReadFile(*plan)
		if err != nil {
			return bad(err)
		}
		o.PlanBytes = b
	}
	objs, err := kubernetes.Generate(o)
	if err != nil {
		return bad(err)
	}
	if err := kubernetes.Render(stdout, objs); err != nil {
		fmt.Fprintln(stderr, OneLine("replay kubernetes", err))
		return 1
	}
	fmt.Fprintf(stderr, "replay kubernetes: run %s, %d shards, t = 0 at %s (apply before then; see deploy/kubernetes/README.md)\n",
		o.RunID, o.Shards, o.StartAt.UTC().Format(time.RFC3339Nano))
	return 0
}

// manifestFlags are the replay flags every shard's manifest sets itself.
var manifestFlags = []string{"plan", "plan-hash", "output-dir", "shard-count", "shard-index", "start-at", "run-id", "ui-type", "url"}

// checkShardArgs checks the replay flags given after "--" as every shard will parse them,
// before any manifest is printed: an unknown flag or a bad value fails here once instead of
// in every pod at the start instant. What depends on the pod (its CPUs, its files) is left
// to the pod.
func checkShardArgs(args []string) error {
	rf := NewReplay()
	AddDistributed(rf.FS)
	AddVersion(rf.FS)
	if err := rf.FS.Parse(args); err != nil {
		return fmt.Errorf("replay flags after --: %w", ParseError(rf.FS, err))
	}
	if rf.FS.NArg() > 0 {
		return fmt.Errorf("replay flags after --: unexpected argument %q", rf.FS.Arg(0))
	}
	for _, n := range manifestFlags {
		if Changed(rf.FS, n) {
			return fmt.Errorf("replay flags after --: --%s is set by the manifest (give it to replay kubernetes, or drop it)", n)
		}
	}
	if err := rf.CheckUI(); err != nil {
		return fmt.Errorf("replay flags after --: %w", err)
	}
	for _, f := range []struct {
		name string
		zero bool
	}{{"request-timeout-seconds", false}, {"wait-for-model-timeout", true}, {"wait-for-model-interval", true}} {
		v, _ := rf.FS.GetFloat64(f.name)
		if _, err := durationFlag(f.name, v, f.zero); err != nil {
			return fmt.Errorf("replay flags after --: %w", err)
		}
	}
	if _, err := parseGrace(*rf.grace); err != nil {
		return fmt.Errorf("replay flags after --: %w", err)
	}
	return nil
}

// planShape returns the plan's session count and concurrency, for the shard-count checks
// replay itself makes on every shard.
func planShape(p *mmapds.Plan) (sessions, concurrency int) {
	seen := map[uint32]bool{}
	for i := 0; i < p.Len(); i++ {
		r, _, err := p.Record(i)
		if err != nil {
			break
		}
		seen[r.Session] = true
	}
	return len(seen), p.Meta().Concurrency
}

// RunCopyPlan is `replay copy-plan --plan-hash H SRC DST` (replay.CopyPlan): what a
// deployment's init container runs. Exit status 0, or 2.
func RunCopyPlan(args []string, stderr io.Writer) int {
	fs := NewFlagSet("replay copy-plan")
	fs.SetOutput(stderr)
	hash := fs.String("plan-hash", "", "the plan's expected identity (hex SHA-256)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, OneLine("replay copy-plan", ParseError(fs, err)))
		return 2
	}
	if fs.NArg() != 2 || *hash == "" {
		fmt.Fprintln(stderr, "replay copy-plan: usage: replay copy-plan --plan-hash HASH SRC DST")
		return 2
	}
	if err := replay.CopyPlan(fs.Arg(0), fs.Arg(1), *hash); err != nil {
		fmt.Fprintln(stderr, OneLine("replay", err))
		return 2
	}
	return 0
}
