package rawlog

// ShardInfo is run.json's "shard": which part of a distributed run this run directory holds
// (replay --shard-index/--shard-count), and how its start matched the shared instant.
type ShardInfo struct {
	// Index is the shard's number, 0 <= Index < Count.
	Index int `json:"index"`
	// Count is the number of shards the plan was split into.
	Count int `json:"count"`
	// RunID names the distributed run (--run-id), the same on every shard; "" when not given.
	RunID string `json:"run_id,omitempty"`
	// StartAtUnixNs is the --start-at instant, Unix ns (0: none given, the shard started on
	// its own); the run's start_unix_ns is then exactly this instant.
	StartAtUnixNs int64 `json:"start_at_unix_ns,omitempty"`
	// StartSkewNs is how late after StartAtUnixNs the shard's coordinator, which had slept
	// until it, observed the instant on its wall clock: what this shard adds to the spread of
	// the shards' starts besides its clock's error (ClockState). 0 without StartAtUnixNs.
	StartSkewNs int64 `json:"start_skew_ns"`
	// Rendezvous says how the shards agreed on StartAtUnixNs when they met before the start
	// (replay --rendezvous); nil with a fixed --start-at.
	Rendezvous *RendezvousInfo `json:"rendezvous,omitempty"`
}

// RendezvousInfo is run.json's "shard.rendezvous": the meeting of the shards that chose the
// start instant (docs/distributed.md).
type RendezvousInfo struct {
	// Addr is shard 0's HOST:PORT.
	Addr string `json:"addr"`
	// WaitedNs is how long this shard waited there, from ready to the start instant's arrival.
	WaitedNs int64 `json:"waited_ns"`
	// MaxRTTNs is the slowest round trip shard 0 measured to a shard; LeadNs how far ahead of
	// its clock it put the start instant (4 × MaxRTTNs + 50 ms by default).
	MaxRTTNs int64 `json:"max_rtt_ns"`
	LeadNs   int64 `json:"lead_ns"`
	// ClockOffsetNs is this shard's wall clock minus shard 0's as shard 0 measured it (0 on
	// shard 0), within ±ClockOffsetErrorNs (half the fastest round trip).
	ClockOffsetNs      int64 `json:"clock_offset_ns"`
	ClockOffsetErrorNs int64 `json:"clock_offset_error_ns"`
}

// ClockState is run.json's "clock": the kernel's clock discipline as adjtimex(2) reported it
// when the run started. Synchronised is false when the kernel says the clock is not
// disciplined (STA_UNSYNC set, or state TIME_ERROR): then no bound on its error is known.
type ClockState struct {
	// Source is where the state came from: "adjtimex".
	Source       string `json:"source"`
	Synchronised bool   `json:"synchronised"`
	// EstErrorNs and MaxErrorNs are the kernel's estimated and maximum error of the clock.
	EstErrorNs int64 `json:"est_error_ns"`
	MaxErrorNs int64 `json:"max_error_ns"`
	// Status is the kernel's STA_* status bits; State adjtimex's return value (TIME_OK = 0,
	// TIME_ERROR = 5).
	Status int `json:"status"`
	State  int `json:"state"`
}
