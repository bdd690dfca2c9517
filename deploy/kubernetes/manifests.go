// Package kubernetes generates the Kubernetes manifests of a distributed replay: one Indexed
// Job whose pods each replay one shard of a plan against one shared start instant, the plan
// delivered to every pod and hash-checked before it starts, results on a shared volume under
// <run-id>/shard-<I>/, and a suspended analyze Job to resume once the shards are done
// (deploy/kubernetes/README.md walks through it; docs/distributed.md explains the shards).
//
// The objects are the real API types of k8s.io/api, rendered as YAML with sigs.k8s.io/yaml,
// so what is generated is what the API server will decode.
package kubernetes

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Defaults, in one place.
const (
	// DefaultStartIn is how far after generation the shards' t = 0 is: time for the API
	// server to create N pods, pull the image and copy the plan.
	DefaultStartIn = 90 * time.Second
	// DefaultResultsClaim is the PersistentVolumeClaim (ReadWriteMany) results go to.
	DefaultResultsClaim = "llmbench-results"
	// DefaultCPU and DefaultMemory are each replay pod's requests, equal to its limits
	// (Guaranteed QoS: with the static CPU manager the pod gets whole CPUs to pin to).
	DefaultCPU    = "4"
	DefaultMemory = "4Gi"
	// ConfigMapMaxPlanBytes is the largest plan delivered in a ConfigMap (the API limits an
	// object to 1 MiB); a larger one must come from a volume (Options.PlanClaim).
	ConfigMapMaxPlanBytes = 768 << 10
	// ImageBinDir is where the container image (deploy/container/Containerfile) holds the
	// binaries.
	ImageBinDir = "/bin"
)

// Labels on every object and pod.
const (
	LabelName  = "app.kubernetes.io/name"
	LabelRunID = "llmbench.dev/run-id"
	LabelRole  = "llmbench.dev/role"
)

// Mount paths inside the pods.
const (
	planSrcDir  = "/plan-src"
	planDir     = "/plan"
	resultsDir  = "/results"
	planFile    = "plan.llmplan"
	hostnameKey = "kubernetes.io/hostname"
	// indexAnnotation is where the Job controller puts a pod's completion index.
	indexAnnotation = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// Options describe one distributed run.
type Options struct {
	// PlanHash is the plan's identity (hex SHA-256); PlanSize its size in bytes.
	PlanHash string
	PlanSize int64
	// PlanBytes is the plan file, delivered in a ConfigMap; nil when it comes from PlanClaim.
	PlanBytes []byte
	// PlanClaim is a PersistentVolumeClaim holding the plan at PlanClaimPath (for plans
	// over ConfigMapMaxPlanBytes); an init container copies it to the pod and checks it.
	PlanClaim, PlanClaimPath string
	// Shards is the number of replay pods, one per node.
	Shards int
	// URLs are the server base URLs.
	URLs []string
	// Image is the container image holding replay and analyze in ImageBinDir.
	Image string
	// StartAt is the shards' shared t = 0.
	StartAt time.Time
	// RunID names the run: object names, labels, the results folder. A DNS label.
	RunID string
	// Namespace of every object ("" leaves it to kubectl).
	Namespace string
	// ResultsClaim is the ReadWriteMany PersistentVolumeClaim for the results.
	ResultsClaim string
	// CPU and Memory are each replay pod's requests and limits.
	CPU, Memory string
	// ReplayArgs are extra replay flags (e.g. --api-key-file, -H).
	ReplayArgs []string
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// check fills defaults and refuses what cannot make a valid run.
func (o *Options) check() error {
	if o.ResultsClaim == "" {
		o.ResultsClaim = DefaultResultsClaim
	}
	if o.CPU == "" {
		o.CPU = DefaultCPU
	}
	if o.Memory == "" {
		o.Memory = DefaultMemory
	}
	switch {
	case len(o.PlanHash) != 64:
		return fmt.Errorf("plan hash %q: want 64 hex digits", o.PlanHash)
	case o.Shards < 1:
		return fmt.Errorf("shards %d: want at least 1", o.Shards)
	case len(o.URLs) == 0:
		return errors.New("url: no server URL given")
	case o.Image == "":
		return errors.New("image: no container image given")
	case o.StartAt.IsZero():
		return errors.New("no start instant")
	case len(o.RunID) > 40 || !dnsLabel.MatchString(o.RunID):
		return fmt.Errorf("run-id %q: want a DNS label of at most 40 characters (lower-case letters, digits, '-')", o.RunID)
	case o.PlanBytes == nil && o.PlanClaim == "":
		return errors.New("no plan: give its bytes (ConfigMap) or a plan claim")
	case len(o.PlanBytes) > ConfigMapMaxPlanBytes:
		return fmt.Errorf("plan is %d bytes, more than a ConfigMap holds (%d): copy it to a volume and pass --plan-claim NAME (and --plan-claim-path)",
			len(o.PlanBytes), ConfigMapMaxPlanBytes)
	}
	for _, q := range []string{o.CPU, o.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("resource %q: %w", q, err)
		}
	}
	if o.PlanClaim != "" && o.PlanClaimPath == "" {
		o.PlanClaimPath = planFile
	}
	return nil
}

// Generate returns the run's objects, in apply order: the plan ConfigMap (small plans), the
// replay Job, and the analyze Job (suspended: resume it when the replay Job completed).
func Generate(o Options) ([]runtime.Object, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	var objs []runtime.Object
	if o.PlanBytes != nil {
		objs = append(objs, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: o.meta(o.RunID+"-plan", "plan"),
			BinaryData: map[string][]byte{planFile: o.PlanBytes},
		})
	}
	objs = append(objs, o.replayJob(), o.analyzeJob())
	return objs, nil
}

