package kubernetes

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay"
)

// Print is `replay kubernetes`: it generates the manifests of o, renders them to stdout for
// `kubectl create -f`, and says on stderr how the run will start and what to do next. It
// returns ExitOK, ExitBadInput when o does not make a run (one line on stderr), or
// ExitFailed when writing failed.
func Print(o Options, stdout, stderr io.Writer) int {
	const name = "replay kubernetes"
	objs, err := Generate(o)
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, Unprefixed(err)))
		return ExitBadInput
	}
	if err := Render(stdout, objs); err != nil {
		fmt.Fprintln(stderr, errline.Format(name, err))
		return ExitFailed
	}
	start := "shards start together once all are ready (rendezvous at " + o.RendezvousAddr() + ")"
	if !o.StartAt.IsZero() {
		start = "t = 0 at " + o.StartAt.UTC().Format(time.RFC3339Nano) + " (create before then)"
	}
	fmt.Fprintf(stderr, "%s: run %s, %d shards, %s; next: replay kubernetes create -f FILE (docs/distributed.md)\n",
		name, o.RunID, o.Shards, start)
	return ExitOK
}

// PlanShape is what the generator needs of a plan: its identity, and the shape the checks
// replay makes on every shard and the Jobs' deadlines follow.
type PlanShape struct {
	// Hash is the plan's identity (hex SHA-256); Size its size in bytes.
	Hash string
	Size int64
	// Sessions is the plan's session count, Concurrency its concurrency (0: none).
	Sessions, Concurrency int
	// Duration is how long the plan sends for: its duration, or its last planned send
	// instant; 0 when unknown.
	Duration time.Duration
}

// ReadPlanShape opens the plan at path and reads its shape.
func ReadPlanShape(path string) (PlanShape, error) {
	p, err := mmapds.Open(path, mmapds.Options{})
	if err != nil {
		return PlanShape{}, err
	}
	defer p.Close()
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
	return PlanShape{Hash: p.HashHex(), Size: p.Size(), Sessions: len(seen), Concurrency: m.Concurrency,
		Duration: time.Duration(max(last, m.DurationNs))}, nil
}

// CheckShards refuses more shards than the plan has sessions, or than its concurrency can
// be split over: every shard would refuse its part.
func (s PlanShape) CheckShards(shards int) error {
	if shards > s.Sessions {
		return fmt.Errorf("--shards %d: the plan has only %d sessions", shards, s.Sessions)
	}
	if s.Concurrency > 0 && shards > s.Concurrency {
		return fmt.Errorf("--shards %d: the plan's concurrency %d cannot be split over more shards than that", shards, s.Concurrency)
	}
	return nil
}

