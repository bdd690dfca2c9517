package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/deploy/kubernetes"
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
	return kubernetes.Print(*o, stdout, stderr)
}

// kubeRunFlags are the flags of the subcommands that act on a generated file.
func kubeRunFlags(name string) (*pflag.FlagSet, *string, *string) {
	fs := NewFlagSet(name) // its output discarded: Parse's usage prints the help once
	file := fs.StringP("filename", "f", "", "the manifests replay kubernetes wrote")
	path := fs.String("kubectl", "kubectl", "the kubectl to run (its context and KUBECONFIG as usual)")
	return fs, file, path
}

// runKubeCreate is `replay kubernetes create -f FILE` (kubernetes.Create).
func runKubeCreate(args []string, stderr io.Writer) int {
	const name = "replay kubernetes create"
	fs, file, path := kubeRunFlags(name)
	if code, ok := Parse(name, fs, args, stderr, Synopsis(stderr, "usage: "+name+" -f FILE", fs)); !ok {
		return code
	}
	return kubernetes.Create(kubernetes.CreateOptions{File: *file, Kubectl: *path, Stderr: stderr})
}

// runKubeWait is `replay kubernetes wait -f FILE` (kubernetes.Wait).
func runKubeWait(args []string, stdout, stderr io.Writer, sleep func(time.Duration)) int {
	const name = "replay kubernetes wait"
	fs, file, path := kubeRunFlags(name)
	timeout := fs.Duration("timeout", 0, "give up after this long (default: the analysis Job's deadline + 5m)")
	interval := fs.Duration("interval", 5*time.Second, "time between looks")
	if code, ok := Parse(name, fs, args, stderr, Synopsis(stderr, "usage: "+name+" -f FILE", fs)); !ok {
		return code
	}
	return kubernetes.Wait(kubernetes.WaitOptions{File: *file, Kubectl: *path, Timeout: *timeout, Interval: *interval,
		Sleep: sleep, Stdout: stdout, Stderr: stderr})
}

// kubeOptions parses the generator's flags into kubernetes.Options and checks everything
// that can be checked offline. A nil result comes with the exit status (0: --help).
func kubeOptions(name string, args []string, stderr io.Writer, now time.Time) (*kubernetes.Options, int) {
	fs := NewFlagSet(name)
	fs.SetOutput(stderr)
	var st kubernetes.Settings
	fs.StringVar(&st.Plan, "plan", "", "plan file to replay (hashed here; delivered in a ConfigMap when small)")
	fs.IntVar(&st.Shards, "shards", 0, "number of shards, one pod per node")
	fs.StringArrayVarP(&st.URLs, "url", "u", nil, "server base URL as the pods reach it (repeatable)")
	fs.StringVar(&st.Image, "image", "", "container image holding replay and analyze in "+kubernetes.ImageBinDir+" (deploy/container/Containerfile)")
	fs.IntVar(&st.RendezvousPort, "rendezvous-port", kubernetes.DefaultRendezvousPort, "port shard 0 listens on for the others (the default start: all shards meet there and start together)")
	fs.DurationVar(&st.RendezvousTimeout, "rendezvous-timeout", kubernetes.DefaultRendezvousTimeout, "how long the shards wait for each other (image pulls, scheduling) before they give up, nothing sent")
	fs.DurationVar(&st.StartIn, "start-in", 0, "a fixed t = 0 this long after now instead of the rendezvous")
	fs.StringVar(&st.StartAt, "start-at", "", "a fixed t = 0 as RFC 3339 instead of the rendezvous")
	fs.StringVar(&st.RunID, "run-id", "", "run name: objects, labels and the results folder (default llmbench-<plan hash prefix>-<unix time>)")
	fs.StringVar(&st.Namespace, "namespace", "", "namespace of every object (default: kubectl's)")
	fs.StringVar(&st.ResultsClaim, "results-claim", kubernetes.DefaultResultsClaim, "ReadWriteMany PersistentVolumeClaim the shards write <run-id>/shard-<I>/ to")
	fs.StringVar(&st.PlanClaim, "plan-claim", "", "PersistentVolumeClaim holding the plan, for plans too large for a ConfigMap")
	fs.StringVar(&st.PlanClaimPath, "plan-claim-path", "", "the plan's path inside --plan-claim (default plan.llmplan)")
	fs.StringVar(&st.CPU, "cpu", kubernetes.DefaultCPU, "whole CPUs per replay pod (requests = limits: Guaranteed QoS, CPUs to pin to)")
	fs.StringVar(&st.Memory, "memory", kubernetes.DefaultMemory, "memory per replay pod (requests = limits), a Kubernetes quantity")
	fs.DurationVar(&st.TTL, "ttl", kubernetes.DefaultTTL, "the Jobs, and everything they own, are deleted this long after they finish: collect the results before")
	fs.StringVar(&st.APIKeySecret, "api-key-secret", "", "Secret holding the server's API key, NAME or NAME:KEY (key default api-key): mounted into the shard pods and passed as --api-key-file")
	fs.DurationVar(&st.Deadline, "active-deadline", 0, "the replay Job's activeDeadlineSeconds (default: the wait for the start + 2 × the plan's duration + 10m; 24h when the duration is unknown)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s --plan FILE --shards N --url URL --image IMAGE [flags] [-- REPLAY_FLAGS...]\n\n%s", name, fs.FlagUsages())
	}
	if code, ok := Parse(name, fs, args, stderr, nil); !ok { // --help: fs.Usage has printed it
		return nil, code
	}
	st.RendezvousPortSet, st.RendezvousTimeoutSet = Changed(fs, "rendezvous-port"), Changed(fs, "rendezvous-timeout")
	st.StartInSet, st.DeadlineSet = Changed(fs, "start-in"), Changed(fs, "active-deadline")
	st.ReplayArgs, st.CheckReplayArgs = fs.Args(), checkShardArgs
	o, err := st.Options(now)
	if err != nil {
		return nil, BadInput(stderr, name)(err)
	}
	return o, 0
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
	if err := kubernetes.CheckShardFlags(func(name string) bool { return Changed(fs, name) }, keySecret); err != nil {
		return 0, fmt.Errorf(after+"%w", err)
	}
	if err := rf.CheckUI(); err != nil {
		return 0, fmt.Errorf(after+"%w", err)
	}
	g, err := kubernetes.ShardGrace(func(name string) float64 {
		v, _ := fs.GetFloat64(name)
		return v
	}, *rf.grace)
	if err != nil {
		return 0, fmt.Errorf(after+"%w", err)
	}
	return g, nil
}

