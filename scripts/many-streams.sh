#!/bin/bash
# many-streams.sh: N concurrent streams from one machine against mockllm, connections spread
# over loopback source addresses with --local-addr (docs/distributed.md, "One machine, many
# streams"). Every request must be accounted for; the peak of concurrently served streams is
# read from mockllm's mockllm_requests_running gauge.
#
#   scripts/many-streams.sh BIN_DIR WORK_DIR [STREAMS] [SERVERS] [WORKERS]
#
# The open-file limit is per process: the load is split over SERVERS mockllm processes (one
# port each; default: one per 16,000 streams) so that none needs more descriptors than the
# hard limit allows. replay decides its workers itself (WORKERS empty, the default: one per
# CPU, more sharing the CPUs when the limit asks for it, pinned); WORKERS=N runs N unpinned.
# Each stream lasts TTFT (default 40s) plus 3 token gaps, so all of them are open at once
# once connected. Mid-run, once all are open, the workers' resident memory is sampled: the
# script prints it per stream.
#
#   scripts/many-streams.sh bin /tmp/ms100k 100000     # 100,000 streams, 7 servers
set -euo pipefail
bin=${1:?usage: many-streams.sh BIN_DIR WORK_DIR [STREAMS] [SERVERS] [WORKERS]}
work=${2:?usage: many-streams.sh BIN_DIR WORK_DIR [STREAMS] [SERVERS] [WORKERS]}
n=${3:-50000}
servers=${4:-$(((n + 15999) / 16000))}
workers=${5:-}
ttft=${TTFT:-40s}
addrs=${LOCAL_ADDRS:-127.0.0.2-127.0.0.9}
mkdir -p "$work"
ulimit -n "$(ulimit -Hn)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
urls=()
for i in $(seq 0 $((servers - 1))); do
	port=$((18600 + i))
	"$bin/mockllm" --addr "127.0.0.1:$port" --ttft "$ttft" --itl 10ms --seed "$i" 2>"$work/mockllm-$i.log" &
	pids+=($!)
	urls+=(--url "http://127.0.0.1:$port")
done
sleep 1
"$bin/plan" --model mock --tokenizer builtin --endpoint-type chat --streaming --isl 8 --osl 4 \
	--extra-inputs ignore_eos:true --concurrency "$n" --request-count "$n" --random-seed 1 -o "$work/plan.llmplan" >/dev/null
# Poll the servers' running gauges: the peak of their sum is the concurrent streams served
# (their accept queues may be too full to answer /metrics; then the client's records tell).
# Mid-TTFT, once, how the client's connections spread over source addresses.
(
	set +e # a poll that times out is not an error
	peak=0
	t0=$(date +%s)
	while sleep 1; do
		if [ ! -f "$work/sources" ] && [ $(($(date +%s) - t0)) -ge "${SAMPLE_AFTER:-15}" ]; then
			ss -Htn state established "( dport >= :18600 and dport < :$((18600 + servers)) )" |
				awk '{split($3, a, ":"); c[a[1]]++} END {for (k in c) print k, c[k]}' | sort >"$work/sources"
		fi
		sum=0
		for i in $(seq 0 $((servers - 1))); do
			v=$(curl -s --max-time 2 "http://127.0.0.1:$((18600 + i))/metrics" | awk '$1=="mockllm_requests_running"{print int($2)}')
			sum=$((sum + ${v:-0}))
		done
		[ "$sum" -gt "$peak" ] && peak=$sum && echo "$peak" >"$work/peak"
	done
) &
pids+=($!)
wflags=()
[ -n "$workers" ] && wflags=(--workers "$workers" --no-pin)
start=$(date +%s.%N)
"$bin/replay" --plan "$work/plan.llmplan" "${urls[@]}" --output-dir "$work/run" "${wflags[@]}" \
	--no-gpu-telemetry --no-server-metrics --ui-type none --local-addr "$addrs" --request-timeout-seconds 600 2>"$work/replay.log" &
rpid=$!
# The workers' resident memory once every stream is open (the peak of their summed VmRSS
# while they wait for their first tokens).
(
	set +e
	best=0
	while kill -0 "$rpid" 2>/dev/null; do
		sum=0
		for w in $(pgrep -P "$rpid"); do
			r=$(awk '/^VmRSS:/{print $2}' "/proc/$w/status" 2>/dev/null)
			sum=$((sum + ${r:-0}))
		done
		[ "$sum" -gt "$best" ] && best=$sum && echo "$best $(pgrep -P "$rpid" | wc -l)" >"$work/rss"
		sleep 1
	done
) &
rss_pid=$!
wait "$rpid" || true
end=$(date +%s.%N)
wait "$rss_pid" 2>/dev/null || true
grep -h "^replay: concurrency" "$work/replay.log" || true
tail -1 "$work/replay.log"
echo "replay wall time: $(echo "$end - $start" | bc) s; peak concurrent streams served: $(cat "$work/peak" 2>/dev/null || echo 0)"
if [ -f "$work/rss" ]; then
	read -r kib nw <"$work/rss"
	echo "workers' resident memory at its peak: $((kib / 1024)) MiB over $nw workers, $(echo "scale=1; $kib / $n" | bc) KiB per stream"
fi
echo "client connections by source address (sampled mid-run):"
cat "$work/sources" 2>/dev/null || echo "(not sampled)"
"$bin/analyze" --output-dir "$work/analysis" "$work/run" >"$work/analyze.txt" 2>&1 || true
grep -E "^(Errors|Verdict):" "$work/analyze.txt" || tail -3 "$work/analyze.txt"
# The client's view: the most requests open at once (request_start_ns to request_end_ns).
if command -v python3 >/dev/null; then
	python3 - "$work/analysis/profile_export.jsonl" <<'PY'
import json, sys
ev = []
for line in open(sys.argv[1]):
    m = json.loads(line)["metadata"]
    if m["outcome"] == "completed":
        ev += [(m["request_start_ns"], 1), (m["request_end_ns"], -1)]
ev.sort()
cur = peak = 0
for _, d in ev:
    cur += d
    peak = max(peak, cur)
print(f"completed {len(ev) // 2}; most requests open at once (client records): {peak}")
PY
fi
