package cli

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/deploy/kubernetes"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay"
)

// RunKubernetes is `replay kubernetes`: it prints the manifests of a distributed run
// (package deploy/kubernetes) for `kubectl create -f`; flags after "--" go to every shard's
// replay. Its subcommands check a run before it is created (preflight), create one with
// everything owned by its replay Job (create), wait for its analysis (wait), and print the
// pod that hands the results out (collector); docs/distributed.md walks through them. Exit
// status 0, 1 when the run (wait) or kubectl failed, 2 on bad input.
func RunKubernetes(args []string, stdout, stderr io.Writer, now time.Time) int {
	if len(args) > 0 {
		switch args[0] {
		case "preflight":
			return runKubePreflight(args[1:], stdout, stderr, now)
		case "create":
			return runKubeCreate(args[1:], stderr)
		case "wait":
			return runKubeWait(args[1:], stdout, stderr, time.Sleep)
		case "collector":
			return runKubeCollector(args[1:], stdout, stderr)
		}
	}
	o, code := kubeOptions("replay kubernetes", args, stderr, now)
	if o == nil {
		return code
	}
	objs, err := kubernetes.Generate(*o)
	if err != nil {
		fmt.Fprintln(stderr, OneLine("replay kubernetes", kubeErr(err)))
		return 2
	}
	if err := kubernetes.Render(stdout, objs); err != nil {
		fmt.Fprintln(stderr, OneLine("replay kubernetes", err))
		return 1
	}
	start := "shards start together once all are ready (rendezvous at " + o.RendezvousAddr() + ")"
	if !o.StartAt.IsZero() {
		start = "t = 0 at " + o.StartAt.UTC().Format(time.RFC3339Nano) + " (create before then)"
	}
	fmt.Fprintf(stderr, "replay kubernetes: run %s, %d shards, %s; next: replay kubernetes create -f FILE (docs/distributed.md)\n",
		o.RunID, o.Shards, start)
	return 0
}

