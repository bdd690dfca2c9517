package e2e_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretValues are the credential values the secret-bearing URLs below carry; none may
// appear in any file a run or its analysis writes, nor in any line they print.
var secretValues = []string{
	"tok3nS3CRET", "ap1keyS3CRET", "sasS1GS3CRET", "amzS1GS3CRET", "amzCR3DS3CRET",
	"amzT0KS3CRET", "googS1GS3CRET", "deadT0KS3CRET", "jsonS1GS3CRET", "urlK3YS3CRET", "fragT0KS3CRET",
}

// TestSecretsNeverWritten runs the whole chain (profile: plan, replay, analyze, report.html)
// with secrets in the query of every URL it takes: the server-metrics URLs (one answering,
// one dead, so that the HTTP client's error with the URL in it is recorded, and one serving
// JSON, so that the scraper names the URL it retries), the DCGM --gpu-telemetry URL and the
// --url itself; then analyses the run again into another directory with --html. No file under
// either directory, and no line on stdout or stderr, holds any secret value. Refused URLs
// (credentials in user information) exit 2 without showing the secret either.
func TestSecretsNeverWritten(t *testing.T) {
	srv := startMock(t, "--ttft", "1ms", "--itl", "1ms")
	page, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", "dcgm_exporter_h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page)
	}))
	defer dcgm.Close()
	jsonPage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"not":"prometheus"}`))
	}))
	defer jsonPage.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused from here on

	work := t.TempDir()
	art := filepath.Join(work, "artifacts")
	args := []string{"--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--isl", "32", "--osl", "8", "--concurrency", "2", "--request-count", "12", "--random-seed", "1",
		"--no-pin", "--ui-type", "none", "--artifact-dir", art, "--server-metrics-interval", "50ms",
		"--url", srv.URL + "/?api-key=urlK3YS3CRET",
		"--server-metrics-url", strings.TrimPrefix(srv.URL, "http://") + "/metrics?token=tok3nS3CRET&api_key=ap1keyS3CRET&sig=sasS1GS3CRET&X-Amz-Signature=amzS1GS3CRET",
		"--server-metrics-url", deadURL + "/metrics?X-Amz-Credential=amzCR3DS3CRET&X-Amz-Security-Token=amzT0KS3CRET&token=deadT0KS3CRET",
		"--server-metrics-url", jsonPage.URL + "/metrics?sig=jsonS1GS3CRET",
		"--gpu-telemetry=" + dcgm.URL + "/metrics?X-Goog-Signature=googS1GS3CRET",
	}
	r := command(t, bin.profile, args...)
	if r.code != 0 {
		t.Fatalf("profile: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	runDir := filepath.Join(art, "mock-openai-chat-concurrency2")
	for _, f := range []string{"run.json", "server_metrics.jsonl", "profile_export_aiperf.json", "report.html", "profile_export.jsonl"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Fatalf("the chain did not write %s: %v", f, err)
		}
	}
	sm, _ := os.ReadFile(filepath.Join(runDir, "server_metrics.jsonl"))
	for _, want := range []string{"token=REDACTED", "sig=REDACTED", "X-Amz-Credential=REDACTED", "X-Goog-Signature=REDACTED", `"kind":"note"`} {
		if !bytes.Contains(sm, []byte(want)) {
			t.Errorf("server_metrics.jsonl lacks %q (the endpoints and their notes should be there, redacted)", want)
		}
	}
	out2 := filepath.Join(work, "again")
	a := command(t, bin.analyze, "--output-dir", out2, "--html", filepath.Join(work, "page.html"), runDir)
	if a.code != 0 {
		t.Fatalf("analyze: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	console := map[string]string{"profile stdout": r.stdout, "profile stderr": r.stderr, "analyze stdout": a.stdout, "analyze stderr": a.stderr}
	// Refused URLs: one line, exit 2, the secret not in it.
	for _, bad := range [][]string{
		{"--server-metrics-url", "user:tok3nS3CRET@" + strings.TrimPrefix(srv.URL, "http://") + "/metrics"},
		{"--gpu-telemetry=http://user:ap1keyS3CRET@" + strings.TrimPrefix(dcgm.URL, "http://") + "/metrics"},
		{"--server-metrics-url", "ftp://h/metrics?token=deadT0KS3CRET"},
		// A fragment is never sent to a server: such a --url is refused, its secret not shown.
		{"--url", srv.URL + "/?api-key=urlK3YS3CRET#access_token=fragT0KS3CRET"},
	} {
		planPath := filepath.Join(runDir, "plan.llmplan")
		b := command(t, bin.replay, append([]string{"--plan", planPath, "--url", srv.URL, "--output-dir", filepath.Join(work, "refused"), "--no-pin"}, bad...)...)
		if b.code != 2 {
			t.Errorf("replay %q: exit %d, want 2\n%s", bad, b.code, b.stderr)
		}
		console["replay "+strings.Join(bad, " ")] = b.stdout + b.stderr
	}
	for what, text := range console {
		for _, s := range secretValues {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %s:\n%s", what, s, text)
			}
		}
	}
	filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, s := range secretValues {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %s", path, s)
			}
		}
		return nil
	})
}