// Render writes objs as YAML documents separated by "---".
func Render(w io.Writer, objs []runtime.Object) error {
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("kubernetes: render object %d: %w", i, err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (o *Options) meta(name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels(role)}
}

func (o *Options) labels(role string) map[string]string {
	return map[string]string{LabelName: "llmbench", LabelRunID: o.RunID, LabelRole: role}
}

// guaranteed is requests equal to limits: the Guaranteed QoS class needs it of every
// container, init containers included.
func guaranteed(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// planVolumes are the plan's source (ConfigMap or claim) and the pod-local copy replay reads.
func (o *Options) planVolumes() []corev1.Volume {
	src := corev1.Volume{Name: "plan-src"}
	if o.PlanBytes != nil {
		src.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.RunID + "-plan"}}
	} else {
		src.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.PlanClaim, ReadOnly: true}
	}
	size := resource.NewQuantity(o.PlanSize+64<<20, resource.BinarySI)
	return []corev1.Volume{src,
		{Name: "plan", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: size}}},
		{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.ResultsClaim}}},
	}
}

// copyPlan is the init container that copies the plan into the pod and checks its hash:
// replay starts only from the plan the run was generated for.
func (o *Options) copyPlan(res corev1.ResourceRequirements) corev1.Container {
	src := planSrcDir + "/" + planFile
	if o.PlanBytes == nil {
		src = planSrcDir + "/" + o.PlanClaimPath
	}
	return corev1.Container{Name: "copy-plan", Image: o.Image,
		Command:      []string{ImageBinDir + "/replay", "copy-plan", "--plan-hash", o.PlanHash, src, planDir + "/" + planFile},
		VolumeMounts: []corev1.VolumeMount{{Name: "plan-src", MountPath: planSrcDir, ReadOnly: true}, {Name: "plan", MountPath: planDir}},
		Resources:    res}
}

func (o *Options) replayJob() *batchv1.Job {
	n := int32(o.Shards)
	zero := int32(0)
	mode := batchv1.IndexedCompletion
	res := guaranteed(o.CPU, o.Memory)
	args := []string{"--plan", planDir + "/" + planFile, "--plan-hash", o.PlanHash,
		"--output-dir", resultsDir + "/" + o.RunID + "/shard-$(JOB_COMPLETION_INDEX)",
		"--shard-count", strconv.Itoa(o.Shards),
		"--start-at", o.StartAt.UTC().Format(time.RFC3339Nano), "--run-id", o.RunID, "--ui-type", "none"}
	for _, u := range o.URLs {
		args = append(args, "--url", u)
	}
	args = append(args, o.ReplayArgs...)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunID: o.RunID, LabelRole: "replay"}}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.RunID+"-replay", "replay"),
		Spec: batchv1.JobSpec{
			CompletionMode: &mode, Completions: &n, Parallelism: &n,
			// No retry: a shard replayed after the start instant would send late, so a failed
			// or disrupted pod fails the run instead of being started again.
			BackoffLimit: &zero,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr("replay"), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels("replay")},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: podSecurity(),
					// One shard per node: two shards on one node would share its CPUs and NIC.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: hostnameKey}}}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: hostnameKey,
						WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel}},
					InitContainers: []corev1.Container{o.copyPlan(res)},
					Containers: []corev1.Container{{Name: "replay", Image: o.Image, Command: []string{ImageBinDir + "/replay"}, Args: args,
						Env: []corev1.EnvVar{
							{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: indexAnnotation}}},
							{Name: "LLMBENCH_SHARD_COUNT", Value: strconv.Itoa(o.Shards)},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: planDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}},
						Resources:    res}},
					Volumes: o.planVolumes(),
				},
			},
		},
	}
}

func (o *Options) analyzeJob() *batchv1.Job {
	one, zero := int32(1), int32(0)
	res := guaranteed("2", "4Gi")
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.RunID+"-analyze", "analyze"),
		Spec: batchv1.JobSpec{
			// Created suspended: resume it once the replay Job completed (README).
			Suspend:      ptr(true),
			Completions:  &one,
			Parallelism:  &one,
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels("analyze")},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: podSecurity(),
					InitContainers:  []corev1.Container{o.copyPlan(res)},
					Containers: []corev1.Container{{Name: "analyze", Image: o.Image, Command: []string{ImageBinDir + "/analyze"},
						Args:         []string{"--plan", planDir + "/" + planFile, resultsDir + "/" + o.RunID},
						VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: planDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}},
						Resources:    res}},
					Volumes: o.planVolumes(),
				},
			},
		},
	}
}

// podSecurity runs the pods as the image's user (65534, nobody), with the volumes' files
// group-owned by it so that the results claim is writable.
func podSecurity() *corev1.PodSecurityContext {
	id := int64(65534)
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: &id, RunAsGroup: &id, FSGroup: &id}
}

func ptr[T any](v T) *T { return &v }
