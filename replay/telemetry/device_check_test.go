//go:build cgo && linux

package telemetry

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// TestDeviceAgainstNvidiaSMI checks our NVML readings against nvidia-smi on a real GPU. It runs
// only where LLMBENCH_DEVICE_CHECK=1 (a GPU machine; see scripts/device-check.sh): idle, then
// loaded by the command in LLMBENCH_GPU_LOAD, then idle again, sampling both at 100 ms.
func TestDeviceAgainstNvidiaSMI(t *testing.T) {
	if os.Getenv("LLMBENCH_DEVICE_CHECK") != "1" {
		t.Skip("set LLMBENCH_DEVICE_CHECK=1 on a GPU machine")
	}
	s, err := Open()
	if err != nil {
		t.Fatalf("NVML: %v", err)
	}
	defer s.Close()
	for _, g := range s.GPUs() {
		t.Logf("GPU %d %s %s", g.Index, g.Name, g.UUID)
	}
	const idle, load = 4 * time.Second, 10 * time.Second
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// nvidia-smi in its own loop, timestamped on arrival with our clock.
	smi := exec.CommandContext(ctx, "nvidia-smi", "-i", "0",
		"--query-gpu=power.draw,power.draw.instant,utilization.gpu,utilization.memory,memory.used,clocks.sm,temperature.gpu",
		"--format=csv,noheader,nounits", "-lms", "100")
	out, err := smi.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	smi.Stderr = os.Stderr
	if err := smi.Start(); err != nil {
		t.Fatalf("nvidia-smi: %v", err)
	}
	type row struct {
		t    time.Duration
		vals []float64
	}
	var smiRows []row
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			at := time.Since(start)
			var v []float64
			for _, f := range strings.Split(sc.Text(), ",") {
				x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil {
					x = math.NaN()
				}
				v = append(v, x)
			}
			mu.Lock()
			smiRows = append(smiRows, row{at, v})
			mu.Unlock()
		}
	}()

	var ours []rawlog.GPUSample
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Run(stop, start, 100*time.Millisecond, func(x rawlog.GPUSample) error {
			if x.GPU == 0 {
				ours = append(ours, x)
			}
			return nil
		})
	}()

	time.Sleep(idle)
	loadStart := time.Since(start)
	var loadCmd *exec.Cmd
	if c := os.Getenv("LLMBENCH_GPU_LOAD"); c != "" {
		loadCmd = exec.Command("bash", "-c", c)
		loadCmd.Stdout, loadCmd.Stderr = os.Stderr, os.Stderr
		if err := loadCmd.Start(); err != nil {
			t.Fatalf("load: %v", err)
		}
	}
	time.Sleep(load)
	loadEnd := time.Since(start)
	if loadCmd != nil {
		loadCmd.Process.Kill()
		loadCmd.Wait()
	}
	time.Sleep(idle)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel()
	smi.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(ours) < 100 || len(smiRows) < 50 {
		t.Fatalf("too few samples: ours %d, nvidia-smi %d", len(ours), len(smiRows))
	}

	// Compare over the steady middle of each phase, leaving ramp-up and ramp-down out.
	type window struct {
		name     string
		from, to time.Duration
	}
	windows := []window{
		{"idle", 500 * time.Millisecond, loadStart - 200*time.Millisecond},
		{"load", loadStart + 3*time.Second, loadEnd - 500*time.Millisecond},
	}
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	median := func(xs []float64) float64 {
		ys := append([]float64(nil), xs...)
		sort.Float64s(ys)
		return ys[len(ys)/2]
	}
	fmt.Printf("%-5s %-22s %12s %12s\n", "phase", "quantity", "llmbench", "nvidia-smi")
	for _, w := range windows {
		var pw, pwi, gu, mu2, mem, clk, tmp []float64
		var e0, e1 int64 = -1, -1
		var t0, t1 int64
		var integral float64
		var prev *rawlog.GPUSample
		for i := range ours {
			x := &ours[i]
			at := time.Duration(x.TimeNs)
			if at < w.from || at > w.to {
				continue
			}
			pw = append(pw, float64(x.PowerMilliwatts)/1000)
			pwi = append(pwi, float64(x.PowerInstantMilliwatts)/1000)
			gu = append(gu, float64(x.GPUUtilPct))
			mu2 = append(mu2, float64(x.MemUtilPct))
			mem = append(mem, float64(x.MemUsedBytes)/(1<<20))
			clk = append(clk, float64(x.SMClockMHz))
			tmp = append(tmp, float64(x.TempC))
			if e0 < 0 {
				e0, t0 = x.EnergyMillijoules, x.TimeNs
			}
			e1, t1 = x.EnergyMillijoules, x.TimeNs
			// PowerMilliwatts is NVML's one-second average, which lags a bursty load; the
			// energy counter is checked against the integral of the instantaneous reading.
			if prev != nil && prev.PowerInstantMilliwatts >= 0 && x.PowerInstantMilliwatts >= 0 {
				integral += float64(prev.PowerInstantMilliwatts+x.PowerInstantMilliwatts) / 2 / 1000 * float64(x.TimeNs-prev.TimeNs) / 1e9
			}
			prev = x
		}
		var spw, spwi, sgu, smu, smem, sclk, stmp []float64
		for _, r := range smiRows {
			if r.t < w.from || r.t > w.to || len(r.vals) < 7 {
				continue
			}
			spw, spwi, sgu, smu = append(spw, r.vals[0]), append(spwi, r.vals[1]), append(sgu, r.vals[2]), append(smu, r.vals[3])
			smem, sclk, stmp = append(smem, r.vals[4]), append(sclk, r.vals[5]), append(stmp, r.vals[6])
		}
		if len(pw) < 10 || len(spw) < 5 {
			t.Fatalf("%s: too few samples in window: ours %d, nvidia-smi %d", w.name, len(pw), len(spw))
		}
		energyJ := float64(e1-e0) / 1000
		secs := float64(t1-t0) / 1e9
		fmt.Printf("%-5s %-22s %12.1f %12.1f\n", w.name, "power W (1 s average)", mean(pw), mean(spw))
		fmt.Printf("%-5s %-22s %12.1f %12.1f\n", w.name, "power W (instant)", mean(pwi), mean(spwi))
		fmt.Printf("%-5s %-22s %12.1f %12.1f  (integral of our instant power over %.2f s)\n", w.name, "energy J (counter)", energyJ, integral, secs)
		fmt.Printf("%-5s %-22s %12.1f %12.1f\n", w.name, "GPU util % (median)", median(gu), median(sgu))
		fmt.Printf("%-5s %-22s %12.1f %12.1f\n", w.name, "mem util % (median)", median(mu2), median(smu))
		fmt.Printf("%-5s %-22s %12.0f %12.0f\n", w.name, "memory used MiB (med)", median(mem), median(smem))
		fmt.Printf("%-5s %-22s %12.0f %12.0f\n", w.name, "SM clock MHz (median)", median(clk), median(sclk))
		fmt.Printf("%-5s %-22s %12.0f %12.0f\n", w.name, "temperature C (median)", median(tmp), median(stmp))

		rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-9) }
		if r := rel(mean(pw), mean(spw)); r > 0.05 {
			t.Errorf("%s: mean power %.1f W vs nvidia-smi %.1f W (%.1f%% apart, want ≤ 5%%)", w.name, mean(pw), mean(spw), 100*r)
		}
		if r := rel(energyJ, integral); r > 0.05 {
			t.Errorf("%s: energy counter %.1f J vs power integral %.1f J (%.1f%% apart, want ≤ 5%%)", w.name, energyJ, integral, 100*r)
		}
		if d := math.Abs(median(gu) - median(sgu)); d > 5 {
			t.Errorf("%s: GPU util median %.0f%% vs nvidia-smi %.0f%%", w.name, median(gu), median(sgu))
		}
		if d := math.Abs(median(mem) - median(smem)); d > 64 {
			t.Errorf("%s: memory used %.0f MiB vs nvidia-smi %.0f MiB", w.name, median(mem), median(smem))
		}
		if d := math.Abs(median(tmp) - median(stmp)); d > 3 {
			t.Errorf("%s: temperature %.0f C vs nvidia-smi %.0f C", w.name, median(tmp), median(stmp))
		}
		if w.name == "load" && os.Getenv("LLMBENCH_GPU_LOAD") != "" && median(gu) < 80 {
			t.Errorf("load: GPU util median %.0f%%, the load did not load the GPU", median(gu))
		}
	}
}
