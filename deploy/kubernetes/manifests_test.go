package kubernetes

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var testNow = time.Date(2026, 12, 1, 13, 58, 0, 0, time.UTC)

func testOptions() Options {
	return Options{PlanHash: testHash, PlanBytes: []byte("plan bytes"), PlanSize: 10, Shards: 3, PlanDuration: 20 * time.Minute,
		URLs: []string{"http://vllm.default.svc:8000"}, Image: "registry.example/llmbench:1", Now: testNow,
		RunID: "r1", Namespace: "bench", Grace: 30 * time.Second}
}

// decoded is what the rendered YAML decodes to, strictly, as the real API types.
type decoded struct {
	objs       []runtime.Object
	configMaps []*corev1.ConfigMap
	services   []*corev1.Service
	jobs       map[string]*batchv1.Job // by role label
}

func decodeStrict(t *testing.T, b []byte) (*decoded, error) {
	t.Helper()
	objs, err := Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	d := &decoded{objs: objs, jobs: map[string]*batchv1.Job{}}
	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.ConfigMap:
			d.configMaps = append(d.configMaps, v)
		case *corev1.Service:
			d.services = append(d.services, v)
		case *batchv1.Job:
			d.jobs[v.Labels[LabelRole]] = v
		default:
			t.Fatalf("unexpected object %T", o)
		}
	}
	return d, nil
}

