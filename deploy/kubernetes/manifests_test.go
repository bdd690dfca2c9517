package kubernetes

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const testHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func testOptions() Options {
	return Options{PlanHash: testHash, PlanBytes: []byte("plan bytes"), PlanSize: 10, Shards: 3,
		URLs: []string{"http://vllm.default.svc:8000"}, Image: "registry.example/llmbench:1",
		StartAt: time.Date(2026, 12, 1, 14, 0, 0, 250e6, time.UTC), RunID: "r1", Namespace: "bench"}
}

// decoded is what the rendered YAML decodes to, strictly, as the real API types.
type decoded struct {
	configMaps []*corev1.ConfigMap
	jobs       map[string]*batchv1.Job // by role label
}

// decodeStrict splits the YAML stream and decodes each document into its kind's type,
// refusing unknown fields.
func decodeStrict(t *testing.T, b []byte) (*decoded, error) {
	t.Helper()
	d := &decoded{jobs: map[string]*batchv1.Job{}}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, err
		}
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(doc), &cm); err != nil {
				return nil, err
			}
			d.configMaps = append(d.configMaps, &cm)
		case "batch/v1 Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
				return nil, err
			}
			d.jobs[j.Labels[LabelRole]] = &j
		default:
			t.Fatalf("unexpected object %s %s", tm.APIVersion, tm.Kind)
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

// checkInvariants holds the properties the distributed run relies on (docs/distributed.md).
func checkInvariants(t *testing.T, o Options, d *decoded) {
	t.Helper()
	rj, aj := d.jobs["replay"], d.jobs["analyze"]
	if rj == nil || aj == nil {
		t.Fatalf("want a replay and an analyze Job, got %v", d.jobs)
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
	for _, want := range []string{"--plan-hash " + o.PlanHash, "--shard-count 3", "--start-at 2026-12-01T14:00:00.25Z", "--run-id r1",
		"--output-dir /results/r1/shard-$(JOB_COMPLETION_INDEX)", "--url " + o.URLs[0]} {
		if !strings.Contains(args, want) {
			t.Errorf("replay args %q lack %q", args, want)
		}
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
	if aj.Spec.Suspend == nil || !*aj.Spec.Suspend {
		t.Error("analyze Job is not created suspended: it would analyse before the shards ran")
	}
	if a := aj.Spec.Template.Spec.Containers[0].Args; !slices.Contains(a, "/results/r1") {
		t.Errorf("analyze args %q do not name the run's results folder", a)
	}
}

// The generated manifests decode strictly into the API types and keep the invariants, for a
// plan in a ConfigMap and for one on a volume.
func TestManifestsDecodeStrictly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Options)
		cms    int
	}{
		{"configmap plan", func(*Options) {}, 1},
		{"plan on a volume", func(o *Options) { o.PlanBytes, o.PlanClaim, o.PlanSize = nil, "plans", 5<<30 }, 0},
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
		})
	}
}

// A field the API types do not have is refused: the decoding is strict, so the invariant
// test cannot pass over a misspelt field.
func TestManifestUnknownFieldRejected(t *testing.T) {
	b := render(t, testOptions())
	bad := bytes.Replace(b, []byte("  completionMode: Indexed\n"), []byte("  completionMode: Indexed\n  completionsMode: Indexed\n"), 1)
	if bytes.Equal(bad, b) {
		t.Fatal("no completionMode line to change")
	}
	if _, err := decodeStrict(t, bad); err == nil || !strings.Contains(err.Error(), "completionsMode") {
		t.Fatalf("unknown field accepted: %v", err)
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
		{func(o *Options) { o.CPU = "lots" }, "resource \"lots\""},
		{func(o *Options) { o.URLs = nil }, "no server URL"},
	} {
		o := testOptions()
		tc.change(&o)
		if _, err := Generate(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
