#!/usr/bin/env bash
# The device call of 2026-12-03 (on the GPU machine, from the repository root, $OUT set):
# the tensor-pipe microbenchmark (tests/fixtures/tensor/pipe/mma_pipe.cu), the constant-cache
# set test (const_sets.cu here), and issue 39's fixtures (tests/fixtures/tensor/h200.sh) with the
# carried release binaries in devbin/ (VALIDATE, SIM).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/nvidia-smi.csv"
nvcc -arch=sm_90 -O3 tests/fixtures/tensor/pipe/mma_pipe.cu -o /tmp/mma_pipe &&
    /tmp/mma_pipe > "$OUT/mma_pipe.csv" 2>&1
cuobjdump -sass /tmp/mma_pipe | grep -oE "(HMMA|IMMA)[.A-Z0-9]*" | sort | uniq -c > "$OUT/mma_pipe_sass.txt"
nvcc -arch=sm_90 -O3 validate/measurements/h200/ubench/const_sets.cu -o /tmp/const_sets &&
    /tmp/const_sets > "$OUT/const_sets.csv" 2>&1
cuobjdump -sass /tmp/const_sets | grep -E "LDC|ULDC" | head -20 > "$OUT/const_sets_sass.txt"
# The warp-level sets under Nsight Compute: IDC lookups and misses, GCC requests per launch
# (launch order as in const_sets.csv's warp rows).
ncu --clock-control none --kernel-name warp_set --csv \
    --metrics idc__requests.sum,idc__requests_lookup_miss.sum,gcc__cache_requests_type_constant.sum,sm__cycles_elapsed.max \
    /tmp/const_sets > "$OUT/const_sets_ncu.csv" 2>&1
OUT=/tmp/tensor39 VALIDATE=${VALIDATE:-devbin/validate} SIM=${SIM:-devbin/sim} \
    bash tests/fixtures/tensor/h200.sh > /tmp/tensor39.log 2>&1
cp /tmp/tensor39.log /tmp/tensor39/h200sh.log
tar czf "$OUT/tensor39.tgz" -C /tmp tensor39
