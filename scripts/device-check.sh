#!/usr/bin/env bash
# Checks GPU telemetry on a real NVIDIA machine, in two parts:
#  1. our NVML readings (power, energy counter, utilisation, memory, clock, temperature)
#     against nvidia-smi, idle and under a matmul load (replay/telemetry TestDeviceAgainstNvidiaSMI);
#  2. a whole plan -> replay -> analyze run against mockllm with the GPU loaded, so the run
#     directory carries telemetry and analyze reports power, energy and tokens per joule.
# Needs .devbin/ built on an x86-64 machine (go build -o .devbin/ ./cmd/...; go test -c -o .devbin/telemetry.test
# ./replay/telemetry) and python3 with torch for the load. Writes its evidence to $OUT.
set -uo pipefail
out=${OUT:-/tmp/device-check}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,power.limit,power.max_limit --format=csv
load='python3 -c "
import torch
a = torch.randn(8192, 8192, device=\"cuda\", dtype=torch.bfloat16)
while True:
    for _ in range(50): b = a @ a
    torch.cuda.synchronize()
"'
echo "== 1. NVML vs nvidia-smi"
LLMBENCH_DEVICE_CHECK=1 LLMBENCH_GPU_LOAD="$load" timeout 120 ./.devbin/telemetry.test \
  -test.run TestDeviceAgainstNvidiaSMI -test.v -test.count=1
echo "telemetry check exit: $?"

echo "== 2. plan -> replay -> analyze with GPU telemetry under load"
./.devbin/mockllm --addr 127.0.0.1:18500 --ttft 20ms --itl 5ms >"$out/mockllm.log" 2>&1 &
srv=$!
bash -c "$load" & gpu=$!
sleep 3
./.devbin/plan --model mock --endpoint-type chat --streaming --isl 256 --osl 128 \
  --extra-inputs ignore_eos:true --request-rate 40 --arrival-pattern poisson --request-count 400 \
  --random-seed 7 -o /tmp/dev.plan
./.devbin/replay --plan /tmp/dev.plan --url http://127.0.0.1:18500 --output-dir /tmp/devrun --gpu-sample-interval 100ms
./.devbin/analyze /tmp/devrun; echo "analyze exit: $?"
kill $gpu $srv 2>/dev/null
cp /tmp/devrun/run.json /tmp/devrun/profile_export_aiperf.json "$out/" 2>/dev/null
grep -iE 'gpu|power|energ|joule' /tmp/devrun/profile_export_aiperf.csv | head -20
