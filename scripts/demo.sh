#!/usr/bin/env bash
# make demo: start the bundled mock LLM server on loopback, compile a small streaming plan,
# validate the load generator against an in-process mock, replay the plan, analyze the run,
# and stop the server. Needs bash and the binaries only (no curl). Its last line compares the
# measured TTFT and ITL with the mock's true values. Usage: scripts/demo.sh BIN_DIR OUT_DIR PORT
set -euo pipefail
bin=${1:-bin} out=${2:-bin/demo} port=${3:-18431}
url="http://127.0.0.1:${port}"
ttft_ms=20 itl_ms=5 # the mock's true timing, also the validation's
rm -rf "$out" && mkdir -p "$out"

"$bin/mockllm" --addr "127.0.0.1:${port}" --ttft "${ttft_ms}ms" --itl "${itl_ms}ms" --seed 1 >"$out/mockllm.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
# Wait until the server accepts connections (bash's /dev/tcp: no curl needed).
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null && break
  kill -0 $server 2>/dev/null || { cat "$out/mockllm.log"; exit 1; }
  sleep 0.05
done

echo "== plan: 64 streaming chat requests, 128 input / 128 output tokens, concurrency 8"
"$bin/plan" --model mock --endpoint-type chat --streaming --isl 128 --osl 128 \
  --extra-inputs ignore_eos:true --concurrency 8 --request-count 64 --warmup-request-count 4 \
  --random-seed 42 -o "$out/demo.plan"
"$bin/plan" inspect "$out/demo.plan" | sed -n 1,16p

echo "== replay: first the generator validation (an in-process mock, TTFT ${ttft_ms} ms, ITL ${itl_ms} ms), then mockllm at $url"
replayed=0
"$bin/replay" --plan "$out/demo.plan" --url "$url" --output-dir "$out/run" \
  --validate --validate-ttft "${ttft_ms}ms" --validate-itl "${itl_ms}ms" || replayed=$?
# replay exits 1 when the generator validation failed (a machine too busy to time the mock)
# or the run did not complete: the analysis still runs on what it logged, says why, and the
# demo exits 1. Anything else (2: nothing was run) ends the demo here.
if [ "$replayed" -ne 0 ] && { [ "$replayed" -ne 1 ] || [ ! -f "$out/run/run.json" ]; }; then
  exit "$replayed"
fi

echo "== analyze"
status=$replayed # the generator validation's failure stays a failed check whatever analyze says
"$bin/analyze" "$out/run" || status=$?

# The report: one offline file (docs/report.md).
echo "== report: $(cd "$out/run" && pwd)/report.html"

# The last line: measured p50s beside the mock's true values, from the CSV export.
awk -F, -v ttft="$ttft_ms" -v itl="$itl_ms" -v status="$status" '
  NR == 1 { for (i = 1; i <= NF; i++) if ($i == "p50") c = i; next }
  $1 == "Time to First Token (ms)" { t = $c }
  $1 == "Inter Token Latency (ms)" { l = $c }
  END {
    if (t == "" || l == "") { print "demo: no TTFT/ITL in the export: see the analysis above"; exit }
    verdict = (status == 0) ? "every check held" : "a check failed (see above)"
    printf "demo: measured TTFT p50 %.2f ms and ITL p50 %.2f ms against the mock'"'"'s true %d ms and %d ms: the client and loopback added %.2f ms and %.2f ms; %s\n",
      t, l, ttft, itl, t - ttft, l - itl, verdict
  }' "$out/run/profile_export_aiperf.csv"
exit "$status"
