package kubernetes

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// CollectorOptions describe the collector pod of a run: a pod mounting the results claim
// that serves the finished run directory as a tar (analyze collect --serve), so that a
// FROM-scratch image, which has no tar for `kubectl cp`, can still hand it over, through
// `kubectl exec POD -- /bin/analyze collect DIR > run.tar` or a port-forward.
type CollectorOptions struct {
	RunID, Namespace, Image, ResultsClaim string
	// For is how long the pod serves before it ends (0: DefaultCollectFor).
	For time.Duration
}

// CollectorName is the collector pod's name for a run.
func CollectorName(runID string) string { return runID + "-collect" }

// Collector returns the collector pod.
func Collector(c CollectorOptions) (*corev1.Pod, error) {
	if c.ResultsClaim == "" {
		c.ResultsClaim = DefaultResultsClaim
	}
	if c.For == 0 {
		c.For = DefaultCollectFor
	}
	switch {
	case len(c.RunID) > 40 || !dnsLabel.MatchString(c.RunID):
		return nil, fmt.Errorf("kubernetes: run-id %q: want a DNS label of at most 40 characters (lower-case letters, digits, '-')", c.RunID)
	case c.Image == "":
		return nil, fmt.Errorf("kubernetes: image: no container image given")
	case c.For < time.Minute || c.For > maxDuration:
		return nil, fmt.Errorf("kubernetes: collect-for %v: want between 1m and %v", c.For, maxDuration)
	}
	dir := resultsDir + "/" + c.RunID
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: CollectorName(c.RunID), Namespace: c.Namespace, Labels: labels(c.RunID, roleCollect)},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			SecurityContext:       podSecurity(),
			ActiveDeadlineSeconds: seconds(c.For + time.Minute),
			Containers: []corev1.Container{{Name: "collect", Image: c.Image, Command: []string{ImageBinDir + "/analyze"},
				Args:  []string{"collect", "--serve", ":" + strconv.Itoa(CollectPort), "--serve-for", c.For.String(), dir},
				Ports: []corev1.ContainerPort{{Name: "collect", ContainerPort: CollectPort, Protocol: corev1.ProtocolTCP}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(CollectPort)}},
					PeriodSeconds: 2},
				VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: resultsDir, ReadOnly: true}},
				Resources:    guaranteed("1", "512Mi")}},
			Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.ResultsClaim, ReadOnly: true}}}},
		},
	}, nil
}
