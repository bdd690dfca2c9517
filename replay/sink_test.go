package replay

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
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

// gatedFile holds its first write until release is closed, then fails it and every later
// write with ENOSPC, counting them: a disk that fills while a write is in flight.
type gatedFile struct {
	entered chan struct{} // closed when the first write starts
	release chan struct{}
	mu      sync.Mutex
	writes  int
}

func (f *gatedFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.writes++
	first := f.writes == 1
	f.mu.Unlock()
	if first {
		close(f.entered)
		<-f.release
	}
	return 0, &os.PathError{Op: "write", Path: "gated", Err: syscall.ENOSPC}
}

func (f *gatedFile) Sync() error  { return nil }
func (f *gatedFile) Close() error { return nil }

// After the first failed write nothing more reaches the file, not even frames queued while
// that write was in flight: the sink writes once, fails, and says so to every caller.
func TestSinkStopsAfterFailedWrite(t *testing.T) {
	f := &gatedFile{entered: make(chan struct{}), release: make(chan struct{})}
	s := newLogSink(f)
	if _, err := s.Write([]byte("first|")); err != nil {
		t.Fatal(err)
	}
	<-f.entered // the writer goroutine is inside write(2) with the first frame
	if _, err := s.Write([]byte("queued while writing|")); err != nil {
		t.Fatalf("queued before the failure is known: %v", err)
	}
	close(f.release)
	if err := s.flush(); err == nil {
		t.Fatal("flush after a failed write returned no error")
	}
	if _, err := s.Write([]byte("after|")); err == nil {
		t.Fatal("write after a failed write returned no error")
	}
	if err := s.close(); err == nil {
		t.Fatal("close after a failed write returned no error")
	}
	if f.writes != 1 {
		t.Fatalf("%d writes reached the file, want 1 (the one that failed)", f.writes)
	}
}
