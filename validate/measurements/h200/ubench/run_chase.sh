#!/usr/bin/env bash
# ubench L: dependent loads through __constant__ memory over working sets of 1 to 64 KiB (one
# thread on one SM, and one on each of the 132 SMs together), and Nsight Compute's constant-cache
# counters of a few of them: which level serves a working set. From the repository root on the
# GPU machine: bash validate/measurements/h200/ubench/run_chase.sh OUTDIR
out=${1:-/tmp/chase-out}
mkdir -p "$out"
here=validate/measurements/h200/ubench
nvcc -O3 -arch=sm_90 -o /tmp/shared_units $here/shared_units.cu 2>&1 | grep -v warning | head -20
/tmp/shared_units L > "$out/chase.txt" 2>&1
{
for args in "1024 16 1" "2048 16 1" "4096 16 1" "8192 16 1" "16384 16 1" "4096 64 1" "16384 64 1" "16384 16 132"; do
  echo "=== L $args"
  timeout 60 ncu --clock-control none --cache-control none -k cchase --metrics 'regex:^(gcc__cache_requests_type_constant|gcc__gcc2xbar_requests_type_constant|idc__requests|idc__requests_lookup_hit|idc__requests_lookup_miss)\.sum$' /tmp/shared_units L $args 2>&1 | grep -v "^==PROF=="
done
} > "$out/chase_ncu.txt" 2>&1
echo "chase lines: $(wc -l < "$out/chase.txt") $(wc -l < "$out/chase_ncu.txt")"