// runKubePreflight is `replay kubernetes preflight` (kubernetes.Preflight) over the
// generator's flags.
func runKubePreflight(args []string, stdout, stderr io.Writer, now time.Time) int {
	const name = "replay kubernetes preflight"
	o, code := kubeOptions(name, args, stderr, now)
	if o == nil {
		return code
	}
	if err := kubernetes.Preflight(stdout, *o, now); err != nil {
		fmt.Fprintln(stderr, OneLine(name, kubernetes.Unprefixed(err)))
		return 2
	}
	return 0
}

// runKubeCollector is `replay kubernetes collector` (kubernetes.PrintCollector): the pod
// that serves a finished run's folder as a tar.
func runKubeCollector(args []string, stdout, stderr io.Writer) int {
	const name = "replay kubernetes collector"
	fs := NewFlagSet(name)
	runID := fs.String("run-id", "", "the run whose folder to serve")
	image := fs.String("image", "", "the run's container image")
	ns := fs.String("namespace", "", "the run's namespace (default: kubectl's)")
	results := fs.String("results-claim", kubernetes.DefaultResultsClaim, "the run's results claim")
	serveFor := fs.Duration("collect-for", kubernetes.DefaultCollectFor, "the pod ends after this long")
	usage := Synopsis(stderr, "usage: "+name+" --run-id R --image IMAGE [flags] | kubectl create -f -", fs)
	if code, ok := Parse(name, fs, args, stderr, usage); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return BadInput(stderr, name)(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return kubernetes.PrintCollector(kubernetes.CollectorOptions{RunID: *runID, Namespace: *ns, Image: *image, ResultsClaim: *results, For: *serveFor}, stdout, stderr)
}

// RunCopyPlan is `replay copy-plan --plan-hash H SRC DST` (replay.CopyPlan): what a
// deployment's init container runs. Exit status 0, or 2.
func RunCopyPlan(args []string, stderr io.Writer) int {
	fs := NewFlagSet("replay copy-plan")
	fs.SetOutput(stderr)
	hash := fs.String("plan-hash", "", "the plan's expected identity (hex SHA-256)")
	if code, ok := Parse("replay copy-plan", fs, args, stderr, nil); !ok {
		return code
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
