package replay

import "time"

// Observer watches a run from the coordinator's process, so from the CPUs the workers are not
// pinned to: it sees the progress counts the workers already report over their pipes and may
// read the run directory (the workers' raw logs grow there record by record), and it never
// adds work to a worker. The live OpenTelemetry export (package otelpush) is one.
type Observer interface {
	// Start is called once, when the workers have been given the start instant.
	Start(RunInfo)
	// Progress is called about four times a second with the workers' cumulative counts:
	// requests sent, done (whatever their outcome) and errored.
	Progress(sent, done, errs int64)
	// Finish is called once every worker has exited (each raw log is complete) and Run waits
	// for it to return: an observer flushes what it holds here.
	Finish()
}

// RunInfo is what an Observer is told of the run at its start.
type RunInfo struct {
	// Dir is the run directory; PlanPath the plan replayed, PlanHash its hex SHA-256.
	Dir, PlanPath, PlanHash string
	// StartUnixNs is the run's t = 0 (run.json start_unix_ns).
	StartUnixNs int64
	// URLs are the base URLs requests go to.
	URLs []string
	// Control changes the workers' release gate (Options.Control) and returns the run-clock
	// instant from which every worker releases under the new value; nil when the run has no
	// gate. It blocks until the workers applied it (or a few seconds).
	Control func(variable string, value float64) (appliedNs int64, err error)
	// Stop asks the run to end gracefully, as an interruption would (Replay.Stop).
	Stop func()
}

// observePeriod is how often the observer is given the progress counts.
const observePeriod = 250 * time.Millisecond

// observeLoop gives opts.Observer the run's start, the workers' counts every observePeriod
// until stop, one last time after, and then Finish; done is closed once Finish returned.
func (r *Replay) observeLoop(procs []*proc, start time.Time, startNs int64, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ob := r.opts.Observer
	if ob == nil {
		return
	}
	info := RunInfo{Dir: r.dir, PlanPath: r.absPlan(), PlanHash: r.plan.HashHex(), StartUnixNs: startNs, URLs: r.opts.URLs, Stop: r.Stop}
	if r.opts.Control != nil {
		info.Control = (&controller{procs: procs}).set
	}
	ob.Start(info)
	t := time.NewTicker(observePeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			ob.Progress(procCounts(procs))
			ob.Finish()
			return
		case <-t.C:
			if time.Now().After(start) {
				ob.Progress(procCounts(procs))
			}
		}
	}
}

// Observers is one Observer made of several (nil ones dropped; nil when none is left): each
// is told everything, in order.
func Observers(obs ...Observer) Observer {
	var list observerList
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type observerList []Observer

func (l observerList) Start(info RunInfo) {
	for _, o := range l {
		o.Start(info)
	}
}

func (l observerList) Progress(sent, done, errs int64) {
	for _, o := range l {
		o.Progress(sent, done, errs)
	}
}

func (l observerList) Finish() {
	for _, o := range l {
		o.Finish()
	}
}
