package cli

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

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/llmbench/llmbench/deploy/kubernetes"
)

// kubectl runs kubectl in a run's namespace.
type kubectl struct {
	path string
	ns   string
}

// run runs kubectl ARGS and returns its stdout; an error carries its stderr's last line.
func (k kubectl) run(args ...string) ([]byte, error) {
	full := args
	if k.ns != "" {
		full = append([]string{"--namespace", k.ns}, args...)
	}
	cmd := exec.Command(k.path, full...)
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

// kubeRunFlags are the flags of the subcommands that act on a generated file.
func kubeRunFlags(name string, stderr io.Writer) (*pflag.FlagSet, *string, *string) {
	fs := NewFlagSet(name)
	fs.SetOutput(stderr)
	file := fs.StringP("filename", "f", "", "the manifests replay kubernetes wrote")
	path := fs.String("kubectl", "kubectl", "the kubectl to run (its context and KUBECONFIG as usual)")
	return fs, file, path
}

// readRunFile reads and checks a generated manifests file.
func readRunFile(path string) (*kubernetes.Run, error) {
	if path == "" {
		return nil, errors.New("-f FILE is required (the manifests replay kubernetes wrote)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	objs, err := kubernetes.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, kubeErr(err))
	}
	run, err := kubernetes.ReadRun(objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, kubeErr(err))
	}
	return run, nil
}

// runKubeCreate is `replay kubernetes create -f FILE`: kubectl create of the manifests (not
// apply: its last-applied annotation cannot hold a plan over ~190 KiB), then every other
// object is made a dependent of the replay Job, so that deleting the Job, or its time to
// live running out, deletes everything.
func runKubeCreate(args []string, stderr io.Writer) int {
	const name = "replay kubernetes create"
	fs, file, path := kubeRunFlags(name, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: %s -f FILE\n\n%s", name, fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(stderr, OneLine(name, ParseError(fs, err)))
		return 2
	}
	run, err := readRunFile(*file)
	if err != nil {
		fmt.Fprintln(stderr, OneLine(name, err))
		return 2
	}
	k := kubectl{path: *path, ns: run.Namespace}
	out, err := k.run("create", "-f", *file)
	stderr.Write(out)
	if err != nil {
		fmt.Fprintln(stderr, OneLine(name, err))
		return 1
	}
	cleanup := fmt.Sprintf("kubectl %sdelete jobs,configmaps,services,pods -l %s=%s", nsWords(run.Namespace), kubernetes.LabelRunID, run.RunID)
	uid, err := k.run("get", "job", run.ReplayJob, "-o", "jsonpath={.metadata.uid}")
	if err == nil && len(bytes.TrimSpace(uid)) == 0 {
		err = errors.New("kubectl get job: no uid")
	}
	if err != nil {
		fmt.Fprintln(stderr, OneLine(name, fmt.Errorf("created, but the objects are not owned by the Job (%w): clean up with %s", err, cleanup)))
		return 1
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []map[string]any{{
		"apiVersion": "batch/v1", "kind": "Job", "name": run.ReplayJob, "uid": string(bytes.TrimSpace(uid))}}}})
	for _, d := range run.Dependents {
		if _, err := k.run("patch", d.Resource, d.Name, "--type=merge", "-p", string(patch)); err != nil {
			fmt.Fprintln(stderr, OneLine(name, fmt.Errorf("created, but %s/%s is not owned by the Job (%w): clean up with %s", d.Resource, d.Name, err, cleanup)))
			return 1
		}
	}
	fmt.Fprintf(stderr, "%s: run %s created; %d objects owned by job/%s (deleted with it); next: replay kubernetes wait -f %s\n",
		name, run.RunID, len(run.Dependents), run.ReplayJob, *file)
	return 0
}

// kubeErr is an error of package kubernetes without its "kubernetes: " prefix, for a line
// that names the command instead.
func kubeErr(err error) error {
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

// jobState is what wait reports of a Job.
type jobState struct {
	active, ready, succeeded, failed int32
	done                             string // "", "Complete" or "Failed"
	reason                           string // the terminal condition's reason and message
}

func readJob(b []byte) (jobState, error) {
	var j batchv1.Job
	if err := json.Unmarshal(b, &j); err != nil {
		return jobState{}, fmt.Errorf("kubectl get job: %w", err)
	}
	s := jobState{active: j.Status.Active, succeeded: j.Status.Succeeded, failed: j.Status.Failed}
	if j.Status.Ready != nil {
		s.ready = *j.Status.Ready
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			s.done = string(c.Type)
			s.reason = strings.TrimSpace(c.Reason + ": " + c.Message)
			s.reason = strings.Trim(s.reason, ": ")
		}
	}
	return s, nil
}