// kubeOptions parses the generator's flags into kubernetes.Options and checks everything
// that can be checked offline. A nil result comes with the exit status (0: --help).
func kubeOptions(name string, args []string, stderr io.Writer, now time.Time) (*kubernetes.Options, int) {
	fs := NewFlagSet(name)
	fs.SetOutput(stderr)
	plan := fs.String("plan", "", "plan file to replay (hashed here; delivered in a ConfigMap when small)")
	shards := fs.Int("shards", 0, "number of shards, one pod per node")
	urls := fs.StringArrayP("url", "u", nil, "server base URL as the pods reach it (repeatable)")
	image := fs.String("image", "", "container image holding replay and analyze in "+kubernetes.ImageBinDir+" (deploy/container/Containerfile)")
	rdvPort := fs.Int("rendezvous-port", kubernetes.DefaultRendezvousPort, "port shard 0 listens on for the others (the default start: all shards meet there and start together)")
	rdvTimeout := fs.Duration("rendezvous-timeout", kubernetes.DefaultRendezvousTimeout, "how long the shards wait for each other (image pulls, scheduling) before they give up, nothing sent")
	startIn := fs.Duration("start-in", 0, "a fixed t = 0 this long after now instead of the rendezvous")
	startAt := fs.String("start-at", "", "a fixed t = 0 as RFC 3339 instead of the rendezvous")
	runID := fs.String("run-id", "", "run name: objects, labels and the results folder (default llmbench-<plan hash prefix>-<unix time>)")
	ns := fs.String("namespace", "", "namespace of every object (default: kubectl's)")
	results := fs.String("results-claim", kubernetes.DefaultResultsClaim, "ReadWriteMany PersistentVolumeClaim the shards write <run-id>/shard-<I>/ to")
	planClaim := fs.String("plan-claim", "", "PersistentVolumeClaim holding the plan, for plans too large for a ConfigMap")
	planClaimPath := fs.String("plan-claim-path", "", "the plan's path inside --plan-claim (default plan.llmplan)")
	cpu := fs.String("cpu", kubernetes.DefaultCPU, "whole CPUs per replay pod (requests = limits: Guaranteed QoS, CPUs to pin to)")
	mem := fs.String("memory", kubernetes.DefaultMemory, "memory per replay pod (requests = limits), a Kubernetes quantity")
	ttl := fs.Duration("ttl", kubernetes.DefaultTTL, "the Jobs, and everything they own, are deleted this long after they finish: collect the results before")
	apiKeySecret := fs.String("api-key-secret", "", "Secret holding the server's API key, NAME or NAME:KEY (key default api-key): mounted into the shard pods and passed as --api-key-file")
	deadline := fs.Duration("active-deadline", 0, "the replay Job's activeDeadlineSeconds (default: the wait for the start + 2 × the plan's duration + 10m; 24h when the duration is unknown)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s --plan FILE --shards N --url URL --image IMAGE [flags] [-- REPLAY_FLAGS...]\n\n%s", name, fs.FlagUsages())
	}
	bad := func(err error) (*kubernetes.Options, int) {
		fmt.Fprintln(stderr, OneLine(name, err))
		return nil, 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, 0
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
	case Changed(fs, "start-in") && *startAt != "":
		return bad(errors.New("--start-in and --start-at: give one"))
	case Changed(fs, "start-in") && *startIn <= 0:
		return bad(fmt.Errorf("--start-in %v: must be positive", *startIn))
	case (Changed(fs, "start-in") || *startAt != "") && (Changed(fs, "rendezvous-port") || Changed(fs, "rendezvous-timeout")):
		return bad(errors.New("--rendezvous-port and --rendezvous-timeout go with the rendezvous, not with a fixed --start-in or --start-at"))
	case *rdvTimeout <= 0:
		return bad(fmt.Errorf("--rendezvous-timeout %v: must be positive", *rdvTimeout))
	case *ttl <= 0:
		return bad(fmt.Errorf("--ttl %v: must be positive", *ttl))
	case Changed(fs, "active-deadline") && *deadline <= 0:
		return bad(fmt.Errorf("--active-deadline %v: must be positive", *deadline))
	}
	if err := kubernetes.CheckCPU(*cpu); err != nil {
		return bad(fmt.Errorf("--%w", err))
	}
	if err := kubernetes.CheckMemory(*mem); err != nil {
		return bad(fmt.Errorf("--%w", err))
	}
	for _, u := range *urls {
		if err := checkPodURL(u); err != nil {
			return bad(err)
		}
	}
	grace, err := checkShardArgs(fs.Args(), *apiKeySecret != "")
	if err != nil {
		return bad(err)
	}
	secret, secretKey, _ := strings.Cut(*apiKeySecret, ":")
	p, err := mmapds.Open(*plan, mmapds.Options{})
	if err != nil {
		return bad(err)
	}
	o := kubernetes.Options{PlanHash: p.HashHex(), PlanSize: p.Size(), Shards: *shards, URLs: *urls, Image: *image, Now: now,
		RunID: *runID, Namespace: *ns, ResultsClaim: *results, PlanClaim: *planClaim, PlanClaimPath: *planClaimPath,
		CPU: *cpu, Memory: *mem, TTL: *ttl, Deadline: *deadline, Grace: grace, ReplayArgs: fs.Args(),
		RendezvousPort: *rdvPort, RendezvousTimeout: *rdvTimeout, APIKeySecret: secret, APIKeySecretKey: secretKey}
	sessions, conc, dur := planShape(p)
	p.Close()
	o.PlanDuration = dur
	if *shards > sessions {
		return bad(fmt.Errorf("--shards %d: the plan has only %d sessions", *shards, sessions))
	}
	if conc > 0 && *shards > conc {
		return bad(fmt.Errorf("--shards %d: the plan's concurrency %d cannot be split over more shards than that", *shards, conc))
	}
	switch {
	case Changed(fs, "start-in"):
		o.StartAt = now.Add(*startIn)
	case *startAt != "":
		if o.StartAt, err = ParseStartAt(*startAt, now); err != nil {
			return bad(err)
		}
		if !o.StartAt.After(now) {
			return bad(fmt.Errorf("--start-at %s is in the past (now %s): every shard would refuse it",
				o.StartAt.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339)))
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
	return &o, 0
}

// checkPodURL checks a server URL as replay does, and refuses a loopback host: inside a pod
// it is the pod itself, not the machine the manifests were generated on.
func checkPodURL(u string) error {
	raw := u
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("--url %q: want http:// or https:// and a host", raw)
	}
	host := p.Hostname()
	if a, err := netip.ParseAddr(host); (err == nil && a.IsLoopback()) || strings.EqualFold(host, "localhost") {
		return fmt.Errorf("--url %q: a loopback address inside a pod is the pod itself; give the server's address as the pods reach it (a Service name, a node IP)", raw)
	}
	return nil
}

