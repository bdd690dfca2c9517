package replay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmbench/llmbench/replay/schedule"
)

// Control is a setting of the workers' release gate (schedule.Gate): in-run adaptive scale's
// control value in the gate's terms. Variable is schedule.GateConcurrency or GatePrefill (a
// total over the run, dealt over the workers like the plan's slots) or schedule.GateKeep (the
// fraction of the plan's open-loop arrivals sent) or schedule.GateUsers (the first users of a
// user-centric plan that send).
type Control struct {
	Variable string  `json:"variable"`
	Value    float64 `json:"value"`
}

// controlAckTimeout bounds how long Control waits for every worker to apply a change.
const controlAckTimeout = 5 * time.Second

// The control messages of the worker protocol (proc.go):
//
//	coordinator -> worker:  control <seq> <variable> <value>   set the gate
//	worker -> coordinator:  controlled <seq> <run ns>          applied: releases from that
//	                                                           instant on see the new value
//
// (or "error ..." when the value is refused, which the coordinator checked beforehand).

// checkControl refuses a control the gate would refuse, and a variable the plan has no cap
// for, before any worker starts.
func (r *Replay) checkControl(c *Control) error {
	if err := schedule.NewGate(schedule.Part{}, 0).Set(c.Variable, c.Value); err != nil {
		return err
	}
	m := r.plan.Meta()
	switch c.Variable {
	case schedule.GateConcurrency:
		if m.Concurrency <= 0 {
			return fmt.Errorf("plan %s: control of concurrency needs a plan with a concurrency (its ceiling)", r.opts.Plan)
		}
	case schedule.GatePrefill:
		if m.PrefillConcurrency <= 0 {
			return fmt.Errorf("plan %s: control of prefill concurrency needs a plan with a prefill concurrency (its ceiling)", r.opts.Plan)
		}
	case schedule.GateUsers:
		users, _ := m.UserGrid()
		if users <= 0 {
			return fmt.Errorf("plan %s: control of users needs a user-centric plan (--user-centric-rate, --num-users: its ceiling)", r.opts.Plan)
		}
		if c.Value > float64(users) {
			return fmt.Errorf("plan %s: control of users %v: the plan has only %d users (--num-users, its ceiling)", r.opts.Plan, c.Value, users)
		}
	case schedule.GateKeep:
		if !r.info.profileOpen {
			return fmt.Errorf("plan %s: control of the request rate needs a plan with a request rate (open-loop arrivals)", r.opts.Plan)
		}
	}
	if r.opts.ShardCount > 1 {
		// The rendezvous channel carries the start instant only (wire protocol 1): each
		// shard's controller would judge its own part of the load and decide alone.
		return errors.New("in-run control (adaptive scale) of a distributed run: the shards' rendezvous carries no decisions yet; run it on one machine or use --search")
	}
	return nil
}

// controller sends control changes to the running workers and waits for them to apply them.
type controller struct {
	mu    sync.Mutex // one change at a time
	seq   int64
	procs []*proc
}

// set sends the change to every worker and returns the latest instant (run clock, ns) at which
// one applied it: from then on every worker releases under the new value.
func (c *controller) set(variable string, value float64) (int64, error) {
	if err := schedule.NewGate(schedule.Part{}, 0).Set(variable, value); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	msg := "control " + strconv.FormatInt(c.seq, 10) + " " + variable + " " + strconv.FormatFloat(value, 'g', -1, 64)
	for _, p := range c.procs {
		p.send(msg)
	}
	applied := int64(-1)
	deadline := time.After(controlAckTimeout)
	for _, p := range c.procs {
		for got := false; !got; {
			select {
			case a := <-p.acks:
				if a.seq == c.seq {
					got = true
					applied = max(applied, a.ns)
				}
			case <-p.exited:
				got = true // it sends nothing more: no change to wait for
			case <-deadline:
				return applied, fmt.Errorf("worker %d did not apply control %s %v within %v", p.id, variable, value, controlAckTimeout)
			}
		}
	}
	if applied < 0 {
		return 0, errors.New("no worker is running")
	}
	return applied, nil
}

// controlAck is a worker's "controlled" line.
type controlAck struct{ seq, ns int64 }

// parseControlled reads the rest of a "controlled" line.
func parseControlled(rest string) (controlAck, bool) {
	f := strings.Fields(rest)
	if len(f) != 2 {
		return controlAck{}, false
	}
	seq, err1 := strconv.ParseInt(f[0], 10, 64)
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	return controlAck{seq, ns}, err1 == nil && err2 == nil
}

// parseControl reads a worker's "control" command: its sequence number and setting.
func parseControl(cmd string) (seq int64, c Control, ok bool) {
	rest, ok := strings.CutPrefix(cmd, "control ")
	if !ok {
		return 0, Control{}, false
	}
	f := strings.Fields(rest)
	if len(f) != 3 {
		return 0, Control{}, false
	}
	seq, err1 := strconv.ParseInt(f[0], 10, 64)
	v, err2 := strconv.ParseFloat(f[2], 64)
	return seq, Control{Variable: f[1], Value: v}, err1 == nil && err2 == nil
}
