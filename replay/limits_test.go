package replay

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// bigJob asks bigServer for a response of Bytes body bytes framed as Framing: "length"
// (Content-Length), "chunked", "close" (until the server closes) or "endless" (SSE events
// until the client goes away).
type bigJob struct {
	Bytes   int    `json:"bytes"`
	Framing string `json:"framing"`
}

// bigServer answers bigJobs. An endless response stops when the client closes or after 30 s.
func bigServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var j bigJob
		if err := json.NewDecoder(r.Body).Decode(&j); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		piece := bytes.Repeat([]byte("0123456789abcdef"), 1024) // 16 KiB
		switch j.Framing {
		case "length", "chunked":
			if j.Framing == "length" {
				w.Header().Set("Content-Length", strconv.Itoa(j.Bytes))
			}
			for left := j.Bytes; left > 0; left -= len(piece) {
				if _, err := w.Write(piece[:min(left, len(piece))]); err != nil {
					return
				}
			}
		case "close":
			c, bw, _ := w.(http.Hijacker).Hijack()
			defer c.Close()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
			for left := j.Bytes; left > 0; left -= len(piece) {
				if _, err := bw.Write(piece[:min(left, len(piece))]); err != nil {
					return
				}
			}
			bw.Flush()
		case "endless":
			w.Header().Set("Content-Type", "text/event-stream")
			ev := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 1000) + "\"}}]}\n\n")
			ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
			defer cancel()
			for ctx.Err() == nil {
				if _, err := w.Write(ev); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

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
	srv := bigServer(t)
	const limit = 1 << 20
	for _, framing := range []string{"length", "chunked", "close", "endless"} {
		t.Run(framing, func(t *testing.T) {
			ps := &planSpec{}
			for i, n := range []int{3 * limit / 2, 1000} {
				f := framing
				if i == 1 && f == "endless" {
					f = "length"
				}
				b, _ := json.Marshal(bigJob{Bytes: n, Framing: f})
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

// The exchange itself never holds more than the limit: the body's buffer stops growing at
// it, however long the stream, and the connection is closed (the rest is never read).
func TestEndlessStreamMemoryBounded(t *testing.T) {
	srv := bigServer(t)
	x := newExchangeBench(t, strings.TrimPrefix(srv.URL, "http://"))
	x.body, _ = json.Marshal(bigJob{Framing: "endless"})
	const limit = 1<<20 + 12345
	x.eb.maxBody = limit
	x.q.Body = make([]byte, 0, 16<<10)
	res, err := exchange(x.c, x.t.heads[0], x.body, "", 0, &x.eb, &x.q, x.now, x.after)
	if res != exTooLarge || err != errBodyTooLarge || !x.c.broken {
		t.Fatalf("exchange: %v %v broken=%v", res, err, x.c.broken)
	}
	if len(x.q.Body) != limit || cap(x.q.Body) > limit {
		t.Fatalf("body %d bytes in a buffer of %d, limit %d", len(x.q.Body), cap(x.q.Body), limit)
	}
	if got := failText(res, err, "", len(x.q.Body), &x.eb); got != fmt.Sprintf("response too large: body over max-response-bytes (%d bytes); the first %d bytes are kept", limit, limit) {
		t.Fatalf("err text %q", got)
	}
}

// Reads are bounded too: a response dribbled one byte per read (or only framing, which adds
// no body byte) cannot grow the read table past one read per 12 bytes of the limit.
func TestTooManyReads(t *testing.T) {
	segs := [][]byte{[]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")}
	for range 3000 {
		segs = append(segs, []byte("1\r\nx\r\n"))
	}
	segs = append(segs, []byte("0\r\n\r\n"))
	mc := newMemConn(segs)
	x := &exchangeBench{c: &conn{nc: mc}, body: []byte(`{}`), start: time.Now()}
	x.t, _ = newTarget("http://127.0.0.1:9", &headConfig{method: "POST", paths: []string{"/"}}, &tls.Config{})
	x.eb.rbuf = make([]byte, readBufSize)
	x.eb.maxBody = 24 << 10 // 2,048 reads
	x.now = func() int64 { return int64(time.Since(x.start)) }
	x.after = func(int64) {}
	res, err := exchange(x.c, x.t.heads[0], x.body, "", 0, &x.eb, &x.q, x.now, x.after)
	if res != exTooLarge || err != errTooManyReads || len(x.q.ReadNs) != 2048 {
		t.Fatalf("exchange: %v %v, %d reads", res, err, len(x.q.ReadNs))
	}
	if got := failText(res, err, "", len(x.q.Body), &x.eb); !strings.HasPrefix(got, "response too large: more than 2048 reads") {
		t.Fatalf("err text %q", got)
	}
}

// The decoder keeps exactly the limit, for every framing and however the bytes are split.
func TestBodyDecoderLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		h    respHead
		in   string
		want string
		over bool
	}{
		{"length under", respHead{framing: frameLength, length: 5}, "hello", "hello", false},
		{"length at", respHead{framing: frameLength, length: 8}, "abcdefgh", "abcdefgh", false},
		{"length over", respHead{framing: frameLength, length: 12}, "abcdefghijkl", "abcdefgh", true},
		{"close over", respHead{framing: frameClose}, "abcdefghijkl", "abcdefgh", true},
		{"chunked at", respHead{framing: frameChunked}, "4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n", "abcdefgh", false},
		{"chunked over", respHead{framing: frameChunked}, "4\r\nabcd\r\n6\r\nefghij\r\n0\r\n\r\n", "abcdefgh", true},
	} {
		for split := 1; split <= len(c.in); split++ {
			var d bodyDecoder
			d.reset(&c.h, 8)
			var out []byte
			for i := 0; i < len(c.in); i += split {
				var err error
				if out, err = d.feed(out, []byte(c.in[i:min(i+split, len(c.in))])); err != nil {
					t.Fatalf("%s split %d: %v", c.name, split, err)
				}
			}
			if string(out) != c.want || d.over != c.over || cap(out) > 8 {
				t.Fatalf("%s split %d: %q over=%v cap %d, want %q over=%v", c.name, split, out, d.over, cap(out), c.want, c.over)
			}
		}
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
	srv := bigServer(t)
	ps := &planSpec{}
	b, _ := json.Marshal(bigJob{Bytes: 300 << 10, Framing: "chunked"})
	ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Phase: mmapds.PhaseProfile}, b)
	ps.meta.Concurrency = 1
	o := testOptions(t, ps.write(t, t.TempDir()), srv.URL)
	o.Workers, o.MaxResponseBytes = 1, 100<<10
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	q := readRun(t, m, o.OutputDir)[0]
	if m.Counts.Failed != 1 || len(q.Body) != 100<<10 || !strings.HasPrefix(q.Err, "response too large") {
		t.Fatalf("counts %+v, %d bytes kept, err %q", m.Counts, len(q.Body), q.Err)
	}
	if v, ok := m.Options["max_response_bytes"]; !ok || fmt.Sprint(v) != "102400" {
		t.Fatalf("run.json options.max_response_bytes = %v", v)
	}
}
