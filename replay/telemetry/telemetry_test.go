package telemetry

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

type fakeSource struct {
	mu     sync.Mutex
	reads  int
	closed bool
}

func (f *fakeSource) gpus() []GPU {
	return []GPU{{Index: 0, UUID: "GPU-a", Name: "Fake"}, {Index: 1, UUID: "GPU-b", Name: "Fake"}}
}

func (f *fakeSource) read(i int, s *rawlog.GPUSample) {
	f.mu.Lock()
	f.reads++
	n := f.reads
	f.mu.Unlock()
	s.PowerMilliwatts, s.EnergyMillijoules, s.GPUUtilPct, s.MemUtilPct = 300000+int64(i), int64(n)*1000, 50, -1
	s.MemUsedBytes, s.SMClockMHz, s.TempC, s.PowerInstantMilliwatts = 1<<30, 1980, 40, 310000
}

func (f *fakeSource) close() error { f.closed = true; return nil }

// Run samples every GPU at each interval instant, on the run's clock, and once more at stop.
func TestRunSamplesOnSchedule(t *testing.T) {
	src := &fakeSource{}
	s := newSampler(src)
	start := time.Now().Add(20 * time.Millisecond)
	stop := make(chan struct{})
	var mu sync.Mutex
	var got []rawlog.GPUSample
	done := make(chan error)
	go func() {
		done <- s.Run(stop, start, 25*time.Millisecond, func(x rawlog.GPUSample) error {
			mu.Lock()
			got = append(got, x)
			mu.Unlock()
			return nil
		})
	}()
	time.Sleep(150 * time.Millisecond)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 6 || len(got)%2 != 0 {
		t.Fatalf("%d samples", len(got))
	}
	for i, x := range got {
		if x.GPU != i%2 || x.UUID != []string{"GPU-a", "GPU-b"}[i%2] || x.PowerMilliwatts != 300000+int64(i%2) || x.MemUtilPct != -1 {
			t.Fatalf("sample %d: %+v", i, x)
		}
		if i >= 2 && x.TimeNs < got[i-2].TimeNs {
			t.Fatalf("sample %d goes back in time", i)
		}
	}
	// The first sample is at the start instant (TimeNs about 0), not before.
	if got[0].TimeNs < 0 || got[0].TimeNs > int64(time.Second) {
		t.Fatalf("first sample at %v", time.Duration(got[0].TimeNs))
	}
	s.Close()
	if !src.closed {
		t.Fatal("source not closed")
	}
}

// An emit error ends Run.
func TestRunStopsOnWriteError(t *testing.T) {
	s := newSampler(&fakeSource{})
	boom := errors.New("disk full")
	err := s.Run(make(chan struct{}), time.Now(), time.Millisecond, func(rawlog.GPUSample) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// Open either finds GPUs through NVML or says plainly why not. LLMBENCH_EXPECT_GPU=1 (set on
// GPU machines) makes absence a failure.
func TestOpen(t *testing.T) {
	s, err := Open()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("error does not wrap ErrUnavailable: %v", err)
		}
		if os.Getenv("LLMBENCH_EXPECT_GPU") == "1" {
			t.Fatalf("NVML expected: %v", err)
		}
		t.Logf("no NVML here: %v", err)
		return
	}
	defer s.Close()
	for _, g := range s.GPUs() {
		t.Logf("GPU %d %s %s", g.Index, g.Name, g.UUID)
	}
	start := time.Now()
	stop := make(chan struct{})
	var got []rawlog.GPUSample
	go func() { time.Sleep(350 * time.Millisecond); close(stop) }()
	if err := s.Run(stop, start, 100*time.Millisecond, func(x rawlog.GPUSample) error { got = append(got, x); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) < 3*len(s.GPUs()) {
		t.Fatalf("%d samples", len(got))
	}
	for _, x := range got {
		t.Logf("%+v", x)
		if x.PowerMilliwatts <= 0 || x.TempC <= 0 || x.SMClockMHz < 0 || x.MemUsedBytes <= 0 || x.UUID == "" {
			t.Errorf("implausible sample %+v", x)
		}
	}
	if e0, e1 := got[0].EnergyMillijoules, got[len(got)-1].EnergyMillijoules; e0 >= 0 && e1 < e0 {
		t.Errorf("energy counter went backwards: %d then %d", e0, e1)
	}
}
