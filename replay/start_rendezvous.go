package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/rendezvous"
)

// rendezvousStart is the StartSource of a shard meeting the others at Options.Rendezvous
// (package rendezvous): the instant shard 0 picks once every shard is ready. It records in
// run.json the instant and how it was agreed.
type rendezvousStart struct{ r *Replay }

func (s rendezvousStart) StartInstant(_ time.Time, stop <-chan struct{}) (time.Time, error) {
	r := s.r
	o := &r.opts
	m := &r.manifest
	cfg := rendezvous.Config{Addr: o.Rendezvous, Index: o.ShardIndex, Count: o.ShardCount, PlanHash: r.plan.HashHex(),
		RunID: o.RunID, Host: m.Host, Clock: m.Clock, Gap: r.lateGap, Timeout: o.RendezvousTimeout,
		Notice: func(s string) { r.notice("replay: " + s) }}
	res, err := rendezvous.Meet(cfg, stop)
	if errors.Is(err, rendezvous.ErrStopped) {
		return time.Time{}, ErrStartStopped
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
	case !o.StartAt.IsZero() || o.Start != nil:
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
