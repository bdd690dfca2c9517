#!/bin/bash
# streams-ttft.sh: what the client adds to TTFT with STREAMS streams open at once on one
# machine. mockllm in vLLM's layout (--vllm-chunks --vllm-metrics) with its schedule log, then
# replay with its default flags (the server scrape on, one worker per CPU) sending STREAMS
# streaming requests at concurrency STREAMS (each stream one request: all open together
# through the TTFT), then analyze. For each request, matched to the server's record by its
# X-Correlation-ID:
#   client TTFT - server TTFT  = what analyze reports minus the server's (its arrival to the
#                                start of its write of the first token event): it holds the
#                                time the request waited to be accepted and read by a busy
#                                server, which is the server's, not the client's,
#   first-content read - write = the client's read of the first token minus the server's
#                                start of writing it (both on this machine's clock),
# p50 and p99 of each: what scripts/ttft-wire.sh measures against tcpdump, where there is none
# (the loopback's transit, a few µs each way, is in these figures).
#
#   scripts/streams-ttft.sh BIN_DIR WORK_DIR [STREAMS]      (TTFT=2s ITL=200ms OSL=4 PORT=18660)
set -euo pipefail
bin=${1:?usage: streams-ttft.sh BIN_DIR WORK_DIR [STREAMS]}
work=${2:?usage: streams-ttft.sh BIN_DIR WORK_DIR [STREAMS]}
n=${3:-10000}
ttft=${TTFT:-2s}
itl=${ITL:-200ms}
osl=${OSL:-4}
port=${PORT:-18660}
mkdir -p "$work"
rm -rf "$work/run" "$work/analysis" "$work/schedule.jsonl"
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((n + 512)) ]; then
	echo "streams-ttft: the open-file limit ($(ulimit -n)) is below $((n + 512)): raise it or lower STREAMS" >&2
	exit 2
fi
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
"$bin/mockllm" --addr "127.0.0.1:$port" --ttft "$ttft" --itl "$itl" --vllm-chunks --vllm-metrics \
	--schedule-log "$work/schedule.jsonl" 2>"$work/mockllm.log" &
pids+=($!)
"$bin/plan" --model mock --tokenizer builtin --endpoint-type chat --streaming --isl 8 --osl "$osl" \
	--extra-inputs ignore_eos:true --concurrency "$n" --request-count "$n" --random-seed 1 -o "$work/plan.llmplan" >/dev/null
sleep 0.5
start=$(date +%s.%N)
"$bin/replay" --plan "$work/plan.llmplan" --url "http://127.0.0.1:$port" --output-dir "$work/run" \
	--ui-type none --request-timeout-seconds 600 2>"$work/replay.log"
end=$(date +%s.%N)
tail -1 "$work/replay.log"
echo "replay wall time: $(echo "$end - $start" | bc) s"
"$bin/analyze" --quiet --output-dir "$work/analysis" "$work/run" >/dev/null
kill "${pids[0]}" 2>/dev/null || true
wait "${pids[0]}" 2>/dev/null || true
python3 - "$work/schedule.jsonl" "$work/analysis/profile_export.jsonl" "$n" <<'PY'
import json, sys
sched, export, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
server = {}
for line in open(sched):
    r = json.loads(line)
    if r.get("correlation_id") and r.get("sent_ns"):
        server[r["correlation_id"]] = (r["arrival_unix_ns"], r["sent_ns"][0])
dttft, dread, done = [], [], 0
for line in open(export):
    r = json.loads(line)
    md, mt = r["metadata"], r["metrics"]
    if md["outcome"] != "completed":
        continue
    done += 1
    cid = md.get("x_correlation_id")
    if cid not in server or "time_to_first_token" not in mt:
        continue
    arrival, first = server[cid]
    ttft_ns = mt["time_to_first_token"]["value"] * 1e6
    dttft.append(ttft_ns - first)
    dread.append(md["request_start_ns"] + ttft_ns - (arrival + first))
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]
if not dttft:
    sys.exit("streams-ttft: no request matched the server's schedule log")
print(f"{done} of {n} requests completed, {len(dttft)} matched the server's schedule log")
print(f"client TTFT - server TTFT:           p50 {pct(dttft, 50) / 1e3:9.1f} µs  p99 {pct(dttft, 99) / 1e3:9.1f} µs")
print(f"first-content read - server's write: p50 {pct(dread, 50) / 1e3:9.1f} µs  p99 {pct(dread, 99) / 1e3:9.1f} µs")
if done != n:
    sys.exit(1)
PY
