package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode reads a YAML stream of the kinds this package writes (ConfigMap, Service, Job, Pod)
// into their API types, strictly: an unknown or duplicated field, or another kind, is an
// error naming the document. What Render wrote, Decode reads back unchanged.
func Decode(r io.Reader) ([]runtime.Object, error) {
	yr := utilyaml.NewYAMLReader(bufio.NewReaderSize(r, 1<<20))
	var objs []runtime.Object
	for n := 1; ; n++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("kubernetes: document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 || bytes.Equal(bytes.TrimSpace(doc), []byte("---")) {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("kubernetes: document %d: %w", n, err)
		}
		var obj runtime.Object
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1 Service":
			obj = &corev1.Service{}
		case "v1 Pod":
			obj = &corev1.Pod{}
		case "batch/v1 Job":
			obj = &batchv1.Job{}
		default:
			return nil, fmt.Errorf("kubernetes: document %d: apiVersion %q kind %q is not an object of a llmbench run", n, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("kubernetes: document %d (%s): %w", n, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("kubernetes: no objects")
	}
	return objs, nil
}

// Ref names one object for kubectl: its resource ("configmap", "service", "job") and name.
type Ref struct{ Resource, Name string }

// Run is what the manifests of one run say about it: the names kubectl commands need.
type Run struct {
	RunID, Namespace      string
	Shards                int
	ReplayJob, AnalyzeJob string
	// Dependents are the objects the replay Job owns once created (ConfigMap, Service,
	// analyze Job): deleting the Job, or its time to live running out, deletes them too.
	Dependents []Ref
	// AnalyzeDeadline is the analyze Job's activeDeadlineSeconds.
	AnalyzeDeadline time.Duration
}

// ReadRun checks that objs are the manifests of one run (Generate's) and names its parts.
func ReadRun(objs []runtime.Object) (*Run, error) {
	run := &Run{}
	seen := func(m metav1.ObjectMeta) error {
		id := m.Labels[LabelRunID]
		switch {
		case id == "":
			return fmt.Errorf("kubernetes: %s has no %s label: not a llmbench run's object", m.Name, LabelRunID)
		case run.RunID == "":
			run.RunID, run.Namespace = id, m.Namespace
		case id != run.RunID || m.Namespace != run.Namespace:
			return fmt.Errorf("kubernetes: %s belongs to run %q in namespace %q, not %q in %q: one run per file", m.Name, id, m.Namespace, run.RunID, run.Namespace)
		}
		return nil
	}
	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.ConfigMap:
			if err := seen(v.ObjectMeta); err != nil {
				return nil, err
			}
			run.Dependents = append(run.Dependents, Ref{"configmap", v.Name})
		case *corev1.Service:
			if err := seen(v.ObjectMeta); err != nil {
				return nil, err
			}
			run.Dependents = append(run.Dependents, Ref{"service", v.Name})
		case *batchv1.Job:
			if err := seen(v.ObjectMeta); err != nil {
				return nil, err
			}
			switch v.Labels[LabelRole] {
			case roleReplay:
				run.ReplayJob = v.Name
				if v.Spec.Completions != nil {
					run.Shards = int(*v.Spec.Completions)
				}
			case roleAnalyze:
				run.AnalyzeJob = v.Name
				run.Dependents = append(run.Dependents, Ref{"job", v.Name})
				if d := v.Spec.ActiveDeadlineSeconds; d != nil {
					run.AnalyzeDeadline = time.Duration(*d) * time.Second
				}
			}
		default:
			return nil, fmt.Errorf("kubernetes: %T is not part of a run's manifests", o)
		}
	}
	if run.ReplayJob == "" || run.AnalyzeJob == "" {
		return nil, errors.New("kubernetes: the manifests lack the replay or the analyze Job (replay kubernetes writes both)")
	}
	return run, nil
}
