package kubernetes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/llmbench/llmbench/internal/errline"
)

// Exit statuses of the workflows below (Create, Wait, Print, PrintCollector).
const (
	ExitOK       = 0 // done: created, analysed, printed
	ExitFailed   = 1 // the run (Wait) or kubectl failed, or writing failed
	ExitBadInput = 2 // bad input, said in one line on stderr
)

// Kubectl runs kubectl in a run's namespace.
type Kubectl struct {
	// Path is the kubectl to run (its context and KUBECONFIG as usual); a test's stand-in
	// goes here.
	Path string
	// Namespace is the run's namespace; "" leaves it to kubectl.
	Namespace string
}

// Run runs kubectl ARGS and returns its stdout; an error carries its stderr's last line.
func (k Kubectl) Run(args ...string) ([]byte, error) {
	full := args
	if k.Namespace != "" {
		full = append([]string{"--namespace", k.Namespace}, args...)
	}
	cmd := exec.Command(k.Path, full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("kubectl %s: %v: %s", args[0], err, msg)
	}
	return out.Bytes(), nil
}

// ReadRunFile reads and checks a manifests file Generate wrote (Render printed): its errors
// name the file and carry no "kubernetes: " prefix.
func ReadRunFile(path string) (*Run, error) {
	if path == "" {
		return nil, errors.New("-f FILE is required (the manifests replay kubernetes wrote)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	objs, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, Unprefixed(err))
	}
	run, err := ReadRun(objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, Unprefixed(err))
	}
	return run, nil
}

// Unprefixed is an error of this package without its "kubernetes: " prefix, for a line that
// names the command instead.
func Unprefixed(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), "kubernetes: "); ok {
		return errors.New(msg)
	}
	return err
}

func nsWords(ns string) string {
	if ns == "" {
		return ""
	}
	return "-n " + ns + " "
}

// CreateOptions are one `replay kubernetes create`.
type CreateOptions struct {
	// File is the manifests file replay kubernetes wrote.
	File string
	// Kubectl is the kubectl to run.
	Kubectl string
	// Stderr takes kubectl's output, the outcome and the failures, one line each.
	Stderr io.Writer
}

// Create is `replay kubernetes create -f FILE`: kubectl create of the manifests (not apply:
// its last-applied annotation cannot hold a plan over ~190 KiB), then every other object is
// made a dependent of the replay Job, so that deleting the Job, or its time to live running
// out, deletes everything. It returns ExitOK, ExitFailed when kubectl failed (the line says
// how to clean up what was created), or ExitBadInput when the file is not a run's.
func Create(o CreateOptions) int {
	const name = "replay kubernetes create"
	stderr := o.Stderr
	run, err := ReadRunFile(o.File)
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, err))
		return ExitBadInput
	}
	k := Kubectl{Path: o.Kubectl, Namespace: run.Namespace}
	out, err := k.Run("create", "-f", o.File)
	stderr.Write(out)
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, err))
		return ExitFailed
	}
	cleanup := fmt.Sprintf("kubectl %sdelete jobs,configmaps,services,pods -l %s=%s", nsWords(run.Namespace), LabelRunID, run.RunID)
	uid, err := k.Run("get", "job", run.ReplayJob, "-o", "jsonpath={.metadata.uid}")
	if err == nil && len(bytes.TrimSpace(uid)) == 0 {
		err = errors.New("kubectl get job: no uid")
	}
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, fmt.Errorf("created, but the objects are not owned by the Job (%w): clean up with %s", err, cleanup)))
		return ExitFailed
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []map[string]any{{
		"apiVersion": "batch/v1", "kind": "Job", "name": run.ReplayJob, "uid": string(bytes.TrimSpace(uid))}}}})
	for _, d := range run.Dependents {
		if _, err := k.Run("patch", d.Resource, d.Name, "--type=merge", "-p", string(patch)); err != nil {
			fmt.Fprintln(stderr, errline.Format(name, fmt.Errorf("created, but %s/%s is not owned by the Job (%w): clean up with %s", d.Resource, d.Name, err, cleanup)))
			return ExitFailed
		}
	}
	fmt.Fprintf(stderr, "%s: run %s created; %d objects owned by job/%s (deleted with it); next: replay kubernetes wait -f %s\n",
		name, run.RunID, len(run.Dependents), run.ReplayJob, o.File)
	return ExitOK
}

// JobState is what Wait reports of a Job.
type JobState struct {
	Active, Ready, Succeeded, Failed int32
	// Done is "", "Complete" or "Failed".
	Done string
	// Reason is the terminal condition's reason and message.
	Reason string
}