func render(t *testing.T, o Options) []byte {
	t.Helper()
	objs, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, objs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func metaOf(o runtime.Object) metav1.ObjectMeta {
	return *o.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}

// checkInvariants holds the properties the distributed run relies on (docs/distributed.md).
func checkInvariants(t *testing.T, o Options, d *decoded) {
	t.Helper()
	rj, aj := d.jobs["replay"], d.jobs["analyze"]
	if rj == nil || aj == nil {
		t.Fatalf("want a replay and an analyze Job, got %v", d.jobs)
	}
	// Every object carries the run's labels; cleanup selects by them.
	for _, obj := range d.objs {
		m := metaOf(obj)
		if m.Labels[LabelRunID] != o.RunID || m.Labels[LabelName] != "llmbench" || m.Labels[LabelRole] == "" || m.Namespace != o.Namespace {
			t.Errorf("%s: labels %v namespace %q", m.Name, m.Labels, m.Namespace)
		}
	}
	for _, j := range []*batchv1.Job{rj, aj} {
		if j.Spec.TTLSecondsAfterFinished == nil || *j.Spec.TTLSecondsAfterFinished <= 0 {
			t.Errorf("%s: no ttlSecondsAfterFinished", j.Name)
		}
		if j.Spec.ActiveDeadlineSeconds == nil || *j.Spec.ActiveDeadlineSeconds <= 0 {
			t.Errorf("%s: no activeDeadlineSeconds", j.Name)
		}
		if j.Spec.Template.Labels[LabelRunID] != o.RunID {
			t.Errorf("%s: pod template labels %v", j.Name, j.Spec.Template.Labels)
		}
	}
	s := rj.Spec
	n := int32(o.Shards)
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Error("replay Job is not Indexed")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != n || *s.Parallelism != n {
		t.Errorf("completions %v parallelism %v, want both %d", s.Completions, s.Parallelism, n)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v, want 0: a retried shard would replay late", s.BackoffLimit)
	}
	// The deadline leaves room for the wait before the start and the plan's duration.
	wait := o.RendezvousTimeout
	if wait == 0 {
		wait = DefaultRendezvousTimeout
	}
	if !o.StartAt.IsZero() {
		wait = o.StartAt.Sub(testNow)
	}
	if d := time.Duration(*s.ActiveDeadlineSeconds) * time.Second; d <= wait+o.PlanDuration {
		t.Errorf("replay deadline %v does not cover the wait %v and the plan's %v", d, wait, o.PlanDuration)
	}
	if s.PodFailurePolicy == nil {
		t.Fatal("no podFailurePolicy")
	}
	disruption, exitCodes := false, false
	for _, r := range s.PodFailurePolicy.Rules {
		if r.Action != batchv1.PodFailurePolicyActionFailJob {
			t.Errorf("podFailurePolicy rule %+v: action %s would let a shard run again or be ignored", r, r.Action)
		}
		for _, c := range r.OnPodConditions {
			disruption = disruption || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue)
		}
		if e := r.OnExitCodes; e != nil && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && slices.Equal(e.Values, []int32{0}) {
			exitCodes = true
		}
	}
	if !disruption || !exitCodes {
		t.Errorf("podFailurePolicy must fail the Job on disruption (%v) and on any non-zero exit (%v)", disruption, exitCodes)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s, want Never", pod.RestartPolicy)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= o.Grace {
		t.Errorf("terminationGracePeriodSeconds %v does not exceed replay's grace %v: a stopped shard would be killed before writing run.json", g, o.Grace)
	}
	podLabels := s.Template.Labels
	matches := func(sel *metav1.LabelSelector) bool {
		if sel == nil || len(sel.MatchLabels) == 0 {
			return false
		}
		for k, v := range sel.MatchLabels {
			if podLabels[k] != v {
				return false
			}
		}
		return true
	}
	oneNode := false
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			oneNode = oneNode || (term.TopologyKey == hostnameKey && matches(term.LabelSelector))
		}
	}
	spread := false
	for _, c := range pod.TopologySpreadConstraints {
		spread = spread || (c.TopologyKey == hostnameKey && c.MaxSkew == 1 && c.WhenUnsatisfiable == corev1.DoNotSchedule && matches(c.LabelSelector))
	}
	if !oneNode || !spread {
		t.Errorf("one shard per node: anti-affinity %v, topology spread %v", oneNode, spread)
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			if req.IsZero() || req.Cmp(lim) != 0 {
				t.Errorf("container %s: %s request %v limit %v: not Guaranteed", c.Name, r, req.String(), lim.String())
			}
		}
		if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.MilliValue()%1000 != 0 {
			t.Errorf("container %s: CPU %s is not whole CPUs: the static CPU manager pins only whole ones", c.Name, cpu.String())
		}
	}
	if len(pod.InitContainers) != 1 || !slices.Contains(pod.InitContainers[0].Command, o.PlanHash) {
		t.Errorf("no init container checking the plan hash: %+v", pod.InitContainers)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--plan-hash " + o.PlanHash, "--shard-count 3", "--run-id r1",
		"--output-dir /results/r1/shard-$(JOB_COMPLETION_INDEX)", "--url " + o.URLs[0]} {
		if !strings.Contains(args, want) {
			t.Errorf("replay args %q lack %q", args, want)
		}
	}
	if o.StartAt.IsZero() {
		// The rendezvous: shard 0's stable name through the headless Service.
		if !strings.Contains(args, "--rendezvous r1-replay-0.r1-shards:7411 --rendezvous-timeout 10m0s") || strings.Contains(args, "--start-at") {
			t.Errorf("replay args %q: want the rendezvous at shard 0's name", args)
		}
		if pod.Subdomain != "r1-shards" || len(d.services) != 1 {
			t.Fatalf("subdomain %q, %d services", pod.Subdomain, len(d.services))
		}
		svc := d.services[0]
		if svc.Name != "r1-shards" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses ||
			!matches(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 7411 {
			t.Errorf("rendezvous service %+v", svc.Spec)
		}
	} else if !strings.Contains(args, "--start-at "+o.StartAt.UTC().Format(time.RFC3339Nano)) || strings.Contains(args, "--rendezvous") || len(d.services) != 0 {
		t.Errorf("replay args %q, %d services: want the fixed start instant only", args, len(d.services))
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env["JOB_COMPLETION_INDEX"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != indexAnnotation {
		t.Errorf("JOB_COMPLETION_INDEX %+v: want the completion-index annotation", e)
	}
	if env["LLMBENCH_SHARD_COUNT"].Value != "3" {
		t.Errorf("LLMBENCH_SHARD_COUNT %+v", env["LLMBENCH_SHARD_COUNT"])
	}
	// The analysis runs by itself: not suspended, it waits for the shards on the claim for
	// as long as they can run, then analyses the run's folder.
	if aj.Spec.Suspend != nil && *aj.Spec.Suspend {
		t.Error("analyze Job is suspended: someone would have to resume it")
	}
	ap := aj.Spec.Template.Spec
	if len(ap.InitContainers) != 2 || ap.InitContainers[1].Name != "wait-shards" {
		t.Fatalf("analyze init containers %+v: want copy-plan then wait-shards", ap.InitContainers)
	}
	wa := ap.InitContainers[1].Args
	if len(wa) != 6 || wa[0] != "wait-shards" || wa[2] != "3" || wa[5] != "/results/r1" {
		t.Fatalf("wait-shards args %q", wa)
	}
	waitFor, err := time.ParseDuration(wa[4])
	if err != nil || waitFor <= time.Duration(*s.ActiveDeadlineSeconds)*time.Second {
		t.Errorf("wait-shards --timeout %s (%v) is not past the replay Job's deadline %ds", wa[4], err, *s.ActiveDeadlineSeconds)
	}
	if time.Duration(*aj.Spec.ActiveDeadlineSeconds)*time.Second <= waitFor {
		t.Errorf("analyze deadline %ds would end it while it waits (%v)", *aj.Spec.ActiveDeadlineSeconds, waitFor)
	}
	if a := ap.Containers[0].Args; !slices.Contains(a, "/results/r1") {
		t.Errorf("analyze args %q do not name the run's results folder", a)
	}
}

// The generated manifests decode strictly into the API types and keep the invariants, with
// the rendezvous or a fixed start, for a plan in a ConfigMap and for one on a volume.
func TestManifestsDecodeStrictly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Options)
		cms    int
	}{
		{"configmap plan, rendezvous", func(*Options) {}, 1},
		{"plan on a volume", func(o *Options) { o.PlanBytes, o.PlanClaim, o.PlanSize = nil, "plans", 5<<30 }, 0},
		{"fixed start", func(o *Options) { o.StartAt = testNow.Add(2 * time.Minute) }, 1},
		{"closed loop of unknown duration", func(o *Options) { o.PlanDuration = 0 }, 1},
		{"long grace", func(o *Options) { o.Grace = 10 * time.Minute }, 1},
		{"api key secret", func(o *Options) { o.APIKeySecret = "llm-key" }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			tc.change(&o)
			d, err := decodeStrict(t, render(t, o))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, o, d)
			if len(d.configMaps) != tc.cms {
				t.Fatalf("%d ConfigMaps, want %d", len(d.configMaps), tc.cms)
			}
			if tc.cms == 1 && string(d.configMaps[0].BinaryData[planFile]) != "plan bytes" {
				t.Errorf("ConfigMap holds %q", d.configMaps[0].BinaryData[planFile])
			}
			src := d.jobs["replay"].Spec.Template.Spec.Volumes[0]
			if (src.ConfigMap != nil) != (tc.cms == 1) || (src.PersistentVolumeClaim != nil) == (tc.cms == 1) {
				t.Errorf("plan source volume %+v", src)
			}
			if o.APIKeySecret != "" {
				// The key is mounted from the Secret, never written into the manifests.
				pod := d.jobs["replay"].Spec.Template.Spec
				v := pod.Volumes[len(pod.Volumes)-1]
				c := pod.Containers[0]
				if v.Secret == nil || v.Secret.SecretName != "llm-key" || c.VolumeMounts[len(c.VolumeMounts)-1].MountPath != apiKeyDir ||
					!strings.Contains(strings.Join(c.Args, " "), "--api-key-file "+apiKeyDir+"/api-key") {
					t.Errorf("api key: volume %+v, args %q", v, c.Args)
				}
			}
			run, err := ReadRun(d.objs)
			if err != nil {
				t.Fatal(err)
			}
			if run.RunID != "r1" || run.Namespace != "bench" || run.ReplayJob != "r1-replay" || run.AnalyzeJob != "r1-analyze" || run.Shards != 3 {
				t.Errorf("run %+v", run)
			}
			// Everything but the replay Job is owned by it once created.
			if len(run.Dependents) != len(d.objs)-1 {
				t.Errorf("dependents %v of %d objects", run.Dependents, len(d.objs))
			}
		})
	}
}

