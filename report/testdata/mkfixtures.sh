#!/usr/bin/env bash
# Regenerates the fixture runs of report's tests against mockllm (run from the repository
# root after `make build`): rate-a and rate-a2 are two runs of one plan against mockllm with
# TTFT 20 ms (different server seeds), rate-b the same plan against TTFT 25 ms; conc-1,
# conc-2 and conc-4 are points of a concurrency sweep. The tests only read these files.
set -euo pipefail
bin=${1:-bin} out=report/testdata/runs port=${2:-18555}
rm -rf "$out" && mkdir -p "$out"
common=(--model mock --endpoint-type chat --streaming --isl 32 --osl 12 --extra-inputs ignore_eos:true --random-seed 7)
"$bin/plan" "${common[@]}" --request-rate 40 --arrival-pattern poisson --request-count 60 -o "$out/rate.llmplan"
for c in 1 2 4; do
  "$bin/plan" "${common[@]}" --concurrency $c --request-count 24 -o "$out/conc-$c.llmplan"
done
serve() { # name ttft seed plan
  "$bin/mockllm" --addr "127.0.0.1:$port" --ttft "$2" --itl 2ms --ttft-jitter-cv 0.1 --error-rate 0.05 --seed "$3" >/dev/null 2>&1 &
  local srv=$!
  for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.05; done
  "$bin/replay" --plan "$4" --url "http://127.0.0.1:$port" --output-dir "$out/$1" --workers 2 --no-pin >/dev/null
  kill $srv; wait $srv 2>/dev/null || true
}
serve rate-a 20ms 1 "$out/rate.llmplan"
serve rate-a2 20ms 2 "$out/rate.llmplan"
serve rate-b 25ms 3 "$out/rate.llmplan"
for c in 1 2 4; do serve conc-$c 20ms $c "$out/conc-$c.llmplan"; done
du -sh "$out"
