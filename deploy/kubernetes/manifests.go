// Package kubernetes generates the Kubernetes manifests of a distributed replay: one Indexed
// Job whose pods each replay one shard of a plan, meeting at a rendezvous on shard 0 (a
// headless Service gives it a stable name) and starting together once the last is ready (or
// at a fixed --start-at instant), the plan delivered to every pod and hash-checked before it
// starts, results on a shared volume under <run-id>/shard-<I>/, and an analyze Job that waits
// for the shards on that volume and then merges them, by itself. Both Jobs carry a deadline
// and a time to live, every object the run's labels, and the shard pods a termination grace
// longer than replay's own, so that a stopped shard still writes its run.json. A collector
// pod (Collector) streams a finished run out of the claim (docs/distributed.md walks through
// it).
//
// The objects are the real API types of k8s.io/api, rendered as YAML with sigs.k8s.io/yaml,
// so what is generated is what the API server will decode; Decode reads them back strictly.
//
// The package also runs the `replay kubernetes` workflow the command wires to its flags:
// Print and Preflight (the offline checks and what to check on the cluster), Create and Wait
// (kubectl driven through Kubectl, whose Path a test points at a stand-in), PrintCollector.
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
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Defaults, in one place.
const (
	// DefaultStartIn is how far after generation a fixed start instant is (--start-in):
	// time for the API server to create N pods, pull the image and copy the plan.
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
	// DefaultRendezvousPort is the port shard 0 listens on for the others.
	DefaultRendezvousPort = 7411
	// DefaultRendezvousTimeout is how long the shards wait for each other: it covers image
	// pulls and scheduling.
	DefaultRendezvousTimeout = 10 * time.Minute
	// DefaultTTL is how long finished Jobs (and, owned by the replay Job, everything else)
	// stay: results must be collected within it.
	DefaultTTL = 24 * time.Hour
	// UnknownDurationDeadline is the replay Job's default deadline when the plan's duration
	// is not known (a closed loop sized by request count).
	UnknownDurationDeadline = 24 * time.Hour
	// deadlineSlack is added to a deadline derived from the plan's duration: scheduling,
	// image pulls, a slow server's last responses.
	deadlineSlack = 10 * time.Minute
	// analysisTime bounds the analysis itself, once the shards are done.
	analysisTime = time.Hour
	// graceSlack is how long past replay's own grace a stopped shard gets to flush its logs
	// and write run.json before it is killed.
	graceSlack = 30 * time.Second
	// maxDuration bounds every duration of the manifests (a year; the API's fields are
	// 32-bit seconds in places).
	maxDuration = 365 * 24 * time.Hour
	// CollectPort is where the collector pod serves the run as a tar (Collector).
	CollectPort = 8080
	// DefaultCollectFor is how long the collector pod serves before it ends.
	DefaultCollectFor = time.Hour
)

// Labels on every object and pod, and the annotation holding the plan hash.
const (
	LabelName       = "app.kubernetes.io/name"
	LabelRunID      = "llmbench.dev/run-id"
	LabelRole       = "llmbench.dev/role"
	AnnotationPlan  = "llmbench.dev/plan-hash"
	roleReplay      = "replay"
	roleAnalyze     = "analyze"
	rolePlan        = "plan"
	roleRendezvous  = "rendezvous"
	roleCollect     = "collect"
	containerReplay = "replay"
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
	// PlanDuration is how long the plan sends for (its duration, or its last send instant);
	// 0 when unknown (a closed loop sized by request count).
	PlanDuration time.Duration
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
	// StartAt, when set, is the shards' shared t = 0 (--start-at); zero makes the shards
	// meet at a rendezvous on shard 0 instead (the default).
	StartAt time.Time
	// Now is when the manifests are generated (deadlines count from it).
	Now time.Time
	// RendezvousPort and RendezvousTimeout configure the rendezvous (0: the defaults).
	RendezvousPort    int
	RendezvousTimeout time.Duration
	// RunID names the run: object names, labels, the results folder. A DNS label.
	RunID string
	// Namespace of every object ("" leaves it to kubectl).
	Namespace string
	// ResultsClaim is the ReadWriteMany PersistentVolumeClaim for the results.
	ResultsClaim string
	// CPU and Memory are each replay pod's requests and limits: whole CPUs, a quantity.
	CPU, Memory string
	// TTL is ttlSecondsAfterFinished of both Jobs (0: DefaultTTL).
	TTL time.Duration
	// Deadline is the replay Job's activeDeadlineSeconds (0: derived from PlanDuration).
	Deadline time.Duration
	// Grace is replay's own --benchmark-grace-period; the pods' termination grace exceeds it.
	Grace time.Duration
	// APIKeySecret, when set, is the Secret holding the server's API key (APIKeySecretKey
	// in it, default "api-key"): mounted read-only into the shard pods and passed to replay
	// as --api-key-file, so that the key is never in the manifests.
	APIKeySecret, APIKeySecretKey string
	// ReplayArgs are extra replay flags (e.g. -H); the caller has refused those the
	// generator owns (OwnedFlags).
	ReplayArgs []string
}

