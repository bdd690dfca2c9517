package replay

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Distributed shards (--shard-index I --shard-count N): one machine's part of the plan. Its
// workers then split the shard's part among themselves (sessions.go).
//
// The deal is schedule's (schedule.Allot, one call for a shard's and a worker's share):
// session ordinal k (sessions.go) belongs to distributed shard k mod N, numbered k/N there,
// and concurrency slot j likewise, so a session never splits, each shard replays exactly its
// sessions' records at their planned instants, the union of the shards is the plan, and a
// concurrency ramp opens global slot j at its planned instant on whichever shard and worker
// own it. Every shard anchors
// the plan's t = 0 at one wall-clock instant (StartAt), so no coordinator is needed while
// they run.

// startNoticeAfter is the shortest wait for the start instant that replay announces.
const startNoticeAfter = time.Second

// allot deals the run to part p (schedule.Allot): info's ordinals become the shard's and
// its session count the shard's; cfg, when not nil, gets the worker's slots.
func (info *planInfo) allot(m *mmapds.Meta, p schedule.Part, cfg *schedule.Config) (schedule.Allotment, error) {
	a, err := schedule.Allot(m, info.ord, info.sessions, p, cfg)
	if err != nil {
		return a, err
	}
	info.sessions = a.Sessions
	return a, nil
}

// records counts the records of this (distributed) shard.
func (info *planInfo) records() int {
	n := 0
	for _, o := range info.ord {
		if o != schedule.NotInShard {
			n++
		}
	}
	return n
}

// firstGap is how late a shard may start: the time between the plan's first planned send
// instant and the next distinct one, over the whole plan (every shard computes the same).
// A shard starting later than that would send requests planned after the first instant
// late. It is 0 for a closed loop, or a plan whose sends all share one instant.
func firstGap(p *mmapds.Plan) (time.Duration, error) {
	first, second := int64(-1), int64(-1)
	for i := 0; i < p.Len(); i++ {
		r, _, err := p.Record(i)
		if err != nil {
			return 0, err
		}
		o := r.SendOffsetNs
		switch {
		case o < 0:
		case first < 0 || o < first:
			first, second = o, first
		case o > first && (second < 0 || o < second):
			second = o
		}
	}
	if first < 0 || second < 0 {
		return 0, nil
	}
	return time.Duration(second - first), nil
}

// MaxStartAhead is how far after now a start instant (--start-at) may be: a day. Shards are
// started minutes ahead of their instant (deployments' margins are 20 s to a few minutes); an
// instant further off is a mistake (a wrong year or date), and a replay would hold its
// workers, pinned to their CPUs, for all that time. Instants past year 2262 do not fit the
// run's nanosecond clock at all.
const MaxStartAhead = 24 * time.Hour

// CheckStartAhead refuses a start instant more than MaxStartAhead after now.
func CheckStartAhead(startAt, now time.Time) error {
	if ahead := startAt.Sub(now); ahead > MaxStartAhead {
		return fmt.Errorf("start-at %s is %s from now, more than the %v a start may be ahead (replay/distshard.go MaxStartAhead): give an instant within the next day",
			startAt.UTC().Format(time.RFC3339Nano), aheadWords(ahead), MaxStartAhead)
	}
	return nil
}

// aheadWords says how long ahead d is, in days past two days.
func aheadWords(d time.Duration) string {
	if d >= 48*time.Hour {
		if d == math.MaxInt64 {
			return "over 292 years"
		}
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	}
	return d.Round(time.Second).String()
}

// checkLateStart refuses a start instant that passed more than gap before now.
func checkLateStart(startAt, now time.Time, gap time.Duration) error {
	if late := now.Sub(startAt); late > gap {
		return fmt.Errorf("start-at %s passed %v ago, more than the plan's first gap (%v): this shard would send late; start every shard again with a later --start-at",
			startAt.UTC().Format(time.RFC3339Nano), late.Round(time.Microsecond), gap)
	}
	return nil
}

// shardManifest fills run.json's shard identity and clock state.
func (r *Replay) shardManifest(m *rawlog.Manifest) {
	o := &r.opts
	if o.ShardCount > 0 || !o.StartAt.IsZero() {
		m.Shard = &rawlog.ShardInfo{Index: o.ShardIndex, Count: max(o.ShardCount, 1), RunID: o.RunID}
		if !o.StartAt.IsZero() {
			m.Shard.StartAtUnixNs = o.StartAt.UnixNano()
		}
	}
	m.Clock = readClock()
}

