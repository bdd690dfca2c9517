package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/telemetry"
)

// TelemetryLogName is the GPU telemetry log's file name in the run directory.
const TelemetryLogName = "telemetry.rawlog"

// startTelemetry starts the GPU sampler, or notes in one line why there is none.
func (r *Replay) startTelemetry(start time.Time, stop <-chan struct{}, done chan<- error) {
	m := &r.manifest
	if r.opts.GPUSampleInterval < 0 {
		m.TelemetryNote = "GPU telemetry turned off"
		done <- nil
		return
	}
	if r.sm.dcgm {
		done <- nil
		return
	}
	s, err := telemetry.Open()
	if err != nil {
		m.TelemetryNote = err.Error()
		r.notice("replay: no GPU telemetry: " + err.Error())
		done <- nil
		return
	}
	f, err := os.OpenFile(filepath.Join(r.dir, TelemetryLogName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		s.Close()
		m.TelemetryNote = err.Error()
		done <- err
		return
	}
	lw, err := rawlog.NewWriter(f, rawlog.Header{Worker: -1, PID: os.Getpid(), CPU: -1, PlanHash: r.plan.HashHex(), StartUnixNs: start.UnixNano()})
	if err != nil {
		f.Close()
		s.Close()
		done <- err
		return
	}
	m.TelemetryLog = TelemetryLogName
	names := make([]string, 0, len(s.GPUs()))
	for _, g := range s.GPUs() {
		names = append(names, fmt.Sprintf("%d:%s:%s", g.Index, g.Name, g.UUID))
	}
	m.Options["gpus"] = names
	go func() {
		err := s.Run(stop, start, r.opts.GPUSampleInterval, lw.WriteGPU)
		if cerr := lw.Close(rawlog.Footer{TimeNs: int64(time.Since(start)), Status: rawlog.StatusComplete}); err == nil {
			err = cerr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		s.Close()
		done <- err
	}()
}
