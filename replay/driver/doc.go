// Package driver is what a replay worker's two HTTP clients (packages eventloop and
// netclient) share, so that neither writes it again: the contract between the worker and the
// transport it runs (Transport, Log, Worker: the plan, the scheduler, the targets, the
// clock), the stop protocol (Stop, and Units.Stopped on the scheduler's side), each running
// unit's state recycled through a free list (Units), waiting for a planned instant (WakeAt,
// SleepUntil, SpinTo over a timerfd Sleeper), how an exchange's end becomes an outcome
// (Settle, CountedOutcome, NotSentRecord), live history (Live, History), the first token
// that frees a prefill slot (FirstToken) and the connections' source addresses
// (LocalAddrPicker).
//
// It sends nothing itself. It imports schedule, http1, endpoint, mmapds, rawlog and
// internal/jsonwire, never replay or either client.
package driver
