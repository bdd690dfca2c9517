// Package schedule holds replay's scheduling rules, once, with no I/O: which requests a
// worker owns, and which of them may be sent now. It starts no goroutine, makes no system
// call and reads no clock: the transports (replay's event loop and its net client) pass the
// time in and do the sending, so every rule can be tested on a virtual clock.
//
// # Parts
//
// A run is dealt over machines (distributed shards) and each machine's worker processes
// (Part). Sessions and concurrency slots are dealt alike: item k of the whole run goes to
// shard k mod Shards, is numbered k/Shards there, and that number goes to worker
// (k/Shards) mod Workers. Slots returns a part's concurrency slots with the instant each
// opens under the concurrency ramp; Share counts them. Allot is the one call that deals a
// run to a part: the shard's sessions renumbered, the plan's caps checked against the shard
// count (caps.go), the shard's concurrency and most workers, and a worker's slots; the
// coordinator calls it for its shard, each worker for itself. CheckShard is the rule a shard
// identity obeys, whoever words its faults (replay's options, deploy/shardenv).
//
// # Graph
//
// A worker's part of the plan is a Graph: nodes (requests) with parent edges, grouped in
// units that each hold one concurrency slot, from the moment their entry node is released
// until every node of theirs has ended (AIPerf's session concurrency). A unit's entry has
// no parents and is released at its fixed instant (open loop) or when a slot is free
// (closed loop); any other node is released once all its parents have ended, its think time
// after the last of them, and never before its own fixed instant when it has one. A unit may
// have other roots (nodes without parents): they are released their think time after its
// entry. LoadGraph builds the graph a plan's graph section describes (agentic workloads). A Strict
// node whose parent failed is not released, nor is anything below it: they are skipped
// and counted. LoadChains builds today's plans' graph, where each later turn of a session
// has its previous turn as its one parent.
//
// # Scheduler
//
// A Scheduler walks one graph for one worker: Due(now) hands out what may be sent now,
// Ended(node, end, ok) takes what finished, NextWake says when to call Due again, Stop ends
// the run early (an interruption, a failure). It keeps the concurrency slots and their
// ramp, the open-loop instants (a late request never delays the next; one that finds no
// free slot waits for one, first come first served, and is ready when it gets it), the
// warmup gate (a closed-loop profile waits until the worker's closed-loop warmup has
// ended), each phase's own caps and ramps (limit.go: the warmup's from the run's start, the
// profile's from its start), the prefill cap (a released request holds a prefill slot until
// the transport says Prefilled, at its first response byte, or Ended), think times and the
// benchmark duration (nothing starts after the profile start
// plus the duration; what still runs a grace period later is to be cut).
//
// # Imports
//
// mmapds (the plan's records and caps) and the standard library only: never replay, a
// transport, or anything that does I/O.
package schedule