// The rendered manifests of a fixed input, held by a golden file (go test -update).
func TestManifestsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    func() Options
	}{
		{"rendezvous", testOptions},
		{"start-at", func() Options { o := testOptions(); o.StartAt = testNow.Add(90 * time.Second); return o }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.o())
			path := filepath.Join("testdata", "manifests-"+tc.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("manifests differ from %s (go test -update to accept):\n%s", path, got)
			}
		})
	}
}

// A field the API types do not have is refused: the decoding is strict, so the invariant
// test cannot pass over a misspelt field; so is a duplicated one and a foreign kind.
func TestManifestUnknownFieldRejected(t *testing.T) {
	b := render(t, testOptions())
	for _, tc := range []struct {
		old, new, want string
	}{
		{"  completionMode: Indexed\n", "  completionMode: Indexed\n  completionsMode: Indexed\n", "completionsMode"},
		{"  completionMode: Indexed\n", "  completionMode: Indexed\n  completionMode: NonIndexed\n", "completionMode"},
		{"kind: Service\n", "kind: Deployment\n", "is not an object of a llmbench run"},
	} {
		bad := bytes.Replace(b, []byte(tc.old), []byte(tc.new), 1)
		if bytes.Equal(bad, b) {
			t.Fatalf("no %q to change", tc.old)
		}
		if _, err := decodeStrict(t, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q accepted: %v", tc.new, err)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	for _, tc := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.PlanBytes = make([]byte, ConfigMapMaxPlanBytes+1) }, "--plan-claim"},
		{func(o *Options) { o.RunID = "Bad_ID" }, "run-id"},
		{func(o *Options) { o.Shards = 0 }, "shards 0"},
		{func(o *Options) { o.CPU = "lots" }, `cpu "lots": not a Kubernetes quantity`},
		{func(o *Options) { o.CPU = "500m" }, `cpu "500m": want whole CPUs`},
		{func(o *Options) { o.CPU = "2.5" }, `cpu "2.5": want whole CPUs`},
		{func(o *Options) { o.CPU = "0" }, `cpu "0": want whole CPUs`},
		{func(o *Options) { o.Memory = "4GB!" }, `memory "4GB!": want a positive Kubernetes quantity`},
		{func(o *Options) { o.Memory = "1Mi" }, "less than 64Mi"},
		{func(o *Options) { o.URLs = nil }, "no server URL"},
		{func(o *Options) { o.StartAt = testNow.Add(-time.Second) }, "is not in the future"},
		{func(o *Options) { o.Deadline = 15 * time.Minute }, "active-deadline 15m0s ends the run before its planned end (30m0s"},
		{func(o *Options) { o.TTL = 2 * 365 * 24 * time.Hour }, "at most 8760h"},
	} {
		o := testOptions()
		tc.change(&o)
		if _, err := Generate(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// The collector pod decodes strictly, mounts the claim read-only and serves the run's folder.
func TestCollector(t *testing.T) {
	p, err := Collector(CollectorOptions{RunID: "r1", Namespace: "bench", Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, []runtime.Object{p}); err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	got := objs[0].(*corev1.Pod)
	c := got.Spec.Containers[0]
	if got.Name != "r1-collect" || got.Labels[LabelRunID] != "r1" || got.Spec.ActiveDeadlineSeconds == nil ||
		strings.Join(c.Args, " ") != "collect --serve :8080 --serve-for 1h0m0s /results/r1" ||
		!got.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly || c.ReadinessProbe == nil {
		t.Errorf("collector %+v", got)
	}
	if _, err := Collector(CollectorOptions{RunID: "r1", Image: "img", For: time.Second}); err == nil {
		t.Error("a collector serving 1s accepted")
	}
}

// Decode reads files a user hands to replay kubernetes create/wait: no input panics it.
func FuzzDecode(f *testing.F) {
	o := testOptions()
	objs, _ := Generate(o)
	var b bytes.Buffer
	Render(&b, objs)
	f.Add(b.Bytes())
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n---\n---\n"))
	f.Add([]byte("kind: [\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		objs, err := Decode(bytes.NewReader(in))
		if err != nil {
			return
		}
		ReadRun(objs) // may refuse; must not panic
	})
}
