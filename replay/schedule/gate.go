package schedule

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/llmbench/llmbench/mmapds"
)

// A Gate lowers, while a run lasts, how much of a worker's plan is released: in-run adaptive
// scale's control. The plan compiles the load at its ceiling; the gate only holds part of it
// back, so what is sent is always a subset of the plan, in the plan's order and at the plan's
// instants. It gates the profile phase (never the warmup) three ways:
//
//   - a concurrency cap below the plan's: units take a profile slot only while fewer than the
//     gate's share of the run's total hold one;
//   - a prefill-concurrency cap likewise;
//   - a keep fraction of the open-loop arrivals: each profile unit whose entry has a fixed
//     instant is kept or thinned out, independently, by a hash of the plan's seed and its
//     entry's plan record against the fraction in force at its instant. Independent thinning
//     of a Poisson process is a Poisson process of the rate times the fraction, and the
//     choice is deterministic: the same seed, record and fraction always choose alike, and a
//     unit kept at a fraction is kept at every larger one;
//   - a number of users n of a user-centric plan (SetUserGrid): each profile unit whose
//     entry's instant lies on user u's grid (mmapds.UserOf) is sent only while u < n, so
//     exactly the first n users send, each on its own grid as the plan placed it; a unit of
//     a user at or past n is thinned out like an arrival the keep fraction drops.
//
// A Gate is set from outside the transport's thread (the worker's command reader) and read by
// its Scheduler in Due: its fields are atomics, read without locks or allocation. After a
// change the transport must be woken (driver.Transport.Wake) so that what the change releases
// goes out now.
type Gate struct {
	part Part
	seed uint64
	// conc and prefill are this worker's caps (-1: none, the plan's).
	conc, prefill atomic.Int64
	// keep is the threshold a unit's hash must be under to be sent; keepAll when every
	// arrival is (no thinning).
	keep atomic.Uint64
	// users is the number of users sent (-1: all); numUsers, rate and startNs the plan's
	// user grid (numUsers 0: no grid, users is not applied).
	users    atomic.Int64
	numUsers int
	rate     float64
	startNs  int64
}

const keepAll = math.MaxUint64

// Gated variables, as the worker protocol's control message names them.
const (
	GateConcurrency = "concurrency"
	GatePrefill     = "prefill_concurrency"
	GateKeep        = "keep"  // a fraction in (0, 1] of the open-loop arrivals
	GateUsers       = "users" // the first n users of a user-centric plan
)

// NewGate returns a gate for part p that holds nothing back; seed chooses the thinned
// arrivals (the plan's seed).
func NewGate(p Part, seed uint64) *Gate {
	g := &Gate{part: p, seed: seed}
	g.conc.Store(-1)
	g.prefill.Store(-1)
	g.keep.Store(keepAll)
	g.users.Store(-1)
	return g
}

// SetUserGrid gives the gate the user grid of a user-centric plan (mmapds.Meta.UserGrid)
// and the profile's start (its smallest profile send offset over the whole plan), which
// GateUsers needs to tell each unit's user. Call it before the run.
func (g *Gate) SetUserGrid(numUsers int, rate float64, startNs int64) {
	g.numUsers, g.rate, g.startNs = numUsers, rate, startNs
}

// Set sets variable (GateConcurrency, GatePrefill: the whole run's total, dealt over shards
// and workers like the plan's slots; GateKeep: the fraction of arrivals sent).
func (g *Gate) Set(variable string, value float64) error {
	switch variable {
	case GateConcurrency, GatePrefill:
		if value < 1 || value != math.Trunc(value) || value > math.MaxInt32 {
			return fmt.Errorf("gate: %s %v: must be a whole number of at least 1", variable, value)
		}
		n := int64(Share(int(value), g.part))
		if variable == GateConcurrency {
			g.conc.Store(n)
		} else {
			g.prefill.Store(n)
		}
	case GateKeep:
		if !(value > 0 && value <= 1) {
			return fmt.Errorf("gate: keep fraction %v: must be in (0, 1]", value)
		}
		if value == 1 {
			g.keep.Store(keepAll)
		} else {
			g.keep.Store(uint64(math.Ldexp(value, 64)))
		}
	case GateUsers:
		if value < 1 || value != math.Trunc(value) || value > math.MaxInt32 {
			return fmt.Errorf("gate: users %v: must be a whole number of at least 1", value)
		}
		g.users.Store(int64(value))
	default:
		return fmt.Errorf("gate: unknown variable %q (want %s, %s, %s or %s)", variable, GateConcurrency, GatePrefill, GateKeep, GateUsers)
	}
	return nil
}

// Cap is the worker's cap on variable (GateConcurrency, GatePrefill), -1 for none.
func (g *Gate) Cap(variable string) int64 {
	if variable == GatePrefill {
		return g.prefill.Load()
	}
	return g.conc.Load()
}

// Keeps says whether the arrival whose entry is plan record index is sent under the fraction
// in force.
func (g *Gate) Keeps(index int32) bool {
	k := g.keep.Load()
	return k == keepAll || Thin(g.seed, index) < k
}

// Sends says whether the open-loop profile unit whose entry is n is sent: kept under the
// fraction in force, and, on a user grid, its user among the first users in force.
func (g *Gate) Sends(n *Node) bool {
	if !g.Keeps(n.Index) {
		return false
	}
	u := g.users.Load()
	return u < 0 || g.numUsers == 0 || int64(mmapds.UserOf(n.At, g.startNs, g.numUsers, g.rate)) < u
}

// Thin is the uniform 64-bit draw that decides whether the arrival of plan record index is
// thinned out: kept at fraction f when Thin < f·2⁶⁴ (splitmix64 of the seed and the record).
func Thin(seed uint64, index int32) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(uint64(uint32(index))+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
