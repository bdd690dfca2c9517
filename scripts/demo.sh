#!/usr/bin/env bash
# make demo: start the bundled mock LLM server on loopback, compile a small streaming plan,
# replay it, analyze the run, and stop the server. Usage: scripts/demo.sh BIN_DIR OUT_DIR PORT
set -euo pipefail
bin=${1:-bin} out=${2:-bin/demo} port=${3:-18431}
url="http://127.0.0.1:${port}"
rm -rf "$out" && mkdir -p "$out"

"$bin/mockllm" --addr "127.0.0.1:${port}" --ttft 20ms --itl 5ms --seed 1 >"$out/mockllm.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fsS "$url/health" >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { cat "$out/mockllm.log"; exit 1; }
  sleep 0.05
done

echo "== plan: 64 streaming chat requests, 128 input / 128 output tokens, concurrency 8"
"$bin/plan" --model mock --endpoint-type chat --streaming --isl 128 --osl 128 \
  --extra-inputs ignore_eos:true --concurrency 8 --request-count 64 --warmup-request-count 4 \
  --random-seed 42 -o "$out/demo.plan"
"$bin/plan" inspect "$out/demo.plan" | sed -n 1,16p

echo "== replay against mockllm (TTFT 20 ms, ITL 5 ms) at $url"
"$bin/replay" --plan "$out/demo.plan" --url "$url" --output-dir "$out/run"

echo "== analyze"
"$bin/analyze" "$out/run"

# The last line: the run's HTML report (one offline file, docs/report.md).
echo "== report: $(cd "$out/run" && pwd)/report.html"
