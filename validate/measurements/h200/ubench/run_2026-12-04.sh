#!/usr/bin/env bash
# The device call of 2026-12-04 (on the GPU machine, from the repository root, $OUT set): which
# warps share constant-cache fills (const_smsp.cu, with Nsight Compute's IDC counters per launch)
# and the names this Nsight Compute gives LDGSTS/LDSM/STSM metrics (issue 39).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/nvidia-smi.csv"
ncu --version > "$OUT/ncu_version.txt" 2>&1
nvcc -arch=sm_90 -O3 $d/const_smsp.cu -o /tmp/const_smsp && /tmp/const_smsp > "$OUT/const_smsp.csv" 2>&1
cuobjdump -sass /tmp/const_smsp | grep -E "LDC|ULDC|S2R|CS2R" | head -20 > "$OUT/const_smsp_sass.txt"
ncu --clock-control none --kernel-name smsp_set --csv \
    --metrics idc__requests.sum,idc__requests_lookup_miss.sum,gcc__cache_requests_type_constant.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum \
    /tmp/const_smsp > "$OUT/const_smsp_ncu.csv" 2>&1
ncu --query-metrics --chip gh100 > /tmp/metrics.txt 2>&1
grep -iE "ldgsts|ldsm|stsm|op_ldgdepbar|lsu_mem_shared|tma|utmaldg" /tmp/metrics.txt > "$OUT/metrics_ldgsts_ldsm.txt"
ncu --query-metrics-mode suffix --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts,l1tex__data_bank_conflicts_pipe_lsu_mem_shared --chip gh100 > "$OUT/metrics_suffix.txt" 2>&1