// CheckURL checks a server URL (--url) as replay does, and refuses a loopback host: inside
// a pod it is the pod itself, not the machine the manifests were generated on.
func CheckURL(u string) error {
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

// CheckShardFlags checks the replay flags given to every shard (after "--") for what the
// generator refuses: the flags it sets itself (OwnedFlags), named; a key that would sit in
// the manifests; and --api-key-file with keySecret (--api-key-secret). changed reports
// whether the shard flags set a flag, by its name.
func CheckShardFlags(changed func(name string) bool, keySecret bool) error {
	for _, f := range OwnedFlags {
		if changed(f) {
			return fmt.Errorf("--%s is set by replay kubernetes itself for every shard (give it to replay kubernetes, or drop it)", f)
		}
	}
	if changed("api-key") {
		return errors.New("--api-key would write the key into the manifests, readable by anyone who can read them; put it in a Secret and pass --api-key-secret NAME")
	}
	if keySecret && changed("api-key-file") {
		return errors.New("--api-key-file and --api-key-secret: give one")
	}
	return nil
}

// ShardGrace checks the replay flags given to every shard for the times they hold in seconds
// (seconds gives a flag's value, by its name: --request-timeout-seconds and the
// wait-for-model pair) and returns their grace period, grace (--benchmark-grace-period),
// which the pods' termination grace must exceed: it must be a number, not inf.
func ShardGrace(seconds func(name string) float64, grace string) (time.Duration, error) {
	for _, f := range []struct {
		name string
		zero bool
	}{{"request-timeout-seconds", false}, {"wait-for-model-timeout", true}, {"wait-for-model-interval", true}} {
		if _, err := timespan.Seconds(f.name, seconds(f.name), f.zero); err != nil {
			return 0, err
		}
	}
	g, err := replay.ParseGrace(grace)
	if err != nil {
		return 0, err
	}
	if g == replay.InfiniteGrace {
		return 0, errors.New("--benchmark-grace-period inf: a pod is killed after its termination grace, so the grace must be a number of seconds")
	}
	return g, nil
}

// Preflight is `replay kubernetes preflight`: Generate's offline checks of o (an error is
// bad input, printed by the caller), then, on w, what passed and the kubectl commands that
// check what only the cluster knows.
func Preflight(w io.Writer, o Options, now time.Time) error {
	if _, err := Generate(o); err != nil {
		return err
	}
	n := nsWords(o.Namespace)
	line := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	item := 0
	check := func(format string, a ...any) {
		item++
		line("  %d. "+format, append([]any{item}, a...)...)
	}
	line("Offline checks passed for run %s:", o.RunID)
	where := "in a ConfigMap"
	if o.PlanClaim != "" {
		where = "on claim " + o.PlanClaim
	}
	line("  plan      %s, %d bytes %s, %d shards, sends for %v", o.PlanHash, o.PlanSize, where, o.Shards, durationWords(o.PlanDuration.Round(time.Millisecond)))
	if o.StartAt.IsZero() {
		line("  start     rendezvous at %s; the shards wait up to %v for each other", o.RendezvousAddr(), o.RendezvousTimeout)
	} else {
		line("  start     fixed, t = 0 at %s (%v from now)", o.StartAt.UTC().Format(time.RFC3339Nano), o.StartAt.Sub(now).Round(time.Second))
	}
	line("  pods      %s CPU, %s each, requests = limits (Guaranteed); termination grace %v > replay's grace %v", o.CPU, o.Memory, o.TerminationGrace(), o.Grace)
	line("  deadlines replay Job %v, analysis %v; both Jobs deleted %v after they finish", o.ReplayDeadline(), o.AnalyzeDeadline(), o.TTL)
	line("  replay    flags after -- parse, none of them set by the generator")
	line("")
	line("Check on the cluster, with the context the run will use:")
	check("the results claim is ReadWriteMany and Bound (every shard and the analysis mount it):")
	line("       kubectl %sget pvc %s -o jsonpath='{.spec.accessModes} {.status.phase}{\"\\n\"}'", n, o.ResultsClaim)
	if o.PlanClaim != "" {
		line("       kubectl %sget pvc %s -o jsonpath='{.spec.accessModes} {.status.phase}{\"\\n\"}'   (ReadOnlyMany or ReadWriteMany)", n, o.PlanClaim)
	}
	check("at least %d schedulable nodes with %s CPU and %s free (one shard per node):", o.Shards, o.CPU, o.Memory)
	line("       kubectl get nodes --field-selector spec.unschedulable=false -o custom-columns=NODE:.metadata.name,CPU:.status.allocatable.cpu,MEMORY:.status.allocatable.memory")
	check("the kubelet's CPU manager policy is static there (whole CPUs to pin workers to; else pinning shares CPUs, or pass -- --no-pin):")
	line("       kubectl get --raw /api/v1/nodes/NODE/proxy/configz | grep -o '\"cpuManagerPolicy\":\"[a-z]*\"'")
	check("the nodes' clocks are synchronised (the rendezvous refuses clocks further apart than the plan's first gap; analyze flags unsynchronised ones):")
	line("       kubectl debug node/NODE -it --image=busybox -- chroot /host chronyc tracking")
	if o.APIKeySecret != "" {
		key := o.APIKeySecretKey
		if key == "" {
			key = "api-key"
		}
		check("the API key Secret exists and holds the key:")
		line("       kubectl %sget secret %s -o jsonpath='{.data.%s}' | wc -c   (not 0)", n, o.APIKeySecret, strings.ReplaceAll(key, ".", "\\."))
	}
	check("you may create and own what the run needs:")
	line("       kubectl %sauth can-i create jobs; kubectl %sauth can-i create configmaps; kubectl %sauth can-i create services; kubectl %sauth can-i patch configmaps", n, n, n, n)
	check("the image runs on the nodes and the server answers from inside the cluster:")
	line("       kubectl %srun %s-preflight --rm -i --restart=Never --image=%s --command -- /bin/replay --version", n, o.RunID, o.Image)
	models := strings.TrimSuffix(o.URLs[0], "/") + "/v1/models"
	if b, err := endpoint.ParseBase(o.URLs[0]); err == nil {
		models = b.URL("/v1/models") // as replay joins it: a base ending in /v1 is not doubled
	}
	line("       kubectl %srun %s-probe --rm -i --restart=Never --image=curlimages/curl -- curl -sf %s", n, o.RunID, models)
	if o.StartAt.IsZero() {
		check("pods of the namespace may reach each other on TCP %d (no NetworkPolicy in the way of the rendezvous):", o.RendezvousPort)
		line("       kubectl %sget networkpolicy", n)
	}
	return nil
}

// durationWords is d, or "an unknown time" (a closed loop sized by request count).
func durationWords(d time.Duration) string {
	if d <= 0 {
		return "an unknown time (a closed loop sized by count; set --active-deadline)"
	}
	return d.String()
}

// PrintCollector is `replay kubernetes collector`: it renders the collector pod of c to
// stdout and says on stderr how to take the run out through it. It returns ExitOK,
// ExitBadInput when c does not make one, or ExitFailed when writing failed.
func PrintCollector(c CollectorOptions, stdout, stderr io.Writer) int {
	const name = "replay kubernetes collector"
	p, err := Collector(c)
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, Unprefixed(err)))
		return ExitBadInput
	}
	if err := RenderOne(stdout, p); err != nil {
		fmt.Fprintln(stderr, errline.Format(name, err))
		return ExitFailed
	}
	n := nsWords(c.Namespace)
	pod := CollectorName(c.RunID)
	fmt.Fprintf(stderr, "%s: then: kubectl %swait --for=condition=Ready pod/%s && kubectl %sexec %s -- /bin/analyze collect /results/%s > %s.tar && kubectl %sdelete pod %s\n",
		name, n, pod, n, pod, c.RunID, c.RunID, n, pod)
	return ExitOK
}
