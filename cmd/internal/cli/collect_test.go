package cli

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// writeShard writes DIR/shard-<i>/run.json with status and a log file beside it.
func writeShard(t *testing.T, dir string, i int, status string) {
	t.Helper()
	d := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &rawlog.Manifest{Tool: "llmbench replay", Status: status, Shard: &rawlog.ShardInfo{Index: i, Count: 3},
		PlanHash: strings.Repeat("ab", 32)}
	if err := rawlog.WriteManifest(d, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "worker-000.rawlog"), []byte(strings.Repeat("log", 1000+i)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wait-shards ends when every shard finished, when the present ones finished and no other
// appeared for --settle, or at --timeout; it always lets the analysis run (exit 0).
func TestWaitShards(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  []func(dir string) // one per look
		args   []string
		want   string
		looksN int // looks before it returned
	}{
		{name: "all finish", args: []string{"--settle", "1h"}, steps: []func(string){
			func(d string) { writeShard(t, d, 0, rawlog.StatusRunning) },
			func(d string) { writeShard(t, d, 1, rawlog.StatusRunning); writeShard(t, d, 2, rawlog.StatusRunning) },
			func(d string) { writeShard(t, d, 0, rawlog.StatusComplete); writeShard(t, d, 1, rawlog.StatusFailed) },
			func(d string) { writeShard(t, d, 2, rawlog.StatusInterrupted) },
		}, want: "every shard finished", looksN: 4},
		{name: "one never starts", args: []string{"--settle", "0s"}, steps: []func(string){
			func(d string) { writeShard(t, d, 0, rawlog.StatusRunning); writeShard(t, d, 2, rawlog.StatusRunning) },
			func(d string) { writeShard(t, d, 0, rawlog.StatusFailed); writeShard(t, d, 2, rawlog.StatusFailed) },
		}, want: "shards 1 never started while the others ran", looksN: 2},
		{name: "unreadable run.json", args: []string{"--settle", "1h"}, steps: []func(string){
			func(d string) {
				for i := range 3 {
					writeShard(t, d, i, rawlog.StatusComplete)
				}
				os.WriteFile(filepath.Join(d, "shard-1", rawlog.ManifestName), []byte("{"), 0o644)
			},
		}, want: "1: unreadable", looksN: 1},
		{name: "timeout", args: []string{"--timeout", "1ns", "--settle", "1h"}, steps: []func(string){
			func(d string) { writeShard(t, d, 0, rawlog.StatusRunning) },
		}, want: "gave up after 1ns (running: 0; not started: 1, 2)", looksN: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			looks := 0
			tc.steps[0](dir)
			sleep := func(time.Duration) {
				looks++
				if looks < len(tc.steps) {
					tc.steps[looks](dir)
				}
			}
			var errb bytes.Buffer
			code := RunWaitShards(append(tc.args, "--shards", "3", "--interval", "1ms", dir), &errb, sleep)
			if code != 0 || !strings.Contains(errb.String(), tc.want) || looks+1 != tc.looksN {
				t.Errorf("exit %d after %d looks: %s; want %q after %d", code, looks+1, errb.String(), tc.want, tc.looksN)
			}
		})
	}
	// With a settle time it looks again before giving up on the missing shard.
	dir := t.TempDir()
	writeShard(t, dir, 0, rawlog.StatusComplete)
	looks := 0
	var errb bytes.Buffer
	code := RunWaitShards([]string{"--shards", "2", "--interval", "1ms", "--settle", "20ms", dir}, &errb, func(time.Duration) { looks++; time.Sleep(5 * time.Millisecond) })
	if code != 0 || looks < 1 || !strings.Contains(errb.String(), "shards 1 never started") {
		t.Errorf("settle: exit %d after %d sleeps: %s", code, looks, errb.String())
	}
	if code := RunWaitShards([]string{"--shards", "0", t.TempDir()}, &errb, nil); code != 2 {
		t.Errorf("--shards 0: exit %d", code)
	}
}

// readTar returns a tar's regular files by name.
func readTar(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	files := map[string]string{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[h.Name] = string(b)
		}
	}
}

// collect writes a finished run folder as a tar that holds every file under the run's name,
// refuses a running run, a folder without a run and a terminal, and serves it over HTTP.
func TestCollect(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r1")
	for i := range 3 {
		writeShard(t, root, i, rawlog.StatusComplete)
	}
	os.WriteFile(filepath.Join(root, "report.html"), []byte("<html>"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(root, "link"))
	out, err := os.Create(filepath.Join(t.TempDir(), "r1.tar"))
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if code := RunCollect([]string{root}, out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	out.Seek(0, 0)
	files := readTar(t, out)
	out.Close()
	if len(files) != 7 || files["r1/report.html"] != "<html>" || files["r1/shard-2/worker-000.rawlog"] != strings.Repeat("log", 1002) {
		t.Errorf("tar holds %d files: %v", len(files), keys(files))
	}
	if _, ok := files["r1/link"]; ok {
		t.Error("the symlink was followed into the tar")
	}
	if !strings.Contains(errb.String(), "7 files") {
		t.Errorf("stderr %q", errb.String())
	}

	// Refusals.
	running := filepath.Join(t.TempDir(), "r2")
	writeShard(t, running, 0, rawlog.StatusComplete)
	writeShard(t, running, 1, rawlog.StatusRunning)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{running}, "shard-1/run.json says the run is still running"},
		{[]string{t.TempDir()}, "holds no run"},
		{[]string{filepath.Join(root, "report.html")}, "is not a folder"},
		{[]string{}, "want one run folder"},
	} {
		errb.Reset()
		dev, _ := os.Create(filepath.Join(t.TempDir(), "x"))
		if code := RunCollect(tc.args, dev, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, %q", tc.args, code, errb.String())
		}
		dev.Close()
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		errb.Reset()
		if code := RunCollect([]string{root}, tty, &errb); code != 2 || !strings.Contains(errb.String(), "stdout is a terminal") {
			t.Errorf("to a terminal: exit %d, %q", code, errb.String())
		}
		tty.Close()
	}

	// Served: GET / is the same tar.
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- RunCollect([]string{"--serve", "127.0.0.1:0", "--serve-for", "3s", root}, nil, pw)
		pw.Close()
	}()
	line, _ := readLine(pr)
	m := regexp.MustCompile(`on (http://\S+/)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	served := readTar(t, resp.Body)
	resp.Body.Close()
	if len(served) != 7 || resp.Header.Get("Content-Type") != "application/x-tar" {
		t.Errorf("served %d files, %s", len(served), resp.Header.Get("Content-Type"))
	}
	if resp, err := http.Get(m[1] + "other"); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /other: %v %v", resp, err)
	}
	if code := <-done; code != 0 {
		t.Errorf("serve exit %d", code)
	}
}

func readLine(r io.Reader) (string, error) {
	var b []byte
	c := make([]byte, 1)
	for {
		if _, err := r.Read(c); err != nil {
			return string(b), err
		}
		if c[0] == '\n' {
			return string(b), nil
		}
		b = append(b, c[0])
	}
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