// checkShardArgs checks the replay flags given after "--" as every shard will parse them,
// before any manifest is printed: an unknown flag or a bad value fails here once instead of
// in every pod at the start instant (what depends on the pod, its CPUs and files, is left to
// the pod). It refuses the flags the generator sets itself, naming them, and a key that would
// sit in the manifests, and returns replay's grace period, which the pods' termination grace
// must exceed.
func checkShardArgs(args []string, keySecret bool) (time.Duration, error) {
	const after = "replay flags after --: "
	rf := NewReplay()
	fs := rf.FS
	AddDistributed(fs)
	AddVersion(fs)
	if err := fs.Parse(args); err != nil {
		return 0, fmt.Errorf(after+"%w", ParseError(fs, err))
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf(after+"unexpected argument %q (replay takes only flags)", fs.Arg(0))
	}
	for _, f := range kubernetes.OwnedFlags {
		if Changed(fs, f) {
			return 0, fmt.Errorf(after+"--%s is set by replay kubernetes itself for every shard (give it to replay kubernetes, or drop it)", f)
		}
	}
	if Changed(fs, "api-key") {
		return 0, errors.New(after + "--api-key would write the key into the manifests, readable by anyone who can read them; put it in a Secret and pass --api-key-secret NAME")
	}
	if keySecret && Changed(fs, "api-key-file") {
		return 0, errors.New(after + "--api-key-file and --api-key-secret: give one")
	}
	if err := rf.CheckUI(); err != nil {
		return 0, fmt.Errorf(after+"%w", err)
	}
	for _, f := range []struct {
		name string
		zero bool
	}{{"request-timeout-seconds", false}, {"wait-for-model-timeout", true}, {"wait-for-model-interval", true}} {
		v, _ := fs.GetFloat64(f.name)
		if _, err := durationFlag(f.name, v, f.zero); err != nil {
			return 0, fmt.Errorf(after+"%w", err)
		}
	}
	g, err := parseGrace(*rf.grace)
	if err != nil {
		return 0, fmt.Errorf(after+"%w", err)
	}
	if g == replay.InfiniteGrace {
		return 0, errors.New(after + "--benchmark-grace-period inf: a pod is killed after its termination grace, so the grace must be a number of seconds")
	}
	return g, nil
}

// planShape returns the plan's session count, its concurrency, and how long it sends for
// (its duration, or its last planned send instant; 0 when unknown), for the checks replay
// makes on every shard and the Jobs' deadlines.
func planShape(p *mmapds.Plan) (sessions, concurrency int, duration time.Duration) {
	seen := map[uint32]bool{}
	var last int64
	for i := 0; i < p.Len(); i++ {
		r, _, err := p.Record(i)
		if err != nil {
			break
		}
		seen[r.Session] = true
		last = max(last, r.SendOffsetNs)
	}
	m := p.Meta()
	return len(seen), m.Concurrency, time.Duration(max(last, m.DurationNs))
}

