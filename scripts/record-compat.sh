#!/usr/bin/env bash
# Record the small run of testdata/compat/COMMIT with that older commit's own binaries
# (testdata/compat/README.md): the raw logs, run.json and plan it wrote, byte for byte.
# Usage: scripts/record-compat.sh COMMIT [PORT [OUT_DIR]]   (OUT_DIR: testdata/compat/COMMIT;
# then: go test ./cmd/analyze/ -run OverOldRun -update)
set -euo pipefail
commit=${1:?usage: scripts/record-compat.sh COMMIT [PORT [OUT_DIR]]} port=${2:-18799}
repo=$(git rev-parse --show-toplevel)
out=${3:-$repo/testdata/compat/$commit}
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
git -C "$repo" archive "$commit" | tar -x -C "$work"
(cd "$work" && go build -o bin/ ./cmd/plan ./cmd/replay ./cmd/mockllm)
"$work/bin/mockllm" --addr "127.0.0.1:$port" --ttft 5ms --itl 2ms --seed 1 >"$work/mock.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.05; done
mkdir -p "$work/rec"
"$work/bin/plan" --model mock --endpoint-type chat --streaming --synthetic-input-tokens-mean 64 \
  --output-tokens-mean 12 --random-range-ratio 0.5 --extra-inputs ignore_eos:true \
  --num-sessions 6 --conversation-turn-mean 3 --concurrency 3 --random-seed 7 -o "$work/rec/old.plan"
"$work/bin/replay" --plan "$work/rec/old.plan" --url "http://127.0.0.1:$port" --output-dir "$work/rec/run"
rm -rf "$out/run" && mkdir -p "$out"
cp -r "$work/rec/run" "$out/run" && cp "$work/rec/old.plan" "$out/old.plan"
echo "recorded $out"
