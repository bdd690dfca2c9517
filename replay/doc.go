// Package replay sends a plan file's requests at their planned instants and logs raw
// nanosecond events, from CPU-pinned worker processes. It computes no metric: package
// analyze reads the run directory it leaves (docs/run-format.md).
//
// # Processes
//
// The coordinator (Replay) starts W worker processes by re-executing its own binary with the
// hidden argument WorkerArg, sends each its configuration as one JSON line on stdin, and
// waits until every worker has mapped the plan, pinned itself to its CPU (sched_setaffinity
// on every thread, GOMAXPROCS=1) and opened its log. W is one per CPU unless --workers says
// otherwise, and more, sharing the CPUs, when one process may not hold the open files its
// share of the concurrency needs (workers.go). It then picks the run's start instant,
// 200 ms ahead, as a wall-clock time and sends it to all workers. Workers report progress on
// stdout; the coordinator shows it, samples GPUs (package telemetry) and writes run.json.
//
// # Clients
//
// A worker's HTTP client is the event loop (ClientLoop, the default on Linux for http URLs;
// loop_linux.go): one goroutine runs every socket, the schedule's timerfd and the deadlines
// through an edge-triggered epoll set, and waits on that set through Go's poller, where the
// set is registered as one readable descriptor. When a pass leaves nothing ready the
// goroutine parks, the worker's only P (GOMAXPROCS=1) goes idle and its thread blocks in the
// runtime's epoll_wait; the log writer, command reader and tickers run on the same thread
// between passes. The loop's system calls on its own descriptors are raw (rawsys_linux.go),
// so the runtime never hears of them and sysmon stays in its deep sleep. This replaced #17's
// blocking epoll_wait on a locked thread with a second P: sysmon retook that P every 10 ms
// of the loop goroutine's unbroken run and then polled at 20 µs, and the writer woke a
// second thread on the worker's CPU; measured against the C floor (replay/testdata/floor.c)
// at concurrency 64, the locked design made about 170 context switches and 100 futex and
// nanosleep calls per request to the floor's 74 and none, the netpoll wait 86 and under 1,
// for 1.6 and 1.1 times the floor's CPU per request (the note to #28). The wake-up costs two
// epoll_wait calls more than the floor's (the runtime's poll before parking, and the loop's
// own that takes the events), against the EAGAIN read per socket the floor makes and the
// loop does not. ClientNet (client.go, runner.go) is one dispatcher goroutine and a pool of
// runner goroutines, one per request in flight, over Go's net package; https URLs always use
// it. Both drive the same scheduler (package schedule) and log the same records and outcomes
// (--client, docs/run-format.md options.client). Before it says ready, a pinned worker
// calibrates its machine (calibrate_linux.go): timer wake-up lag, a loopback round trip and
// one bare system call, recorded in run.json for the verdict.
//
// # Clock
//
// Every timestamp in a run is nanoseconds since the shared start instant, on the monotonic
// clock of the process that took it. Each worker converts the wall-clock start instant to
// its own monotonic clock once, at the start message (one time.Now() reading gives both), so
// workers agree with each other to within the wall clock's consistency across processes on
// one host (nanoseconds), and no later wall-clock step or slew moves any timestamp.
// run.json's start_unix_ns anchors the run to wall-clock time.
//
// # Parts
//
// Sessions are numbered in order of first appearance in the plan; session k goes to worker
// k mod W (and to URL k mod U with several URLs), so a session's turns stay on one worker:
// that is the worker's part (a distributed run first deals sessions over its shards, one
// per machine: distshard.go). A closed loop of concurrency N is dealt the same way, slot by
// slot (schedule.Slots): N/W slots per worker, the remainder to the first ones, and a
// concurrency ramp opens global slot j at ConcurrencyRampNs*j/(N-1) on whichever shard and
// worker own it. A slot is held by a session from its first turn's send until its last
// turn ends, like AIPerf's session concurrency. W is lowered to N and to the number of
// sessions so that every worker has work.
//
// # Schedule
//
// Which request may be sent when is package schedule's to say, with no I/O; each client
// only asks it and sends. Open-loop requests (a SendOffsetNs) go out at
// start+SendOffsetNs on an absolute schedule: a late send never delays the next. Waits use
// a timerfd (the loop's, in its epoll set; the dispatcher's, in Go's poller) rather than Go
// timers, whose epoll timeout has millisecond granularity. With a concurrency ceiling, a
// request that finds no free slot waits for one, first come first served, and its ReadyNs
// records when it got it; nothing is ever dropped. A later turn (Turn > 0, DelayNs >= 0) is
// sent at the later of start+SendOffsetNs (when it has one) and the previous turn's end
// plus DelayNs. Closed-loop profile requests start only after the worker's closed-loop
// warmup requests have ended. The run's start instant comes from a StartSource (start.go).
//
// # Requests
//
// Each worker talks HTTP/1.1 itself: the head is rendered once per URL and path, the body is
// written with writev straight from the plan mapping, and every read() of the response is
// timestamped before it is parsed and logged with its bytes (transfer coding removed), so
// analyze can tell which SSE events arrived together. Steady state allocates nothing per
// read or per request. Every planned request ends with exactly one record: completed,
// failed (transport error, timeout, protocol error), cancelled (the plan's cancel-after),
// aborted (cut by an interruption or the end of a duration-sized run's grace period) or
// not sent.
//
// # Servers as they behave
//
// Before the run, the preflight (replay/probe; Options.Preflight) sends each URL one tiny
// request of the plan's own shape: it checks the server honours the plan's output-limit
// field, records what the server says it is and how it treats connections (run.json
// preflight), and refuses a run that could measure nothing. During the run, a worker that
// finds a URL's server closing every connection right after its response (while it
// announces keep-alive, as llama.cpp does) stops pooling connections to it instead of
// writing each request on a dead one (connpolicy.go); each reconnect and each connection
// the server forced is on the request's record.
//
// # Workers that die
//
// Before a request's first byte reaches its connection, the worker writes a Sent record and
// waits until it is in the kernel. When a worker dies (SIGKILL, crash) the coordinator reads
// its log: a request with a Request record ended as recorded; one with only a Sent record
// was in flight and is lost (its outcome unknown); one with neither was never sent, and the
// coordinator writes a not_sent record for it to the worker's recovery log
// (RecoveryLogName), listed in run.json. The surviving workers go on with their own parts:
// the dead worker's unsent sessions are not handed to them, because that would change their
// load, the closed loop's per-worker concurrency and the planned schedule mid-run of a run
// that is reported failed anyway. Workers that never start are recovered the same way, so
// run.json's counts always add up to the plan.
//
// # Coordinators that die, logs that fail, plans that change
//
// A worker whose coordinator is gone (EOF on stdin after the start, or a failed progress
// write; workers ignore SIGPIPE) ends the run itself as an interruption would: nothing new
// is sent, in-flight requests get the grace period, the rest are logged not_sent and the log
// gets its footer, with status failed. A worker whose log cannot be written (disk full)
// stops at the first failed write, reports it once and keeps its counts exact. A worker
// whose read of the mapped plan faults (the file truncated in place) fails the run instead
// of dying of SIGBUS: the goroutines that read the mapping run with debug.SetPanicOnFault.
package replay
