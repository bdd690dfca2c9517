package replay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/internal/testserver"
)

// logFrames returns the payload lengths of a log's frames and how many were continued.
func logFrames(t *testing.T, path string) (sizes []int, continued int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off := 16; off < len(data); {
		v := binary.LittleEndian.Uint32(data[off:])
		size := int(v &^ rawlog.FrameContinued)
		if v&rawlog.FrameContinued != 0 {
			continued++
		}
		sizes = append(sizes, size)
		off += 8 + size
	}
	return sizes, continued
}

// A response over --max-response-bytes ends its request as failed ("response too large")
// with the body kept up to the limit, whatever its framing; the record is written over
// several frames, none larger than rawlog.FramePayload, and the log reads back whole. The
// next request still completes. A 1 MiB limit stands for the 64 MiB default.
func TestResponseTooLarge(t *testing.T) {
	srv := testserver.Big(t)
	const limit = 1 << 20
	for _, framing := range []string{"length", "chunked", "close", "endless"} {
		t.Run(framing, func(t *testing.T) {
			ps := &planSpec{}
			for i, n := range []int{3 * limit / 2, 1000} {
				f := framing
				if i == 1 && f == "endless" {
					f = "length"
				}
				b, _ := json.Marshal(testserver.BigJob{Bytes: n, Framing: f})
				ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: 0, Turn: uint32(i), Phase: mmapds.PhaseProfile}, b)
			}
			ps.meta.Concurrency = 1
			plan := ps.write(t, t.TempDir())
			cfg := workerConfig{Plan: plan, URLs: []string{srv.URL}, MaxResponseBytes: limit,
				RequestTimeoutNs: int64(DefaultRequestTimeout), Log: t.TempDir() + "/w.rawlog"}
			res, reqs, sum := runInProcess(t, cfg, nil)
			if res.Status != rawlog.StatusComplete || len(reqs) != 2 || sum.Footer == nil || sum.TornBytes != 0 {
				t.Fatalf("status %s, %d records, summary %+v", res.Status, len(reqs), sum)
			}
			big := reqs[0]
			if big.Outcome != rawlog.OutcomeFailed || !strings.HasPrefix(big.Err, "response too large: body over max-response-bytes (1048576 bytes)") {
				t.Fatalf("large response: outcome %v, err %q", big.Outcome, big.Err)
			}
			if big.Status != 200 || len(big.Body) != limit || big.ReadEnd[len(big.ReadEnd)-1] != limit || len(big.ReadNs) != len(big.ReadEnd) {
				t.Fatalf("large response: status %d, %d body bytes kept, last read end %d", big.Status, len(big.Body), big.ReadEnd[len(big.ReadEnd)-1])
			}
			if framing != "endless" && !bytes.Equal(big.Body[:32], []byte("0123456789abcdef0123456789abcdef")) {
				t.Fatalf("body starts %q", big.Body[:32])
			}
			if small := reqs[1]; small.Outcome != rawlog.OutcomeCompleted || len(small.Body) != 1000 {
				t.Fatalf("next request: %v %q, %d bytes", small.Outcome, small.Err, len(small.Body))
			}
			sizes, continued := logFrames(t, cfg.Log)
			for _, s := range sizes {
				if s > rawlog.FramePayload {
					t.Fatalf("frame of %d bytes, over %d", s, rawlog.FramePayload)
				}
			}
			if continued == 0 {
				t.Fatalf("the %d-byte record fit one frame? frames %v", limit, sizes)
			}
		})
	}
}

func TestMaxResponseBytesOption(t *testing.T) {
	for _, c := range []struct {
		v       int64
		want    int64
		wantErr string
	}{
		{0, DefaultMaxResponseBytes, ""},
		{1, 1, ""},
		{MaxResponseBytesLimit, MaxResponseBytesLimit, ""},
		{-1, 0, "max-response-bytes -1: must be between 1 and 1073741824"},
		{MaxResponseBytesLimit + 1, 0, "must be between 1 and"},
	} {
		o := Options{Plan: "p", URLs: []string{"http://x"}, OutputDir: "d", MaxResponseBytes: c.v}
		err := o.normalize()
		switch {
		case c.wantErr == "" && (err != nil || o.MaxResponseBytes != c.want):
			t.Errorf("%d: %v, %d", c.v, err, o.MaxResponseBytes)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%d: error %v, want %q", c.v, err, c.wantErr)
		}
	}
}

// The limit reaches the worker processes through the coordinator, and run.json records it.
func TestMaxResponseBytesThroughCoordinator(t *testing.T) {
	srv := testserver.Big(t)
	ps := &planSpec{}
	b, _ := json.Marshal(testserver.BigJob{Bytes: 300 << 10, Framing: "chunked"})
	ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Phase: mmapds.PhaseProfile}, b)
	ps.meta.Concurrency = 1
	o := testOptions(t, ps.write(t, t.TempDir()), srv.URL)
	o.Workers, o.MaxResponseBytes = 1, 100<<10
	m := runReplay(t, o)
	q := readRun(t, m, o.OutputDir)[0]
	if m.Counts.Failed != 1 || len(q.Body) != 100<<10 || !strings.HasPrefix(q.Err, "response too large") {
		t.Fatalf("counts %+v, %d bytes kept, err %q", m.Counts, len(q.Body), q.Err)
	}
	if v, ok := m.Options["max_response_bytes"]; !ok || fmt.Sprint(v) != "102400" {
		t.Fatalf("run.json options.max_response_bytes = %v", v)
	}
}
