package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/llmbench/llmbench/deploy/kubernetes"
	"github.com/llmbench/llmbench/mmapds"
)

func writeTestPlan(t *testing.T, sessions, concurrency int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.plan")
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sessions; i++ {
		if err := w.Add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Concurrency: concurrency}); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeOpenPlan is an open-loop plan of sessions single-turn requests, one every gap.
func writeOpenPlan(t *testing.T, sessions int, gap time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "open.plan")
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sessions; i++ {
		if err := w.Add(mmapds.Record{SendOffsetNs: int64(i) * int64(gap), DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST"}); err != nil {
		t.Fatal(err)
	}
	return path
}

var kubeNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// decodeOut decodes what replay kubernetes printed, strictly, and returns the replay Job.
func decodeOut(t *testing.T, out []byte) *batchv1.Job {
	t.Helper()
	objs, err := kubernetes.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("strict decode: %v\n%s", err, out)
	}
	for _, o := range objs {
		if j, ok := o.(*batchv1.Job); ok && j.Labels[kubernetes.LabelRole] == "replay" {
			return j
		}
	}
	t.Fatal("no replay Job")
	return nil
}

func TestRunKubernetes(t *testing.T) {
	plan := writeTestPlan(t, 6, 4)
	open := writeOpenPlan(t, 600, time.Second) // sends for 9m59s
	base := []string{"--plan", plan, "--shards", "3", "--url", "http://s:8000", "--image", "img", "--run-id", "r9"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the replay container's args (code 0), or the one stderr line
	}{
		{"rendezvous by default", with(), 0, "--rendezvous r9-replay-0.r9-shards:7411 --rendezvous-timeout 10m0s"},
		{"fixed start", with("--start-in", "1m", "--", "--no-pin"), 0, "--start-at 2026-12-01T12:01:00Z --url http://s:8000 --no-pin"},
		{"rendezvous flags", with("--rendezvous-port", "9000", "--rendezvous-timeout", "30m"), 0, "--rendezvous r9-replay-0.r9-shards:9000 --rendezvous-timeout 30m0s"},
		{"replay flags pass", with("--", "-H", "X-Team: a", "--benchmark-grace-period", "90", "--workers", "2"), 0, "-H X-Team: a --benchmark-grace-period 90 --workers 2"},
		{"no plan", []string{"--shards", "3", "--url", "u", "--image", "i"}, 2, "--plan is required"},
		{"too many shards", []string{"--plan", plan, "--shards", "5", "--url", "u", "--image", "i"}, 2, "concurrency 4 cannot be split"},
		{"no image", []string{"--plan", plan, "--shards", "2", "--url", "u"}, 2, "--image is required"},
		{"bad run id", with("--run-id", "Bad"), 2, "run-id \"Bad\""},
		{"fraction of a CPU", with("--cpu", "500m"), 2, `--cpu "500m": want whole CPUs`},
		{"fractional CPUs", with("--cpu", "1.5"), 2, `--cpu "1.5": want whole CPUs`},
		{"not a CPU quantity", with("--cpu", "four"), 2, `--cpu "four": not a Kubernetes quantity`},
		{"not a memory quantity", with("--memory", "4 gigs"), 2, `--memory "4 gigs": want a positive Kubernetes quantity`},
		{"start-at in the past", with("--start-at", "2026-12-01T11:59:00Z"), 2, "--start-at 2026-12-01T11:59:00Z is in the past"},
		{"start-at and start-in", with("--start-at", "2026-12-01T13:00:00Z", "--start-in", "1m"), 2, "--start-in and --start-at: give one"},
		{"rendezvous flag with a fixed start", with("--start-in", "1m", "--rendezvous-timeout", "1m"), 2, "go with the rendezvous"},
		{"loopback URL", with("--url", "http://127.0.0.1:8000"), 2, "a loopback address inside a pod is the pod itself"},
		{"localhost URL", with("--url", "localhost:8000"), 2, "loopback"},
		{"unknown replay flag", with("--", "--no-such-flag"), 2, "replay flags after --: unknown flag: --no-such-flag"},
		{"stray argument", with("--", "extra"), 2, `replay flags after --: unexpected argument "extra"`},
		{"infinite grace", with("--", "--benchmark-grace-period", "inf"), 2, "--benchmark-grace-period inf: a pod is killed"},
		{"api key secret", with("--api-key-secret", "llm-key:token"), 0, "--url http://s:8000 --api-key-file /var/run/secrets/llmbench/token"},
		{"api key in the manifests", with("--", "--api-key", "sk-123"), 2, "--api-key would write the key into the manifests"},
		{"api key file and secret", with("--api-key-secret", "k", "--", "--api-key-file", "/x"), 2, "--api-key-file and --api-key-secret: give one"},
		{"bad secret name", with("--api-key-secret", "Not_A_Name"), 2, `api-key-secret "Not_A_Name"`},
		{"start more than a day ahead", with("--start-in", "25h"), 2, "is 25h0m0s from now, more than the 24h0m0s"},
		{"start-at years ahead", with("--start-at", "2099-12-01T00:00:00Z"), 2, "--start-in/--start-at 2099-12-01T00:00:00Z is 26662 days from now"},
		{"misspelt replay flag", with("--", "--requst-timeout-seconds", "5"), 2, "replay flags after --: unknown flag: --requst-timeout-seconds (did you mean --request-timeout-seconds?)"},
		{"bad replay value", with("--", "--request-timeout-seconds", "nan"), 2, "replay flags after --: --request-timeout-seconds NaN"},
		{"negative grace", with("--", "--benchmark-grace-period", "-1"), 2, "--benchmark-grace-period"},
		{"ui type", with("--", "--ui-type", "simple"), 2, "--ui-type is set by replay kubernetes itself"},
		{"deadline too short", []string{"--plan", open, "--shards", "2", "--url", "http://s", "--image", "i", "--active-deadline", "15m"}, 2,
			"active-deadline 15m0s ends the run before its planned end (19m59s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := RunKubernetes(tc.args, &out, &errb, kubeNow)
			got := errb.String()
			if code == 0 {
				got = strings.Join(decodeOut(t, out.Bytes()).Spec.Template.Spec.Containers[0].Args, " ")
			} else if strings.Count(got, "\n") != 1 || out.Len() > 0 {
				t.Errorf("stderr is not one line, or something was printed: %q / %q", got, out.String())
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, %q; want %d with %q", code, got, tc.code, tc.want)
			}
		})
	}
}