// runKubeWait is `replay kubernetes wait -f FILE`: it follows the run until its analysis
// ends, saying what the shards and the analysis do as it changes, and returns 0 when the
// analysis completed (every gate held, no shard missing), 1 when it failed, or when the
// wait timed out. kubectl wait cannot wait for "complete or failed" at once.
func runKubeWait(args []string, stdout, stderr io.Writer, sleep func(time.Duration)) int {
	const name = "replay kubernetes wait"
	fs, file, path := kubeRunFlags(name, stderr)
	timeout := fs.Duration("timeout", 0, "give up after this long (default: the analysis Job's deadline + 5m)")
	interval := fs.Duration("interval", 5*time.Second, "time between looks")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: %s -f FILE\n\n%s", name, fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(stderr, OneLine(name, ParseError(fs, err)))
		return 2
	}
	run, err := readRunFile(*file)
	if err == nil && (*interval <= 0 || *timeout < 0) {
		err = errors.New("--interval must be positive and --timeout not negative")
	}
	if err != nil {
		fmt.Fprintln(stderr, OneLine(name, err))
		return 2
	}
	if *timeout == 0 {
		*timeout = run.AnalyzeDeadline + 5*time.Minute
	}
	k := kubectl{path: *path, ns: run.Namespace}
	logs := fmt.Sprintf("kubectl %slogs job/%s -c analyze", nsWords(run.Namespace), run.AnalyzeJob)
	start := time.Now()
	var last string
	errs := 0
	for {
		line, ana, err := waitLook(k, run)
		if err != nil {
			if errs++; errs >= 5 {
				fmt.Fprintln(stderr, OneLine(name, err))
				return 1
			}
		} else {
			errs = 0
			if line != last {
				fmt.Fprintf(stdout, "%s %s\n", time.Now().UTC().Format("15:04:05"), line)
				last = line
			}
			switch ana.done {
			case "Complete":
				fmt.Fprintf(stdout, "%s: run %s analysed; the report: %s\n", name, run.RunID, logs)
				return 0
			case "Failed":
				fmt.Fprintf(stdout, "%s: run %s: the analysis FAILED (%s): a gate failed, shards are missing or failed; see %s\n", name, run.RunID, ana.reason, logs)
				return 1
			}
		}
		if time.Since(start) >= *timeout {
			fmt.Fprintln(stderr, OneLine(name, fmt.Errorf("run %s: the analysis did not end within %v", run.RunID, *timeout)))
			return 1
		}
		sleep(*interval)
	}
}

// waitLook reads both Jobs and says where the run is.
func waitLook(k kubectl, run *kubernetes.Run) (string, jobState, error) {
	rb, err := k.run("get", "job", run.ReplayJob, "-o", "json")
	if err != nil {
		return "", jobState{}, err
	}
	r, err := readJob(rb)
	if err != nil {
		return "", jobState{}, err
	}
	ab, err := k.run("get", "job", run.AnalyzeJob, "-o", "json")
	if err != nil {
		return "", jobState{}, err
	}
	a, err := readJob(ab)
	if err != nil {
		return "", jobState{}, err
	}
	shards := fmt.Sprintf("shards: %d of %d succeeded, %d running (%d ready), %d failed", r.succeeded, run.Shards, r.active, r.ready, r.failed)
	switch r.done {
	case "Complete":
		shards = fmt.Sprintf("shards: all %d succeeded", run.Shards)
	case "Failed":
		shards += "; replay Job failed (" + r.reason + ")"
	}
	analysis := "analysis: waiting for the shards"
	switch {
	case a.done == "Complete":
		analysis = "analysis: complete"
	case a.done == "Failed":
		analysis = "analysis: failed (" + a.reason + ")"
	case r.done != "":
		analysis = "analysis: running"
	}
	return shards + "; " + analysis, a, nil
}
