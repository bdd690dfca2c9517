package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/rendezvous"
)

// errStartStopped is startInstant's error when the run was interrupted while it waited.
var errStartStopped = errors.New("interrupted before the start")

// startInstant is the run's start instant, asked once every worker is ready (plan mapped,
// CPU pinned, calibrated, nothing connected): from the rendezvous of the shards
// (Options.Rendezvous), the fixed StartAt (refused when it passed more than the plan's first
// gap before ready), or StartDelay after ready. An error fails the run before anything is
// sent; errStartStopped ends it interrupted, nothing sent.
func (r *Replay) startInstant(ready time.Time) (time.Time, error) {
	o := &r.opts
	switch {
	case o.Rendezvous != "":
		return r.meetShards()
	case !o.StartAt.IsZero():
		if err := checkLateStart(o.StartAt, ready, r.lateGap); err != nil {
			return time.Time{}, err
		}
		return o.StartAt, nil
	}
	return ready.Add(o.StartDelay), nil
}

// meetShards waits at the rendezvous for every shard and records in run.json the instant
// shard 0 chose and how.
func (r *Replay) meetShards() (time.Time, error) {
	o := &r.opts
	m := &r.manifest
	cfg := rendezvous.Config{Addr: o.Rendezvous, Index: o.ShardIndex, Count: o.ShardCount, PlanHash: r.plan.HashHex(),
		RunID: o.RunID, Host: m.Host, Clock: m.Clock, Gap: r.lateGap, Timeout: o.RendezvousTimeout,
		Notice: func(s string) { r.notice("replay: " + s) }}
	res, err := rendezvous.Meet(cfg, r.stopReq)
	if errors.Is(err, rendezvous.ErrStopped) {
		return time.Time{}, errStartStopped
	}
	if err != nil {
		return time.Time{}, err
	}
	m.Shard.StartAtUnixNs = res.Start.UnixNano()
	m.Shard.Rendezvous = &rawlog.RendezvousInfo{Addr: o.Rendezvous, WaitedNs: int64(res.Waited), MaxRTTNs: int64(res.MaxRTT),
		LeadNs: int64(res.Lead), ClockOffsetNs: int64(res.ClockOffset), ClockOffsetErrorNs: int64(res.ClockOffsetError)}
	return res.Start, nil
}

// checkRendezvous checks the rendezvous options (normalize).
func (o *Options) checkRendezvous() error {
	if o.Rendezvous == "" {
		if o.RendezvousTimeout != 0 {
			return errors.New("rendezvous-timeout: without --rendezvous there is nothing to wait for")
		}
		return nil
	}
	switch {
	case !o.StartAt.IsZero():
		return fmt.Errorf("rendezvous %s and start-at: the rendezvous picks the start instant; give one of them", o.Rendezvous)
	case o.ShardCount < 1:
		return fmt.Errorf("rendezvous %s: needs the shard identity (--shard-index and --shard-count, or the environment)", o.Rendezvous)
	case o.RendezvousTimeout < 0:
		return fmt.Errorf("rendezvous-timeout %v: must be positive", o.RendezvousTimeout)
	}
	if err := rendezvous.CheckAddr(o.Rendezvous); err != nil {
		return err
	}
	if o.RendezvousTimeout == 0 {
		o.RendezvousTimeout = rendezvous.DefaultTimeout
	}
	return nil
}