// runKubePreflight is `replay kubernetes preflight`: the generator's offline checks over the
// same flags, then the kubectl commands that check what only the cluster knows.
func runKubePreflight(args []string, stdout, stderr io.Writer, now time.Time) int {
	const name = "replay kubernetes preflight"
	o, code := kubeOptions(name, args, stderr, now)
	if o == nil {
		return code
	}
	if _, err := kubernetes.Generate(*o); err != nil {
		fmt.Fprintln(stderr, OneLine(name, kubeErr(err)))
		return 2
	}
	n := ""
	if o.Namespace != "" {
		n = "-n " + o.Namespace + " "
	}
	w := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	item := 0
	check := func(format string, a ...any) {
		item++
		w("  %d. "+format, append([]any{item}, a...)...)
	}
	w("Offline checks passed for run %s:", o.RunID)
	where := "in a ConfigMap"
	if o.PlanClaim != "" {
		where = "on claim " + o.PlanClaim
	}
	w("  plan      %s, %d bytes %s, %d shards, sends for %v", o.PlanHash, o.PlanSize, where, o.Shards, durationWords(o.PlanDuration.Round(time.Millisecond)))
	if o.StartAt.IsZero() {
		w("  start     rendezvous at %s; the shards wait up to %v for each other", o.RendezvousAddr(), o.RendezvousTimeout)
	} else {
		w("  start     fixed, t = 0 at %s (%v from now)", o.StartAt.UTC().Format(time.RFC3339Nano), o.StartAt.Sub(now).Round(time.Second))
	}
	w("  pods      %s CPU, %s each, requests = limits (Guaranteed); termination grace %v > replay's grace %v", o.CPU, o.Memory, o.TerminationGrace(), o.Grace)
	w("  deadlines replay Job %v, analysis %v; both Jobs deleted %v after they finish", o.ReplayDeadline(), o.AnalyzeDeadline(), o.TTL)
	w("  replay    flags after -- parse, none of them set by the generator")
	w("")
	w("Check on the cluster, with the context the run will use:")
	check("the results claim is ReadWriteMany and Bound (every shard and the analysis mount it):")
	w("       kubectl %sget pvc %s -o jsonpath='{.spec.accessModes} {.status.phase}{\"\\n\"}'", n, o.ResultsClaim)
	if o.PlanClaim != "" {
		w("       kubectl %sget pvc %s -o jsonpath='{.spec.accessModes} {.status.phase}{\"\\n\"}'   (ReadOnlyMany or ReadWriteMany)", n, o.PlanClaim)
	}
	check("at least %d schedulable nodes with %s CPU and %s free (one shard per node):", o.Shards, o.CPU, o.Memory)
	w("       kubectl get nodes --field-selector spec.unschedulable=false -o custom-columns=NODE:.metadata.name,CPU:.status.allocatable.cpu,MEMORY:.status.allocatable.memory")
	check("the kubelet's CPU manager policy is static there (whole CPUs to pin workers to; else pinning shares CPUs, or pass -- --no-pin):")
	w("       kubectl get --raw /api/v1/nodes/NODE/proxy/configz | grep -o '\"cpuManagerPolicy\":\"[a-z]*\"'")
	check("the nodes' clocks are synchronised (the rendezvous refuses clocks further apart than the plan's first gap; analyze flags unsynchronised ones):")
	w("       kubectl debug node/NODE -it --image=busybox -- chroot /host chronyc tracking")
	if o.APIKeySecret != "" {
		check("the API key Secret exists and holds the key:")
		w("       kubectl %sget secret %s -o jsonpath='{.data.%s}' | wc -c   (not 0)", n, o.APIKeySecret, strings.ReplaceAll(firstNonEmpty(o.APIKeySecretKey, "api-key"), ".", "\\."))
	}
	check("you may create and own what the run needs:")
	w("       kubectl %sauth can-i create jobs; kubectl %sauth can-i create configmaps; kubectl %sauth can-i create services; kubectl %sauth can-i patch configmaps", n, n, n, n)
	check("the image runs on the nodes and the server answers from inside the cluster:")
	w("       kubectl %srun %s-preflight --rm -i --restart=Never --image=%s --command -- /bin/replay --version", n, o.RunID, o.Image)
	w("       kubectl %srun %s-probe --rm -i --restart=Never --image=curlimages/curl -- curl -sf %s/v1/models", n, o.RunID, strings.TrimSuffix(o.URLs[0], "/"))
	if o.StartAt.IsZero() {
		check("pods of the namespace may reach each other on TCP %d (no NetworkPolicy in the way of the rendezvous):", o.RendezvousPort)
		w("       kubectl %sget networkpolicy", n)
	}
	return 0
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// durationWords is d, or "an unknown time" (a closed loop sized by request count).
func durationWords(d time.Duration) string {
	if d <= 0 {
		return "an unknown time (a closed loop sized by count; set --active-deadline)"
	}
	return d.String()
}

// runKubeCollector is `replay kubernetes collector`: the pod that serves a finished run's
// folder as a tar (kubernetes.Collector).
func runKubeCollector(args []string, stdout, stderr io.Writer) int {
	const name = "replay kubernetes collector"
	fs := NewFlagSet(name)
	fs.SetOutput(stderr)
	runID := fs.String("run-id", "", "the run whose folder to serve")
	image := fs.String("image", "", "the run's container image")
	ns := fs.String("namespace", "", "the run's namespace (default: kubectl's)")
	results := fs.String("results-claim", kubernetes.DefaultResultsClaim, "the run's results claim")
	serveFor := fs.Duration("collect-for", kubernetes.DefaultCollectFor, "the pod ends after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: %s --run-id R --image IMAGE [flags] | kubectl create -f -\n\n%s", name, fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(stderr, OneLine(name, ParseError(fs, err)))
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, OneLine(name, fmt.Errorf("unexpected argument %q", fs.Arg(0))))
		return 2
	}
	p, err := kubernetes.Collector(kubernetes.CollectorOptions{RunID: *runID, Namespace: *ns, Image: *image, ResultsClaim: *results, For: *serveFor})
	if err != nil {
		fmt.Fprintln(stderr, OneLine(name, kubeErr(err)))
		return 2
	}
	if err := kubernetes.RenderOne(stdout, p); err != nil {
		fmt.Fprintln(stderr, OneLine(name, err))
		return 1
	}
	n := ""
	if *ns != "" {
		n = "-n " + *ns + " "
	}
	pod := kubernetes.CollectorName(*runID)
	fmt.Fprintf(stderr, "%s: then: kubectl %swait --for=condition=Ready pod/%s && kubectl %sexec %s -- /bin/analyze collect /results/%s > %s.tar && kubectl %sdelete pod %s\n",
		name, n, pod, n, pod, *runID, *runID, n, pod)
	return 0
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
