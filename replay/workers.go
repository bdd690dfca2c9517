package replay

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/replay/schedule"
)

// setupWorkers decides how many worker processes run and on which CPUs (r.cpus), for the
// shard's share of the plan: one per CPU unless Options.Workers says otherwise, no
// more than the plan has sessions and slots, and, when one process cannot hold the open
// files its share of the concurrency needs, as many more as it takes, sharing the CPUs
// (workersForFiles): replay says so in one line and in run.json (options.workers_note,
// options.workers_per_cpu).
func (r *Replay) setupWorkers(share schedule.Allotment) error {
	o, info, shardC := &r.opts, r.info, share.Concurrency
	cpus, n, cpuWhy, err := o.workerCPUs()
	if err != nil {
		return err
	}
	if cpuWhy != "" {
		r.notice("replay: " + cpuWhy)
	}
	if o.CPUs == nil && o.LocalPart.Count > 1 {
		r.partCPUs = cpus
	}
	want := n
	most := shardC // every worker needs a slot and a session
	if info.sessions > 0 && (most <= 0 || info.sessions < most) {
		most = info.sessions
	}
	// ... and a slot of every cap the plan has (the prefill cap's too).
	mw, what := share.MaxWorkers, share.MaxWorkersCap
	if mw > 0 && (most <= 0 || mw < most) {
		most = mw
	} else {
		mw = 0
	}
	if most > 0 && n > most {
		n = most
	}
	if n < want {
		if mw > 0 {
			r.notice(fmt.Sprintf("replay: using %d workers, not %d: the plan%s has %s %d for them", n, want, r.shardWords(), what, mw))
		} else {
			r.notice(fmt.Sprintf("replay: using %d workers, not %d: the plan%s has %d sessions and concurrency %d", n, want, r.shardWords(), info.sessions, shardC))
		}
	}
	// Raised here, before any worker exists; each worker raises its own too.
	soft, hard, _ := raiseFileLimit()
	if k := workersForFiles(shardC, soft); k > n && k <= maxWorkersPerCPU*len(cpus) && (most <= 0 || k <= most) {
		r.workersNote = fmt.Sprintf("concurrency %d needs %d worker processes: each holds an open file per stream and may hold %d", shardC, k, soft)
		if !o.NoPin {
			r.workersNote += fmt.Sprintf(", so they share CPUs %s, up to %d to a CPU", formatCPUs(cpus), (k+len(cpus)-1)/len(cpus))
		}
		r.notice("replay: " + r.workersNote)
		n = k
	}
	if err := checkFileLimit(shardC, n, soft, hard); err != nil {
		return err
	}
	r.cpus = make([]int, n)
	for i := range r.cpus {
		r.cpus[i] = -1
		if !o.NoPin {
			r.cpus[i] = cpus[i%len(cpus)]
		}
	}
	if !o.NoPin {
		r.perCPU = (n + len(cpus) - 1) / len(cpus)
	}
	r.planned = recordsPerWorker(info.ord, n)
	return nil
}

// workerCPUs returns the CPUs workers may be pinned to and how many workers the options ask
// for (before the plan lowers it), checking them before anything is created rather than
// letting every worker fail to pin itself. Without CPUs, they are those this process may
// use, narrowed by its container's cgroup and LocalPart (cgroup.go); why then says how
// ("" when nothing narrowed them).
func (o *Options) workerCPUs() (cpus []int, n int, why string, err error) {
	cpus = o.CPUs
	if cpus == nil {
		if cpus, err = allowedCPUs(); err != nil {
			return nil, 0, "", err
		}
		all := cpus
		if cpus, why, err = narrowCPUs(cpus, readCgroupCPU("/"), o.LocalPart); err != nil {
			return nil, 0, "", err
		}
		if why != "" {
			why = fmt.Sprintf("workers on CPUs %s of %s: %s", formatCPUs(cpus), formatCPUs(all), why)
		}
	} else if !o.NoPin {
		if err := CheckCPUs(cpus); err != nil {
			return nil, 0, "", fmt.Errorf("cpus %s: %w", formatCPUs(cpus), err)
		}
	}
	if len(cpus) == 0 {
		return nil, 0, "", errors.New("cpus: no CPU to run workers on")
	}
	n = o.Workers
	if n == 0 {
		n = len(cpus)
	}
	if n > len(cpus) && !o.NoPin {
		because := ""
		if why != "" {
			because = "; " + why
		}
		return nil, 0, "", fmt.Errorf("workers %d: each worker needs its own CPU and cpus has %d (%s%s)", n, len(cpus), formatCPUs(cpus), because)
	}
	return cpus, n, why, nil
}