// apiKeyDir is where the API key Secret is mounted.
const apiKeyDir = "/var/run/secrets/llmbench"

// OwnedFlags are the replay flags the generator sets itself: given after "--", they would
// defeat what the manifests guarantee (the shard identity, the shared start, the plan hash
// check, one results folder per shard, a pod log without a progress line rewritten in place).
var OwnedFlags = []string{"plan", "plan-hash", "output-dir", "shard-index", "shard-count", "start-at",
	"run-id", "rendezvous", "rendezvous-timeout", "url", "ui-type"}

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	secretKey    = regexp.MustCompile(`^[-._a-zA-Z0-9]{1,253}$`)
)

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
	if o.RendezvousPort == 0 {
		o.RendezvousPort = DefaultRendezvousPort
	}
	if o.RendezvousTimeout == 0 {
		o.RendezvousTimeout = DefaultRendezvousTimeout
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
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
	case len(o.RunID) > 40 || !dnsLabel.MatchString(o.RunID):
		return fmt.Errorf("run-id %q: want a DNS label of at most 40 characters (lower-case letters, digits, '-')", o.RunID)
	case o.PlanBytes == nil && o.PlanClaim == "":
		return errors.New("no plan: give its bytes (ConfigMap) or a plan claim")
	case len(o.PlanBytes) > ConfigMapMaxPlanBytes:
		return fmt.Errorf("plan is %d bytes, more than a ConfigMap holds (%d): copy it to a volume and pass --plan-claim NAME (and --plan-claim-path)",
			len(o.PlanBytes), ConfigMapMaxPlanBytes)
	case o.APIKeySecret != "" && (len(o.APIKeySecret) > 253 || !dnsSubdomain.MatchString(o.APIKeySecret)):
		return fmt.Errorf("api-key-secret %q: want a Secret name (a DNS subdomain)", o.APIKeySecret)
	case o.APIKeySecretKey != "" && !secretKey.MatchString(o.APIKeySecretKey):
		return fmt.Errorf("api-key-secret key %q: want a Secret key (letters, digits, '-', '_', '.')", o.APIKeySecretKey)
	case o.RendezvousPort < 1 || o.RendezvousPort > 65535:
		return fmt.Errorf("rendezvous-port %d: want 1-65535", o.RendezvousPort)
	case o.RendezvousTimeout < 0 || o.TTL < 0 || o.Deadline < 0 || o.Grace < 0:
		return errors.New("rendezvous-timeout, ttl, active-deadline and grace must not be negative")
	case o.TTL > maxDuration || o.Deadline > maxDuration || o.RendezvousTimeout > maxDuration || o.Grace > maxDuration:
		return fmt.Errorf("ttl, active-deadline, rendezvous-timeout and grace: at most %v", maxDuration)
	case !o.StartAt.IsZero() && !o.StartAt.After(o.Now):
		return fmt.Errorf("start-at %s is not in the future (now %s): every shard would refuse it",
			o.StartAt.UTC().Format(time.RFC3339Nano), o.Now.UTC().Format(time.RFC3339))
	}
	if err := CheckCPU(o.CPU); err != nil {
		return err
	}
	if err := CheckMemory(o.Memory); err != nil {
		return err
	}
	if min := o.startWait() + o.PlanDuration; o.Deadline > 0 && o.Deadline <= min {
		return fmt.Errorf("active-deadline %v ends the run before its planned end (%v: waiting for the start, then the plan's %v)", o.Deadline, min, o.PlanDuration)
	}
	if o.PlanClaim != "" && o.PlanClaimPath == "" {
		o.PlanClaimPath = planFile
	}
	return nil
}

// CheckCPU refuses a CPU quantity that is not a whole number of CPUs (at least 1): the
// static CPU manager gives exclusive CPUs only to Guaranteed pods asking for whole ones, and
// replay pins one worker per CPU.
func CheckCPU(q string) error {
	v, err := resource.ParseQuantity(q)
	if err != nil {
		return fmt.Errorf("cpu %q: not a Kubernetes quantity (want whole CPUs such as 4)", q)
	}
	if v.MilliValue() < 1000 || v.MilliValue()%1000 != 0 {
		return fmt.Errorf("cpu %q: want whole CPUs (at least 1): a fraction leaves the pod without CPUs of its own to pin workers to", q)
	}
	return nil
}