// setupShard applies the distributed shard to info and checks what the shard needs before
// anything starts: its share of the run (returned), a start instant not already too late,
// and source addresses this host has.
func (r *Replay) setupShard(info *planInfo) (schedule.Allotment, error) {
	o := &r.opts
	if o.PlanHash != "" && o.PlanHash != r.plan.HashHex() {
		got, want := rawlog.HashPrefixes(r.plan.HashHex(), o.PlanHash)
		return schedule.Allotment{}, fmt.Errorf("plan %s is plan %s, not the expected %s (--plan-hash)", o.Plan, got, want)
	}
	a, err := info.allot(r.plan.Meta(), schedule.Part{Shard: o.ShardIndex, Shards: o.ShardCount}, nil)
	if err != nil {
		return schedule.Allotment{}, err
	}
	if !o.StartAt.IsZero() {
		if err := CheckStartAhead(o.StartAt, time.Now()); err != nil {
			return schedule.Allotment{}, err
		}
	}
	if !o.StartAt.IsZero() || o.Rendezvous != "" {
		if r.lateGap, err = firstGap(r.plan); err != nil {
			return schedule.Allotment{}, err
		}
	}
	if !o.StartAt.IsZero() {
		if err := checkLateStart(o.StartAt, time.Now(), r.lateGap); err != nil {
			return schedule.Allotment{}, err
		}
	}
	if err := checkLocalAddrs(o.LocalAddrs); err != nil {
		return schedule.Allotment{}, err
	}
	return a, nil
}

// checkLocalAddrs refuses a source address this host cannot bind (not assigned to it).
func checkLocalAddrs(addrs []netip.Addr) error {
	for _, a := range addrs {
		l, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			return fmt.Errorf("local-addr %s: this host cannot use it as a source address: %w", a, err)
		}
		l.Close()
	}
	return nil
}

// shardWords names the shard in notices ("" when not sharded).
func (r *Replay) shardWords() string {
	if r.opts.ShardCount <= 1 {
		return ""
	}
	return fmt.Sprintf("'s shard %d of %d", r.opts.ShardIndex, r.opts.ShardCount)
}

// awaitStart, with a shared start instant (StartAt or the rendezvous's), sleeps until it
// (the workers, told it already, sleep on their own) and records in run.json how late after
// it this process woke: the same timerfd wake the workers' dispatchers use, on the same
// clocks and load. A wait of a second or more is announced, with the instant. An
// interruption ends the wait early and leaves the skew 0.
func (r *Replay) awaitStart(start time.Time) {
	m := &r.manifest
	if m.Shard == nil || m.Shard.StartAtUnixNs == 0 {
		return
	}
	if d := time.Until(start); d >= startNoticeAfter {
		r.notice(fmt.Sprintf("replay%s: waiting %s for --start-at %s (%s local time); nothing is sent before then, Ctrl-C stops",
			r.shardWords(), aheadWords(d), start.UTC().Format(time.RFC3339Nano), start.Local().Format("2006-01-02 15:04:05 MST")))
	}
	// Coarse wait first (interruptible), then a timerfd for the last milliseconds.
	if d := time.Until(start) - 5*time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.stopReq:
			t.Stop()
			return
		}
	}
	var stop atomic.Bool
	sl, err := newSleeper(&stop)
	if err != nil {
		return
	}
	defer sl.close()
	sl.sleep(time.Until(start))
	skew := time.Since(start)
	m.Shard.StartSkewNs = int64(skew)
	if err := r.writeManifest(); err != nil {
		r.notice("replay: " + err.Error())
	}
}

// CopyPlan copies the plan file src to dst (through a temporary file beside it, renamed once
// whole and synced) and checks that the copy is intact and is plan wantHash; on any error dst
// is not created. Deployments run it before replay so that every shard starts from the plan
// the run was generated for (replay copy-plan).
func CopyPlan(src, dst, wantHash string) (err error) {
	if !rawlog.IsPlanHash(wantHash) {
		return fmt.Errorf("copy-plan: plan hash %q: want 64 lower-case hex digits", wantHash)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy-plan: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".copy-plan-*")
	if err != nil {
		return fmt.Errorf("copy-plan: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, in); err != nil {
		return fmt.Errorf("copy-plan: %s to %s: %w", src, dst, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("copy-plan: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("copy-plan: %w", err)
	}
	p, err := mmapds.Open(tmp.Name(), mmapds.Options{}) // hashes the whole content
	if err != nil {
		return fmt.Errorf("copy-plan: %s: %w", src, err)
	}
	got := p.HashHex()
	p.Close()
	if got != wantHash {
		a, b := rawlog.HashPrefixes(got, wantHash)
		return fmt.Errorf("copy-plan: %s is plan %s, not the expected %s", src, a, b)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("copy-plan: %w", err)
	}
	return nil
}
