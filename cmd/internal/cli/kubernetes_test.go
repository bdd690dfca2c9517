package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func TestRunKubernetes(t *testing.T) {
	plan := writeTestPlan(t, 6, 4)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout (code 0) or the one stderr line
	}{
		{[]string{"--plan", plan, "--shards", "3", "--url", "http://s:8000", "--image", "img", "--start-in", "1m", "--run-id", "r9", "--", "--no-pin"},
			0, "--start-at\n        - \"2026-12-01T12:01:00Z\""},
		{[]string{"--shards", "3", "--url", "u", "--image", "i"}, 2, "--plan is required"},
		{[]string{"--plan", plan, "--shards", "5", "--url", "u", "--image", "i"}, 2, "concurrency 4 cannot be split"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u"}, 2, "--image is required"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--run-id", "Bad"}, 2, "run-id \"Bad\""},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--start-in", "25h"}, 2, "is 25h0m0s from now, more than the 24h0m0s"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--start-at", "2099-12-01T00:00:00Z"}, 2, "--start-in/--start-at 2099-12-01T00:00:00Z is 26662 days from now"},
		// The shards' replay flags are checked once, before any manifest is printed.
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--", "--requst-timeout-seconds", "5"}, 2, "replay flags after --: unknown flag: --requst-timeout-seconds (did you mean --request-timeout-seconds?)"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--", "--request-timeout-seconds", "nan"}, 2, "replay flags after --: --request-timeout-seconds NaN"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--", "--benchmark-grace-period", "-1"}, 2, "--benchmark-grace-period"},
		{[]string{"--plan", plan, "--shards", "2", "--url", "u", "--image", "i", "--", "--shard-index", "1"}, 2, "--shard-index is set by the manifest"},
	} {
		var out, errb bytes.Buffer
		code := RunKubernetes(tc.args, &out, &errb, now)
		got := out.String()
		if code != 0 {
			got = errb.String()
			if strings.Count(got, "\n") != 1 {
				t.Errorf("%q: stderr is not one line: %q", tc.args, got)
			}
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%q: exit %d, output %q; want %d with %q", tc.args, code, got, tc.code, tc.want)
		}
	}
}
