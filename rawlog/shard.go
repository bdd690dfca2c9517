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