// ReadJob reads a Job's state from its `kubectl get job -o json`.
func ReadJob(b []byte) (JobState, error) {
	var j batchv1.Job
	if err := json.Unmarshal(b, &j); err != nil {
		return JobState{}, fmt.Errorf("kubectl get job: %w", err)
	}
	s := JobState{Active: j.Status.Active, Succeeded: j.Status.Succeeded, Failed: j.Status.Failed}
	if j.Status.Ready != nil {
		s.Ready = *j.Status.Ready
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			s.Done = string(c.Type)
			s.Reason = strings.TrimSpace(c.Reason + ": " + c.Message)
			s.Reason = strings.Trim(s.Reason, ": ")
		}
	}
	return s, nil
}

// WaitOptions are one `replay kubernetes wait`.
type WaitOptions struct {
	// File is the manifests file replay kubernetes wrote.
	File string
	// Kubectl is the kubectl to run.
	Kubectl string
	// Timeout is how long to wait before giving up (0: the analysis Job's deadline + 5m);
	// Interval the time between looks (positive).
	Timeout, Interval time.Duration
	// Sleep waits between looks (time.Sleep; a test's stand-in returns at once).
	Sleep func(time.Duration)
	// Stdout takes the run's progress, one line per change, and the outcome; Stderr the
	// failures, one line each.
	Stdout, Stderr io.Writer
}

// Wait is `replay kubernetes wait -f FILE`: it follows the run until its analysis ends,
// saying what the shards and the analysis do as it changes, and returns ExitOK when the
// analysis completed (every gate held, no shard missing), ExitFailed when it failed, when
// kubectl failed five looks in a row or the wait timed out, ExitBadInput on bad input.
// kubectl wait cannot wait for "complete or failed" at once.
func Wait(o WaitOptions) int {
	const name = "replay kubernetes wait"
	stdout, stderr := o.Stdout, o.Stderr
	run, err := ReadRunFile(o.File)
	if err == nil && (o.Interval <= 0 || o.Timeout < 0) {
		err = errors.New("--interval must be positive and --timeout not negative")
	}
	if err != nil {
		fmt.Fprintln(stderr, errline.Format(name, err))
		return ExitBadInput
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = run.AnalyzeDeadline + 5*time.Minute
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	k := Kubectl{Path: o.Kubectl, Namespace: run.Namespace}
	logs := fmt.Sprintf("kubectl %slogs job/%s -c analyze", nsWords(run.Namespace), run.AnalyzeJob)
	start := time.Now()
	var last string
	errs := 0
	for {
		line, ana, err := waitLook(k, run)
		if err != nil {
			if errs++; errs >= 5 {
				fmt.Fprintln(stderr, errline.Format(name, err))
				return ExitFailed
			}
		} else {
			errs = 0
			if line != last {
				fmt.Fprintf(stdout, "%s %s\n", time.Now().UTC().Format("15:04:05"), line)
				last = line
			}
			switch ana.Done {
			case "Complete":
				fmt.Fprintf(stdout, "%s: run %s analysed; the report: %s\n", name, run.RunID, logs)
				return ExitOK
			case "Failed":
				fmt.Fprintf(stdout, "%s: run %s: the analysis FAILED (%s): a gate failed, shards are missing or failed; see %s\n", name, run.RunID, ana.Reason, logs)
				return ExitFailed
			}
		}
		if time.Since(start) >= timeout {
			fmt.Fprintln(stderr, errline.Format(name, fmt.Errorf("run %s: the analysis did not end within %v", run.RunID, timeout)))
			return ExitFailed
		}
		sleep(o.Interval)
	}
}

// waitLook reads both Jobs and says where the run is.
func waitLook(k Kubectl, run *Run) (string, JobState, error) {
	rb, err := k.Run("get", "job", run.ReplayJob, "-o", "json")
	if err != nil {
		return "", JobState{}, err
	}
	r, err := ReadJob(rb)
	if err != nil {
		return "", JobState{}, err
	}
	ab, err := k.Run("get", "job", run.AnalyzeJob, "-o", "json")
	if err != nil {
		return "", JobState{}, err
	}
	a, err := ReadJob(ab)
	if err != nil {
		return "", JobState{}, err
	}
	shards := fmt.Sprintf("shards: %d of %d succeeded, %d running (%d ready), %d failed", r.Succeeded, run.Shards, r.Active, r.Ready, r.Failed)
	switch r.Done {
	case "Complete":
		shards = fmt.Sprintf("shards: all %d succeeded", run.Shards)
	case "Failed":
		shards += "; replay Job failed (" + r.Reason + ")"
	}
	analysis := "analysis: waiting for the shards"
	switch {
	case a.Done == "Complete":
		analysis = "analysis: complete"
	case a.Done == "Failed":
		analysis = "analysis: failed (" + a.Reason + ")"
	case r.Done != "":
		analysis = "analysis: running"
	}
	return shards + "; " + analysis, a, nil
}