// Every flag the generator owns is refused after --, named, in each spelling.
func TestRunKubernetesOwnedFlags(t *testing.T) {
	plan := writeTestPlan(t, 6, 4)
	for _, f := range kubernetes.OwnedFlags {
		for _, spelling := range [][]string{{"--" + f, "x"}, {"--" + f + "=x"}} {
			if f == "shard-index" || f == "shard-count" {
				spelling = []string{strings.Replace(strings.Join(spelling, "="), "=x", "=1", 1)}
			}
			if f == "rendezvous-timeout" {
				spelling = []string{"--rendezvous-timeout=1m"}
			}
			args := append([]string{"--plan", plan, "--shards", "2", "--url", "http://s", "--image", "i", "--"}, spelling...)
			var out, errb bytes.Buffer
			code := RunKubernetes(args, &out, &errb, kubeNow)
			if code != 2 || !strings.Contains(errb.String(), "--"+f+" is set by replay kubernetes itself") {
				t.Errorf("%q: exit %d, %q", spelling, code, errb.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := RunKubernetes([]string{"--plan", plan, "--shards", "2", "--url", "http://s", "--image", "i", "--", "-u", "http://x"}, &out, &errb, kubeNow); code != 2 ||
		!strings.Contains(errb.String(), "--url is set by replay kubernetes itself") {
		t.Errorf("-u: exit %d, %q", code, errb.String())
	}
}

// The pods' termination grace exceeds replay's own, as given after --; the deadline follows
// the plan's duration.
func TestRunKubernetesGraceAndDeadline(t *testing.T) {
	open := writeOpenPlan(t, 600, time.Second)
	var out, errb bytes.Buffer
	if code := RunKubernetes([]string{"--plan", open, "--shards", "2", "--url", "http://s", "--image", "i", "--run-id", "r",
		"--", "--benchmark-grace-period", "120"}, &out, &errb, kubeNow); code != 0 {
		t.Fatal(errb.String())
	}
	j := decodeOut(t, out.Bytes())
	if g := *j.Spec.Template.Spec.TerminationGracePeriodSeconds; g != 150 {
		t.Errorf("terminationGracePeriodSeconds %d, want 120 + 30", g)
	}
	// 10m rendezvous + 2 × 9m59s + 10m.
	if d := *j.Spec.ActiveDeadlineSeconds; d != 600+2*599+600 {
		t.Errorf("activeDeadlineSeconds %d", d)
	}
}

func TestKubernetesPreflight(t *testing.T) {
	plan := writeTestPlan(t, 6, 4)
	var out, errb bytes.Buffer
	code := RunKubernetes([]string{"preflight", "--plan", plan, "--shards", "3", "--url", "http://vllm:8000", "--image", "img", "--run-id", "r1",
		"--namespace", "bench"}, &out, &errb, kubeNow)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Offline checks passed for run r1", "kubectl -n bench get pvc llmbench-results", "spec.unschedulable=false",
		`cpuManagerPolicy`, "chronyc tracking", "auth can-i create jobs", "--image=img", "curl -sf http://vllm:8000/v1/models", "TCP 7411",
		"termination grace 1m0s > replay's grace 30s", "an unknown time"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("preflight output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	if code := RunKubernetes([]string{"preflight", "--plan", plan, "--shards", "3", "--url", "http://s", "--image", "img", "--cpu", "0.5"}, &out, &errb, kubeNow); code != 2 ||
		!strings.Contains(errb.String(), "replay kubernetes preflight: --cpu") {
		t.Errorf("bad preflight: exit %d, %q", code, errb.String())
	}
}

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

func generated(t *testing.T) string {
	t.Helper()
	plan := writeTestPlan(t, 6, 4)
	var out, errb bytes.Buffer
	if code := RunKubernetes([]string{"--plan", plan, "--shards", "2", "--url", "http://s", "--image", "img", "--run-id", "r1", "--namespace", "bench"},
		&out, &errb, kubeNow); code != 0 {
		t.Fatal(errb.String())
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
	if code := RunKubernetes([]string{"create", "-f", f, "--kubectl", kc}, &bytes.Buffer{}, &errb, kubeNow); code != 0 {
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
	if code := RunKubernetes([]string{"create", "-f", f, "--kubectl", kc}, &bytes.Buffer{}, &errb, kubeNow); code != 1 || !strings.Contains(errb.String(), "AlreadyExists") {
		t.Errorf("exit %d: %q", code, errb.String())
	}
	// Not our manifests: bad input.
	other := filepath.Join(t.TempDir(), "x.yaml")
	os.WriteFile(other, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"), 0o644)
	if code := RunKubernetes([]string{"create", "-f", other, "--kubectl", kc}, &bytes.Buffer{}, &errb, kubeNow); code != 2 {
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
			code := runKubeWait([]string{"-f", f, "--kubectl", kc}, &out, &errb, func(time.Duration) {})
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
	if code := runKubeWait([]string{"-f", f, "--kubectl", kc}, &bytes.Buffer{}, &errb, func(time.Duration) {}); code != 1 || !strings.Contains(errb.String(), "connection to the server was refused") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}

func TestKubernetesCollector(t *testing.T) {
	var out, errb bytes.Buffer
	if code := RunKubernetes([]string{"collector", "--run-id", "r1", "--image", "img", "--namespace", "bench"}, &out, &errb, kubeNow); code != 0 {
		t.Fatal(errb.String())
	}
	if _, err := kubernetes.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "kubectl -n bench exec r1-collect -- /bin/analyze collect /results/r1 > r1.tar") {
		t.Errorf("stderr %q", errb.String())
	}
	if code := RunKubernetes([]string{"collector", "--image", "img"}, &out, &errb, kubeNow); code != 2 {
		t.Errorf("no run id: exit %d", code)
	}
}
