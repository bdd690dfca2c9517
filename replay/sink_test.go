package replay

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// flush returns only once the caller's frame (and every one queued before it) is in the file,
// whoever writes it; frames from concurrent writers are never split or lost, with or without
// flushes between them.
func TestSinkFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := newLogSink(f)
	const writers, frames = 4, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < frames; i++ {
				frame := fmt.Sprintf("w%d-%03d|", g, i)
				if _, err := s.Write([]byte(frame)); err != nil {
					errs <- err
					return
				}
				if i%3 != 0 { // some frames are left to the writer goroutine
					continue
				}
				if err := s.flush(); err != nil {
					errs <- err
					return
				}
				b, err := os.ReadFile(path)
				if err != nil || !bytes.Contains(b, []byte(frame)) {
					errs <- fmt.Errorf("frame %q not in the file after flush (%v)", frame, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	parts := bytes.Split(bytes.TrimSuffix(b, []byte("|")), []byte("|"))
	seen := map[string]bool{}
	for _, p := range parts {
		var g, i int
		if _, err := fmt.Sscanf(string(p), "w%d-%03d", &g, &i); err != nil || seen[string(p)] {
			t.Fatalf("frame %q split or duplicated", p)
		}
		seen[string(p)] = true
	}
	if len(seen) != writers*frames {
		t.Fatalf("%d frames in the file, want %d", len(seen), writers*frames)
	}
}

// BenchmarkSentRecord is what marking a request as started costs the worker: a Sent record
// made durable (write(2) from the calling goroutine) against the same record only queued for
// the writer goroutine, which is how every other record is logged. Both allocate nothing.
func BenchmarkSentRecord(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sent.rawlog"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := newLogSink(f)
	defer s.close()
	lw, err := rawlog.NewWriter(s, rawlog.Header{Worker: 0, CPU: -1})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < b.N; i++ {
		lw.WriteSent(rawlog.Sent{Index: uint32(i), TimeNs: int64(i)})
	}
	queued := time.Since(start)
	s.flush()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lw.WriteSent(rawlog.Sent{Index: uint32(i), TimeNs: int64(i)})
		if err := s.flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(queued.Nanoseconds())/float64(b.N), "queued-ns/op")
	b.ReportMetric(float64(b.Elapsed())/float64(queued), "x-queued")
}