// CheckMemory refuses a memory value that is not a positive Kubernetes quantity.
func CheckMemory(q string) error {
	v, err := resource.ParseQuantity(q)
	if err != nil || v.Sign() <= 0 {
		return fmt.Errorf("memory %q: want a positive Kubernetes quantity such as 4Gi", q)
	}
	if v.Value() < 64<<20 {
		return fmt.Errorf("memory %q: less than 64Mi cannot hold replay's workers", q)
	}
	return nil
}

// startWait is how long, from generation, the shards may wait before their start.
func (o *Options) startWait() time.Duration {
	if !o.StartAt.IsZero() {
		return o.StartAt.Sub(o.Now)
	}
	return o.RendezvousTimeout
}

// ReplayDeadline is the replay Job's activeDeadlineSeconds: Options.Deadline, else the wait
// for the start plus twice the plan's duration plus 10 minutes (UnknownDurationDeadline when
// the duration is unknown), in whole seconds.
func (o *Options) ReplayDeadline() time.Duration {
	d := o.startWait() + 2*o.PlanDuration + deadlineSlack
	switch {
	case o.Deadline > 0:
		d = o.Deadline
	case o.PlanDuration <= 0:
		d = max(UnknownDurationDeadline, o.startWait()+deadlineSlack)
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// TerminationGrace is the shard pods' terminationGracePeriodSeconds: replay's grace plus the
// time to flush logs and write run.json.
func (o *Options) TerminationGrace() time.Duration { return o.Grace + graceSlack }

// shardsWait is how long the analysis waits for the shards: until the replay Job's deadline
// has passed and its pods had their termination grace.
func (o *Options) shardsWait() time.Duration {
	return o.ReplayDeadline() + o.TerminationGrace() + 2*time.Minute
}

// AnalyzeDeadline is the analyze Job's activeDeadlineSeconds.
func (o *Options) AnalyzeDeadline() time.Duration { return o.shardsWait() + analysisTime }

// Names of the run's objects.
func (o *Options) replayName() string  { return o.RunID + "-replay" }
func (o *Options) analyzeName() string { return o.RunID + "-analyze" }
func (o *Options) planName() string    { return o.RunID + "-plan" }
func (o *Options) serviceName() string { return o.RunID + "-shards" }

// RendezvousAddr is shard 0's address as the other pods reach it: its Indexed Job hostname
// under the headless Service.
func (o *Options) RendezvousAddr() string {
	return fmt.Sprintf("%s-0.%s:%d", o.replayName(), o.serviceName(), o.RendezvousPort)
}

// Generate returns the run's objects, in creation order: the rendezvous Service (unless a
// fixed StartAt is given), the plan ConfigMap (small plans), the replay Job and the analyze
// Job.
func Generate(o Options) ([]runtime.Object, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	var objs []runtime.Object
	if o.StartAt.IsZero() {
		objs = append(objs, o.service())
	}
	if o.PlanBytes != nil {
		objs = append(objs, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: o.meta(o.planName(), rolePlan),
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

// RenderOne writes one object as a YAML document.
func RenderOne(w io.Writer, obj runtime.Object) error { return Render(w, []runtime.Object{obj}) }

func (o *Options) meta(name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels(o.RunID, role)}
}

func labels(runID, role string) map[string]string {
	return map[string]string{LabelName: "llmbench", LabelRunID: runID, LabelRole: role}
}

// guaranteed is requests equal to limits: the Guaranteed QoS class needs it of every
// container, init containers included.
func guaranteed(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// service is the headless Service giving shard 0 a stable DNS name for the rendezvous
// (<run>-replay-0.<run>-shards); it publishes pods before they are ready, since shards
// meet while their containers start.
func (o *Options) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: o.meta(o.serviceName(), roleRendezvous),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{LabelRunID: o.RunID, LabelRole: roleReplay},
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{Name: "rendezvous", Protocol: corev1.ProtocolTCP, Port: int32(o.RendezvousPort),
				TargetPort: intstr.FromInt32(int32(o.RendezvousPort))}},
		},
	}
}

// planVolumes are the plan's source (ConfigMap or claim) and the pod-local copy replay reads,
// and the results claim.
func (o *Options) planVolumes() []corev1.Volume {
	src := corev1.Volume{Name: "plan-src"}
	if o.PlanBytes != nil {
		src.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.planName()}}
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

func (o *Options) apiKeyItem() string {
	if o.APIKeySecretKey == "" {
		return "api-key"
	}
	return o.APIKeySecretKey
}

// runDir is the run's results folder inside the pods.
func (o *Options) runDir() string { return resultsDir + "/" + o.RunID }

func seconds(d time.Duration) *int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return &s
}

