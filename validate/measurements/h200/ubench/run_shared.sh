#!/usr/bin/env bash
# Runs shared_units.cu (I, J, K: constant-cache misses of many SMs, atomics on few addresses,
# back-to-back launches) and Nsight Compute's constant-cache counters for a few of I's points.
# Usage, from the repository root on the GPU machine: bash validate/measurements/h200/ubench/run_shared.sh OUTDIR
out=${1:-/tmp/shared-out}
mkdir -p "$out"
here=validate/measurements/h200/ubench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/nvidia-smi-shared.csv"
nvcc -O3 -arch=sm_90 -o /tmp/shared_units $here/shared_units.cu 2>&1 | grep -v warning | head -20
cuobjdump -sass /tmp/shared_units | grep -E "Function|LDC|ULDC|ATOM|RED|REDUX" > "$out/shared_units.sass"
/tmp/shared_units > "$out/shared_units.txt" 2>&1
ncu --query-metrics --chip gh100 2>/dev/null | grep -i -E "^(gcc|idc|imc)__" > "$out/const_metrics.txt"
{
for args in "first 1 32 16 16383" "first 16 32 16 16383" "first 132 32 16 16383" "spread 132 32 16 1023" "first 132 1 16 16383"; do
  echo "=== I $args"
  timeout 120 ncu --clock-control none --cache-control none -k cmiss --metrics 'regex:^(gcc|idc|imc)__.*\.sum$|^gpu__time_duration\.sum$|^smsp__inst_executed\.sum$' /tmp/shared_units I $args 2>&1 | grep -v "^==PROF=="
done
} > "$out/shared_ncu.txt" 2>&1
echo "lines: $(wc -l < "$out/shared_units.txt") $(wc -l < "$out/shared_ncu.txt") metrics: $(wc -l < "$out/const_metrics.txt")"
