#!/bin/bash
# ttft-wire.sh: how far the client's TTFT is from the wire's. mockllm on one CPU, replay (one
# worker, the default event-loop client) on another, a closed loop of streaming requests, and
# tcpdump on loopback capturing every packet with nanosecond timestamps. For each request,
# matched to its connection by its X-Correlation-ID header:
#   wire TTFT   = first server packet carrying content ("content":"x...) minus the client
#                 packet carrying the request,
#   client TTFT = what analyze reports (the first content read minus the write start),
# and the client's first-content read minus that packet's capture instant (how late the
# client's read returned). Prints p50/p99 of each difference.
#
#   scripts/ttft-wire.sh BIN_DIR WORK_DIR [CONCURRENCY] [REQUESTS] [ITL]
set -euo pipefail
bin=${1:?usage: ttft-wire.sh BIN_DIR WORK_DIR [CONCURRENCY] [REQUESTS] [ITL]}
work=${2:?usage: ttft-wire.sh BIN_DIR WORK_DIR [CONCURRENCY] [REQUESTS] [ITL]}
conc=${3:-64}
n=${4:-512}
itl=${5:-10ms}
port=${PORT:-18640}
client_cpu=${CLIENT_CPU:-0}
server_cpu=${SERVER_CPU:-1}
mkdir -p "$work"
rm -rf "$work/run" "$work/analysis" "$work/cap.pcap"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
taskset -c "$server_cpu" "$bin/mockllm" --addr "127.0.0.1:$port" --ttft 20ms --itl "$itl" 2>"$work/mockllm.log" &
pids+=($!)
"$bin/plan" --model mock --tokenizer builtin --endpoint-type chat --streaming --isl 128 --osl 100 \
	--extra-inputs ignore_eos:true --concurrency "$conc" --request-count "$n" --random-seed 1 -o "$work/plan.llmplan" >/dev/null
tcpdump -i lo -n -s 2048 -B 65536 --time-stamp-precision=nano -w "$work/cap.pcap" "tcp port $port" 2>"$work/tcpdump.log" &
tpid=$!
pids+=($tpid)
sleep 1
"$bin/replay" --plan "$work/plan.llmplan" --url "http://127.0.0.1:$port" --output-dir "$work/run" --cpus "$client_cpu" \
	--no-gpu-telemetry --no-server-metrics --ui-type none 2>"$work/replay.log"
tail -1 "$work/replay.log"
sleep 0.5
kill -INT "$tpid"
wait "$tpid" 2>/dev/null || true
grep -E "captured|dropped" "$work/tcpdump.log" || true
"$bin/analyze" --quiet --output-dir "$work/analysis" "$work/run" >/dev/null
python3 - "$work/cap.pcap" "$work/analysis/profile_export.jsonl" "$port" <<'PY'
import json, re, struct, sys
pcap, export, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(pcap, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
if magic != 0xA1B23C4D:
    sys.exit("capture is not in nanosecond pcap format")
link = struct.unpack("<I", data[20:24])[0]
l2 = {1: 14, 113: 16, 276: 20}[link]
corr = re.compile(rb"X-Correlation-ID: (\d+)\r\n", re.I)
content = re.compile(rb'"content":"[^"]')
cur = {}  # client port -> correlation id of the request in flight
wire = {}  # correlation id -> [request packet ns, first content packet ns]
off = 24
while off + 16 <= len(data):
    sec, frac, incl, _ = struct.unpack("<IIII", data[off:off + 16])
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    ts = sec * 10**9 + frac
    ip = pkt[l2:]
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
        continue
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack(">H", ip[2:4])[0]
    tcp = ip[ihl:tot]
    sport, dport = struct.unpack(">HH", tcp[:4])
    payload = tcp[(tcp[12] >> 4) * 4:]
    if not payload:
        continue
    if dport == port:
        m = corr.search(payload)
        if m:
            cid = m.group(1).decode()
            cur[sport] = cid
            wire.setdefault(cid, [ts, None])
    elif sport == port and dport in cur:
        cid = cur[dport]
        w = wire.get(cid)
        if w and w[1] is None and content.search(payload):
            w[1] = ts
dttft, dread = [], []
for line in open(export):
    r = json.loads(line)
    md, mt = r["metadata"], r["metrics"]
    cid = md.get("x_correlation_id")
    if md["outcome"] != "completed" or cid not in wire or wire[cid][1] is None or "time_to_first_token" not in mt:
        continue
    ttft_ns = mt["time_to_first_token"]["value"] * 1e6
    wire_ttft = wire[cid][1] - wire[cid][0]
    dttft.append(ttft_ns - wire_ttft)
    dread.append(md["request_start_ns"] + ttft_ns - wire[cid][1])
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]
if not dttft:
    sys.exit("no request matched the capture")
print(f"{len(dttft)} requests matched the capture")
print(f"client TTFT - wire TTFT:        p50 {pct(dttft, 50) / 1e3:8.1f} µs  p99 {pct(dttft, 99) / 1e3:8.1f} µs")
print(f"first-content read - its packet: p50 {pct(dread, 50) / 1e3:8.1f} µs  p99 {pct(dread, 99) / 1e3:8.1f} µs")
PY
