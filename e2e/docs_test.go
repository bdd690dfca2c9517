package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestDocs runs every command shown in README.md and docs/*.md, as written, and fails when one
// exits otherwise than the text says: the documentation is executed (issue #36).
//
// What is a command. The code blocks of each file are read: fenced ones (``` or ~~~, with no
// language or sh, bash, shell, console) and indented ones (four spaces after a blank line). In
// a block where some line starts with "$ ", only those lines are commands (the rest is their
// output); elsewhere every line that is not a comment is. A line ending in "\" continues on
// the next. A command is run when it invokes one of ours: a word bin/plan, bin/replay,
// bin/analyze, bin/profile, bin/chat or bin/mockllm (anywhere in a pipe or list, as in
// `echo -n hi | bin/plan tokenize`), one of those names first on the line, or make. Other
// lines (kubectl, curl, ...) are not ours and are not run.
//
// How it is run. Each file's commands run in document order in one fresh folder (later ones
// use what earlier ones wrote: qwen.plan, runs/qwen), with bin/ linking the commands built
// for this package, by bash -o pipefail with stdin empty, LLMBENCH_ACCEPT_SCHEDULE_MISS=1
// (TestMain: a loaded machine missing a schedule is said, not failed), HF_HUB_OFFLINE=1 (nothing is
// downloaded) and no OPENAI_API_KEY; make runs in the module root, with DEMO_PORT and DEMO_DIR
// (the Makefile's variables) set to a free port and a folder of the test's, in parallel with
// the page's other commands (it builds and serves on its own). The only change to a command
// is the server's address: localhost:8000 and 127.0.0.1:8000 become the address of a mockllm
// the test starts with --strict (vLLM's request validation), --enable-prompt-tokens-details,
// TTFT 20 ms, ITL 10 ms and --natural-tokens 16; the files run in parallel against it.
//
// What is expected. Exit status 0, unless the command says otherwise in a trailing comment:
// `# exits N`. A command that cannot run here (a cluster, a GPU, the Hub, a real trace, a
// second machine) is skipped only by an HTML comment, invisible when the page is rendered,
// on the line(s) right before its block, which gives the reason:
//
//	<!-- docs-test: skip: REASON -->             every command of the block
//	<!-- docs-test: skip "TEXT": REASON -->      the block's commands that contain TEXT
//
// A skip that matches no command is an error (a stale note). The test logs how many commands
// ran and how many were skipped, each skip with its reason; a failure names the file, the line,
// the command as written and as run, and the tail of its output.
func TestDocs(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	// The client verdict bounds the dispatch lag by a fraction of the TTFT and of the ITL: 20 ms
	// and 10 ms leave a loaded machine's lag (a few ms) inside it. Replies whose length the
	// request does not force are kept short (16 tokens on average) instead.
	mock := startMock(t, "--strict", "--enable-prompt-tokens-details", "--ttft", "20ms", "--itl", "10ms", "--natural-tokens", "16")
	addr := strings.TrimPrefix(mock.URL, "http://")
	binDir := filepath.Dir(bin.plan)
	var ran, skipped atomic.Int64
	t.Cleanup(func() {
		t.Logf("docs: %d commands run, %d skipped with a reason, from %d files", ran.Load(), skipped.Load(), len(files))
	})
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		cmds, err := docCommands(f, rel)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// make runs in the module root, apart from the page's folder: its commands go on
		// their own beside the page's chain, in parallel.
		var chain, makes []docCommand
		for _, c := range cmds {
			if strings.HasPrefix(c.text, "make ") {
				makes = append(makes, c)
			} else {
				chain = append(chain, c)
			}
		}
		for _, part := range []struct {
			name string
			cmds []docCommand
		}{{rel, chain}, {rel + " make", makes}} {
			if len(part.cmds) == 0 {
				continue
			}
			t.Run(part.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if err := os.Symlink(binDir, filepath.Join(dir, "bin")); err != nil {
					t.Fatal(err)
				}
				for _, c := range part.cmds {
					if c.skip != "" {
						skipped.Add(1)
						t.Logf("%s:%d: skipped (%s): %s", c.file, c.line, c.skip, c.text)
						continue
					}
					ran.Add(1)
					runDocCommand(t, c, dir, root, addr)
				}
			})
		}
	}
}

// docCommand is one command of a page.
type docCommand struct {
	file string // relative to the module root
	line int    // of its first line
	text string // as written, continuation lines joined with their "\"
	exit int    // the exit status the text gives it
	skip string // the reason it is not run, "" to run it
}

var (
	docsExitRE  = regexp.MustCompile(`#.*\bexits (\d+)\b`)
	docsSkipRE  = regexp.MustCompile(`docs-test: skip(?: "([^"]+)")?: ([^>]+?)\s*(?:-->|$)`)
	docsOursRE  = regexp.MustCompile(`(^|[\s|;&(])bin/(plan|replay|analyze|profile|chat|mockllm)\b`)
	docsFirstRE = regexp.MustCompile(`^(plan|replay|analyze|profile|chat|mockllm|make)(\s|$)`)
	docsFenceRE = regexp.MustCompile("^\\s*(```|~~~)\\s*([A-Za-z0-9_-]*)")
)

// docCommands reads the commands of one Markdown file, with their skip notes applied.
func docCommands(path, rel string) ([]docCommand, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []docCommand
	type skipNote struct {
		text, reason string
		line         int
		used         bool
	}
	var errs []string
	// block handles the lines [from, to) of one code block starting at line from (0-based).
	block := func(from, to int, body []string) {
		// The skip notes: the HTML comment lines right above the block (above its fence).
		var notes []*skipNote
		i := from - 1
		if i >= 0 && strings.TrimSpace(lines[i]) == "" { // an indented block's blank line
			i--
		}
		for ; i >= 0 && (strings.Contains(lines[i], "<!--") || strings.Contains(lines[i], "-->") || strings.Contains(lines[i], "docs-test:")); i-- {
			for _, m := range docsSkipRE.FindAllStringSubmatch(lines[i], -1) {
				notes = append(notes, &skipNote{text: m[1], reason: m[2], line: i + 1})
			}
		}
		prompted := false
		for _, l := range body {
			if strings.HasPrefix(strings.TrimSpace(l), "$ ") {
				prompted = true
			}
		}
		for i := 0; i < len(body); i++ {
			l := strings.TrimSpace(body[i])
			if prompted {
				if !strings.HasPrefix(l, "$ ") {
					continue
				}
				l = strings.TrimPrefix(l, "$ ")
			}
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			c := docCommand{file: rel, line: to - len(body) + i + 1}
			text := l
			for strings.HasSuffix(text, `\`) && i+1 < len(body) {
				i++
				text += "\n" + body[i]
			}
			c.text = text
			if !docsOursRE.MatchString(text) && !docsFirstRE.MatchString(text) {
				continue
			}
			if m := docsExitRE.FindStringSubmatch(text); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			for _, n := range notes {
				if n.text == "" || strings.Contains(text, n.text) {
					c.skip, n.used = n.reason, true
					break
				}
			}
			out = append(out, c)
		}
		for _, n := range notes {
			if !n.used {
				errs = append(errs, fmt.Sprintf("%s:%d: docs-test skip %q matches no command of the block below it", rel, n.line, n.text))
			}
		}
	}
	inFence, fenceStart, lang := false, 0, ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := docsFenceRE.FindStringSubmatch(l); m != nil {
			if !inFence {
				inFence, fenceStart, lang = true, i, m[2]
				continue
			}
			inFence = false
			switch lang {
			case "", "sh", "bash", "shell", "console":
				block(fenceStart, i, lines[fenceStart+1:i])
			}
			continue
		}
		if inFence {
			continue
		}
		// An indented block: four spaces after a blank line, not a list's continuation.
		if strings.HasPrefix(l, "    ") && i > 0 && strings.TrimSpace(lines[i-1]) == "" && strings.TrimSpace(l) != "" {
			j := i
			for j < len(lines) && (strings.HasPrefix(lines[j], "    ") || strings.TrimSpace(lines[j]) == "" && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "    ")) {
				j++
			}
			first := strings.TrimSpace(l)
			if docsOursRE.MatchString(first) || docsFirstRE.MatchString(first) || strings.HasPrefix(first, "$ ") {
				body := make([]string, j-i)
				for k := range body {
					body[k] = strings.TrimPrefix(lines[i+k], "    ")
				}
				block(i, j, body)
			}
			i = j - 1
		}
	}
	if len(errs) > 0 {
		return out, errors.New(strings.Join(errs, "\n"))
	}
	return out, nil
}

var docsAddrRE = regexp.MustCompile(`\b(localhost|127\.0\.0\.1):8000\b`)

// runDocCommand runs one command in dir and fails t when its exit status is not the one the
// text gives.
func runDocCommand(t *testing.T, c docCommand, dir, root, addr string) {
	t.Helper()
	run := docsAddrRE.ReplaceAllString(c.text, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", run)
	cmd.Dir = dir
	env := []string{"HF_HUB_OFFLINE=1", "NO_COLOR=1"}
	if strings.HasPrefix(c.text, "make ") {
		cmd.Dir = root
		env = append(env, "DEMO_PORT="+strconv.Itoa(freePort(t)), "DEMO_DIR="+filepath.Join(dir, "demo"))
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "OPENAI_API_KEY" || k == "HF_HUB_OFFLINE" || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Errorf("%s:%d: %v: %s", c.file, c.line, err, c.text)
		return
	}
	if ctx.Err() != nil {
		t.Errorf("%s:%d: still running after 3 minutes: %s\n%s", c.file, c.line, c.text, tail(out.String()))
		return
	}
	t.Logf("%s:%d: exit %d in %v: %s", c.file, c.line, code, time.Since(start).Round(time.Millisecond), firstLine(c.text))
	// make reports a recipe's exit 1 as its own exit 2 ("make: *** [...] Error 1", "make[1]: ..."
	// when make test runs this test: a sub-make).
	recipe1 := code == 2 && regexp.MustCompile(`make(\[\d+\])?: \*\*\* \[[^\]]*\] Error 1`).MatchString(out.String())
	if (code == 1 || recipe1) && c.exit == 0 && busyMachine(out.String()) {
		// The command kept its promise: it said the client could not keep its schedule on this
		// machine (or the generator validation failed for it) and exited 1, as
		// docs/exit-codes.md says. That is the machine's load, not the page's error.
		t.Logf("%s:%d: exit 1 on a machine too busy for the client to keep its schedule (said so): %s", c.file, c.line, firstLine(c.text))
		return
	}
	if code != c.exit || strings.Contains(out.String(), "panic: ") {
		t.Errorf("%s:%d: exit %d, the text says %d:\n%s\nrun as (in %s):\n%s\noutput tail:\n%s",
			c.file, c.line, code, c.exit, c.text, cmd.Dir, run, tail(out.String()))
	}
}

// busyMachine reports whether a command's output says that its only failure was the client's
// timing on a loaded machine: the schedule not kept (a run's, or a repeat's or sweep point's
// run judged invalid for it alone), or the generator validation failed, and nothing else that
// exits 1 (a gate, a damaged log, failed requests, impossible token counts).
func busyMachine(out string) bool {
	if strings.Contains(out, "panic: ") || strings.Contains(out, ": FAIL") || strings.Contains(out, "DAMAGED") ||
		strings.Contains(out, "every request sent failed") || strings.Contains(out, "INVALID TOKEN COUNTS") {
		return false
	}
	said := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "INVALID RUN") {
			continue
		}
		_, why, _ := strings.Cut(line, ": the client did not keep its schedule: ")
		if why == "" || strings.Contains(why, "failed") || strings.Contains(why, "exited") || strings.Contains(why, "interrupted") {
			return false // another problem, or one beside the schedule
		}
		said = true
	}
	return said || strings.Contains(out, "SCHEDULE NOT KEPT") || strings.Contains(out, "GENERATOR FAILED") ||
		strings.Contains(out, "generator validation failed") || regexp.MustCompile(`the generator validation \S* ?failed`).MatchString(out)
}

// freePort returns a loopback port free a moment ago (for make demo's fixed-port variable).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := strings.Cut(ln.Addr().String(), "127.0.0.1:")
	n, _ := strconv.Atoi(p)
	return n
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// tail is the last 25 lines of a command's output.
func tail(s string) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 25 {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-25)}, lines[len(lines)-25:]...)
	}
	return strings.Join(lines, "\n")
}

// The reader finds what TestDocs runs: our commands with their continuations and expected
// exits, the skip notes applied, transcripts' output and other tools' lines left out, and a
// stale skip note reported.
func TestDocCommandsParse(t *testing.T) {
	page := strings.Join([]string{
		"# Page", // 1
		"",
		"```", // 3
		"bin/plan --model m \\",
		"  -o x.plan",
		"# a comment",
		"bin/analyze runs/x   # exits 1", // 7
		"kubectl get pods",
		"echo -n hi | bin/plan tokenize", // 9
		"```",
		"",
		"<!-- docs-test: skip \"compare\": needs two runs -->",
		"```sh", // 13
		"bin/analyze compare a b",
		"bin/replay --plan x.plan", // 15
		"```",
		"",
		"```json",
		`{"bin/plan": 1}`,
		"```",
		"",
		"```console", // 22
		"$ bin/chat --quick hi",
		"Hello",
		"bin/plan is output here",
		"```",
		"",
		"    bin/profile --plan x.plan \\", // 28
		"        --url localhost:8000",
		"",
		"<!-- docs-test: skip: a cluster -->",
		"```",
		"make test", // 33
		"```",
		"",
		"<!-- docs-test: skip \"nothing\": stale -->", // 36
		"```",
		"bin/plan inspect x.plan", // 38
		"```",
	}, "\n")
	path := filepath.Join(t.TempDir(), "page.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := docCommands(path, "page.md")
	want := []docCommand{
		{line: 4, text: "bin/plan --model m \\\n  -o x.plan"},
		{line: 7, text: "bin/analyze runs/x   # exits 1", exit: 1},
		{line: 9, text: "echo -n hi | bin/plan tokenize"},
		{line: 14, text: "bin/analyze compare a b", skip: "needs two runs"},
		{line: 15, text: "bin/replay --plan x.plan"},
		{line: 23, text: "bin/chat --quick hi"},
		{line: 28, text: "bin/profile --plan x.plan \\\n    --url localhost:8000"},
		{line: 33, text: "make test", skip: "a cluster"},
		{line: 38, text: "bin/plan inspect x.plan"},
	}
	if err == nil || !strings.Contains(err.Error(), `page.md:36: docs-test skip "nothing" matches no command`) {
		t.Errorf("stale skip note: error %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d commands, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		want[i].file = "page.md"
		if got[i] != want[i] {
			t.Errorf("command %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestBusyMachine: only a failure said to be the loaded machine's counts as one.
func TestBusyMachine(t *testing.T) {
	for _, c := range []struct {
		out  string
		want bool
	}{
		{"analyze: SCHEDULE NOT KEPT: dispatch lag p99 3 ms > 1.00 ms; these numbers describe the client", true},
		{"analyze: GENERATOR FAILED: the client's share of TTFT p99 19 ms > 10 ms", true},
		{"profile: INVALID RUN run_0004: the client did not keep its schedule: dispatch lag p99 16.71 ms > 1.00 ms\nprofile: 4 of 5 runs valid", true},
		{"profile: INVALID RUN run_0002: 17 of 20 profile requests failed (85.00%), above --max-error-rate 0", false},
		{"profile: INVALID RUN run_0002: the client did not keep its schedule: lag; 3 of 20 profile requests failed", false},
		{"Gate error rate <= 0: FAIL (7 of 40)\nanalyze: SCHEDULE NOT KEPT: lag", false},
		{"analyze: INVALID TOKEN COUNTS: …\nanalyze: SCHEDULE NOT KEPT: lag", false},
		{"replay: FAILED: every request sent failed (10 failed)", false},
		{"Gate error rate <= 0: PASS", false},
	} {
		if got := busyMachine(c.out); got != c.want {
			t.Errorf("busyMachine(%q) = %v, want %v", c.out, got, c.want)
		}
	}
}
