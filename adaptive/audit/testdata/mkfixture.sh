#!/usr/bin/env bash
# Regenerates the audit's fixture run against mockllm (run from the repository root after
# `make build`; bin is the folder of the binaries): one Poisson plan of 240 requests at 60/s
# against a mockllm with 4 batch slots (a queue past them), TTFT jitter and 3 % errors, so
# its windows hold failures and a latency tail. The events files beside it are written by
# hand (handvalues.py computes their values from the per-request export); the tests only read these files.
set -euo pipefail
bin=${1:-bin} out=adaptive/audit/testdata/run port=${2:-18561}
rm -rf "$out" adaptive/audit/testdata/fixture.llmplan
"$bin/plan" --model mock --endpoint-type chat --streaming --isl 32 --osl 12 --extra-inputs ignore_eos:true --random-seed 11 \
  --request-rate 60 --arrival-pattern poisson --request-count 240 -o adaptive/audit/testdata/fixture.llmplan
"$bin/mockllm" --addr "127.0.0.1:$port" --ttft 20ms --itl 2ms --ttft-jitter-cv 0.3 --error-rate 0.03 --max-batch 4 --seed 5 >/dev/null 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.05; done
"$bin/replay" --plan adaptive/audit/testdata/fixture.llmplan --url "http://127.0.0.1:$port" --output-dir "$out" --workers 2 --no-pin >/dev/null
du -sh "$out"