func (o *Options) replayJob() *batchv1.Job {
	n := int32(o.Shards)
	zero := int32(0)
	mode := batchv1.IndexedCompletion
	res := guaranteed(o.CPU, o.Memory)
	args := []string{"--plan", planDir + "/" + planFile, "--plan-hash", o.PlanHash,
		"--output-dir", o.runDir() + "/shard-$(JOB_COMPLETION_INDEX)",
		"--shard-count", strconv.Itoa(o.Shards), "--run-id", o.RunID, "--ui-type", "none"}
	if o.StartAt.IsZero() {
		args = append(args, "--rendezvous", o.RendezvousAddr(), "--rendezvous-timeout", o.RendezvousTimeout.String())
	} else {
		args = append(args, "--start-at", o.StartAt.UTC().Format(time.RFC3339Nano))
	}
	for _, u := range o.URLs {
		args = append(args, "--url", u)
	}
	if o.APIKeySecret != "" {
		args = append(args, "--api-key-file", apiKeyDir+"/"+o.apiKeyItem())
	}
	args = append(args, o.ReplayArgs...)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunID: o.RunID, LabelRole: roleReplay}}
	c := corev1.Container{Name: containerReplay, Image: o.Image, Command: []string{ImageBinDir + "/replay"}, Args: args,
		Env: []corev1.EnvVar{
			{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: indexAnnotation}}},
			{Name: "LLMBENCH_SHARD_COUNT", Value: strconv.Itoa(o.Shards)},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: planDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}},
		Resources:    res}
	pod := corev1.PodSpec{
		RestartPolicy:   corev1.RestartPolicyNever,
		SecurityContext: podSecurity(),
		// Longer than replay's own grace: a stopped shard (the Job failed or hit its
		// deadline) still writes run.json before it is killed.
		TerminationGracePeriodSeconds: seconds(o.TerminationGrace()),
		// One shard per node: two shards on one node would share its CPUs and NIC.
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: hostnameKey}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: hostnameKey,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel}},
		InitContainers: []corev1.Container{o.copyPlan(res)},
		Volumes:        o.planVolumes(),
	}
	if o.StartAt.IsZero() {
		// <job>-<index>.<service>: shard 0's stable name for the rendezvous.
		pod.Subdomain = o.serviceName()
		c.Ports = []corev1.ContainerPort{{Name: "rendezvous", ContainerPort: int32(o.RendezvousPort), Protocol: corev1.ProtocolTCP}}
	}
	if o.APIKeySecret != "" {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "api-key", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: o.APIKeySecret, Items: []corev1.KeyToPath{{Key: o.apiKeyItem(), Path: o.apiKeyItem()}}, DefaultMode: ptr(int32(0o440))}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "api-key", MountPath: apiKeyDir, ReadOnly: true})
	}
	pod.Containers = []corev1.Container{c}
	meta := o.meta(o.replayName(), roleReplay)
	meta.Annotations = map[string]string{AnnotationPlan: o.PlanHash}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode: &mode, Completions: &n, Parallelism: &n,
			// No retry: a shard replayed after the start instant would send late, so a failed
			// or disrupted pod fails the run instead of being started again.
			BackoffLimit: &zero,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr(containerReplay), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}}},
			}},
			ActiveDeadlineSeconds:   seconds(o.ReplayDeadline()),
			TTLSecondsAfterFinished: ptr(int32(*seconds(o.TTL))),
			Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels(o.RunID, roleReplay)}, Spec: pod},
		},
	}
}

// analyzeJob runs by itself: its pod waits (on the results claim) until every shard's
// run.json is final, or no shard can still arrive, then merges them.
func (o *Options) analyzeJob() *batchv1.Job {
	one, zero := int32(1), int32(0)
	res := guaranteed("2", "4Gi")
	mounts := []corev1.VolumeMount{{Name: "plan", MountPath: planDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}}
	wait := corev1.Container{Name: "wait-shards", Image: o.Image, Command: []string{ImageBinDir + "/analyze"},
		Args:         []string{"wait-shards", "--shards", strconv.Itoa(o.Shards), "--timeout", o.shardsWait().String(), o.runDir()},
		VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: resultsDir, ReadOnly: true}}, Resources: res}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunID: o.RunID, LabelRole: roleReplay}}
	meta := o.meta(o.analyzeName(), roleAnalyze)
	meta.Annotations = map[string]string{AnnotationPlan: o.PlanHash}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			Completions:             &one,
			Parallelism:             &one,
			BackoffLimit:            &zero,
			ActiveDeadlineSeconds:   seconds(o.AnalyzeDeadline()),
			TTLSecondsAfterFinished: ptr(int32(*seconds(o.TTL))),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(o.RunID, roleAnalyze)},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: podSecurity(),
					// Off the shards' nodes where it can be: it waits there for the whole run.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: hostnameKey}}}}},
					InitContainers: []corev1.Container{o.copyPlan(res), wait},
					Containers: []corev1.Container{{Name: "analyze", Image: o.Image, Command: []string{ImageBinDir + "/analyze"},
						Args: []string{"--plan", planDir + "/" + planFile, o.runDir()}, VolumeMounts: mounts, Resources: res}},
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
