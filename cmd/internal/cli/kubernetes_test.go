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
	// An OpenAI SDK base URL: the probe's /v1 is not doubled (endpoint.Base).
	out.Reset()
	if code := RunKubernetes([]string{"preflight", "--plan", plan, "--shards", "3", "--url", "http://vllm:8000/v1", "--image", "img", "--run-id", "r1"}, &out, &errb, kubeNow); code != 0 ||
		!strings.Contains(out.String(), "curl -sf http://vllm:8000/v1/models\n") {
		t.Errorf("--url http://vllm:8000/v1: exit %d, %s", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := RunKubernetes([]string{"preflight", "--plan", plan, "--shards", "3", "--url", "http://s", "--image", "img", "--cpu", "0.5"}, &out, &errb, kubeNow); code != 2 ||
		!strings.Contains(errb.String(), "replay kubernetes preflight: --cpu") {
		t.Errorf("bad preflight: exit %d, %q", code, errb.String())
	}
}

// create and wait parse their flags and hand them to kubernetes.Create and kubernetes.Wait
// (tested there with a kubectl stand-in); bad input stops before any kubectl runs.
func TestKubernetesCreateWaitFlags(t *testing.T) {
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
	none := filepath.Join(t.TempDir(), "no-kubectl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--kubectl", none}, "replay kubernetes create: -f FILE is required"},
		{[]string{"create", "-f", f, "--kubectl", none, "--no-such"}, "replay kubernetes create: unknown flag: --no-such"},
		{[]string{"wait", "-f", f, "--kubectl", none, "--interval", "0"}, "replay kubernetes wait: --interval must be positive"},
		{[]string{"wait", "-f", f, "--kubectl", none, "--timeout", "-1s"}, "--timeout not negative"},
	} {
		errb.Reset()
		if code := RunKubernetes(tc.args, &bytes.Buffer{}, &errb, kubeNow); code != 2 || !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want 2 and one line with %q", tc.args, code, errb.String(), tc.want)
		}
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
