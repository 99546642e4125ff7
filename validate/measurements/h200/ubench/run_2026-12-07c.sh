#!/usr/bin/env bash
# Third device call of 2026-12-07: ubench Q with the GEMM-like row copies (ids 156-191) and
# tests/fixtures/tensor's cp_async GEMM with its LDGSTS counters split by cache mode.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
mkdir -p "$OUT/r"
nvcc -arch=sm_90 -O3 $d/ldgsts.cu -o /tmp/ldgsts && /tmp/ldgsts > "$OUT/r/ldgsts.txt" 2>&1
cuobjdump -sass /tmp/ldgsts | grep -E "LDGSTS|LDG|Function" > "$OUT/r/ldgsts_sass.txt"
m=sm__sass_inst_executed_op_ldgsts.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum
m=$m,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_access.sum
m=$m,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_bypass.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum
m=$m,sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts_cache_access.sum
m=$m,sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts_cache_bypass.sum
m=$m,smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum,smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access_lookup_hit.sum
ncu --clock-control none --csv --metrics "$m" /tmp/ldgsts > "$OUT/r/ldgsts_ncu.csv" 2>&1
nvcc -O2 -o /tmp/launch_ptx $d/launch_ptx.cu -lcuda
ncu --clock-control none --csv --metrics "$m" -k sgemm_cp_async -c 1 -s 1 /tmp/launch_ptx tests/fixtures/tensor/cp_async.ptx sgemm_cp_async 2 2 16 16 b:8192 b:8192 b:8192 u:32 u:32 u:40 > "$OUT/r/cp_async_ncu.csv" 2>&1
nvidia-smi --query-gpu=name --format=csv > "$OUT/r/gpu.csv"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$OUT/r"
