package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeKubectl writes a kubectl stand-in that logs its arguments and answers from a script.
func fakeKubectl(t *testing.T, body string) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	path = filepath.Join(dir, "kubectl")
	script := "#!/bin/bash\necho \"$*\" >> " + log + "\n" + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// generated writes the manifests of testOptions (run r1 in namespace bench) to a file.
func generated(t *testing.T) string {
	t.Helper()
	objs, err := Generate(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Render(&out, objs); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "r1.yaml")
	if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// create makes every other object a dependent of the replay Job, through kubectl.
func TestKubernetesCreate(t *testing.T) {
	f := generated(t)
	kc, log := fakeKubectl(t, `case "$3" in
create) echo "job.batch/r1-replay created";;
get) printf 'uid-1234';;
esac`)
	var errb bytes.Buffer
	if code := Create(CreateOptions{File: f, Kubectl: kc, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"--namespace bench create -f " + f,
		"--namespace bench get job r1-replay -o jsonpath={.metadata.uid}",
	}
	owner := `{"metadata":{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"r1-replay","uid":"uid-1234"}]}}`
	for _, d := range []string{"service r1-shards", "configmap r1-plan", "job r1-analyze"} {
		want = append(want, "--namespace bench patch "+d+" --type=merge -p "+owner)
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("kubectl calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(errb.String(), "3 objects owned by job/r1-replay") {
		t.Errorf("stderr %q", errb.String())
	}
	// kubectl failing to create: exit 1, its message.
	kc, _ = fakeKubectl(t, `echo 'Error from server (AlreadyExists): jobs.batch "r1-replay" already exists' >&2; exit 1`)
	errb.Reset()
	if code := Create(CreateOptions{File: f, Kubectl: kc, Stderr: &errb}); code != ExitFailed || !strings.Contains(errb.String(), "AlreadyExists") {
		t.Errorf("exit %d: %q", code, errb.String())
	}
	// Not our manifests: bad input.
	other := filepath.Join(t.TempDir(), "x.yaml")
	os.WriteFile(other, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"), 0o644)
	if code := Create(CreateOptions{File: other, Kubectl: kc, Stderr: &errb}); code != ExitBadInput {
		t.Errorf("a Deployment: exit %d", code)
	}
}

// wait returns on the analysis' success or failure, whichever comes.
func TestKubernetesWait(t *testing.T) {
	f := generated(t)
	const running = `{"status":{"active":2,"ready":2}}`
	const replayDone = `{"status":{"succeeded":2,"conditions":[{"type":"Complete","status":"True"}]}}`
	const replayFailed = `{"status":{"succeeded":1,"failed":1,"conditions":[{"type":"Failed","status":"True","reason":"PodFailurePolicy","message":"Container replay for pod bench/r1-replay-1 failed with exit code 1"}]}}`
	const analyzing = `{"status":{"active":1}}`
	const analysisDone = `{"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}`
	const analysisFailed = `{"status":{"failed":1,"conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}]}}`
	for _, tc := range []struct {
		name             string
		replay, analysis []string // answers per look
		code             int
		want             string
	}{
		{"success", []string{running, replayDone, replayDone}, []string{analyzing, analyzing, analysisDone}, 0, "run r1 analysed"},
		{"a shard failed", []string{replayFailed, replayFailed}, []string{analyzing, analysisFailed}, 1, "the analysis FAILED (BackoffLimitExceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, a := range tc.replay {
				os.WriteFile(filepath.Join(dir, "r"+string(rune('0'+i))), []byte(a), 0o644)
			}
			for i, a := range tc.analysis {
				os.WriteFile(filepath.Join(dir, "a"+string(rune('0'+i))), []byte(a), 0o644)
			}
			kc, _ := fakeKubectl(t, `d=`+dir+`
case "$5" in
r1-replay) n=$(cat $d/nr 2>/dev/null || echo 0); cat $d/r$n; echo $((n+1)) > $d/nr;;
r1-analyze) n=$(cat $d/na 2>/dev/null || echo 0); cat $d/a$n; echo $((n+1)) > $d/na;;
esac`)
			var out, errb bytes.Buffer
			code := Wait(WaitOptions{File: f, Kubectl: kc, Interval: time.Second, Sleep: func(time.Duration) {}, Stdout: &out, Stderr: &errb})
			if code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, %q %q; want %d with %q", code, out.String(), errb.String(), tc.code, tc.want)
			}
			if tc.code == 1 && !strings.Contains(out.String(), "replay Job failed (PodFailurePolicy") {
				t.Errorf("the shards' failure is not reported: %q", out.String())
			}
		})
	}
	// A kubectl that keeps failing ends the wait.
	kc, _ := fakeKubectl(t, `echo 'The connection to the server was refused' >&2; exit 1`)
	var errb bytes.Buffer
	if code := Wait(WaitOptions{File: f, Kubectl: kc, Interval: time.Second, Sleep: func(time.Duration) {}, Stdout: &bytes.Buffer{}, Stderr: &errb}); code != ExitFailed || !strings.Contains(errb.String(), "connection to the server was refused") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
