#!/usr/bin/env bash
# The device call of 2026-12-07 (on the GPU machine, from the repository root, $OUT set):
#   P, C  which lines share an L2 atomic unit, what one CAS costs (atomic_units.cu, issue 38);
#   Q     LDGSTS's shared-side wavefronts and bank conflicts per instruction (ldgsts.cu, issue 39);
#   R     Nsight Compute's sections for suite38's over-predicted convolution and matvec launches.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/nvidia-smi.csv"
nvcc -arch=sm_90 -O3 $d/atomic_units.cu -o /tmp/au && /tmp/au > "$OUT/atomic_units.txt" 2>&1
cuobjdump -sass /tmp/au | grep -E "ATOM|RED|Function" > "$OUT/atomic_units_sass.txt"
nvcc -arch=sm_90 -O3 $d/ldgsts.cu -o /tmp/ldgsts && /tmp/ldgsts > "$OUT/ldgsts.txt" 2>&1
cuobjdump -sass /tmp/ldgsts | grep -E "LDGSTS|Function" > "$OUT/ldgsts_sass.txt"
m=sm__sass_inst_executed_op_ldgsts.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum
m=$m,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_access.sum
m=$m,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_bypass.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum
m=$m,smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum,smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum
m=$m,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
ncu --clock-control none --csv --metrics "$m" /tmp/ldgsts > "$OUT/ldgsts_ncu.csv" 2>&1
nvcc -O2 -o /tmp/launch_ptx $d/launch_ptx.cu -lcuda
B=b:33554432
sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis"
s=tests/fixtures/suite38
{
  ncu --clock-control none $sec -k conv5_const -c 1 -s 1 /tmp/launch_ptx $s/memory.ptx conv5_const 64 256 32 8 $B $B u:2048 u:2048
  ncu --clock-control none $sec -k conv5_global -c 1 -s 1 /tmp/launch_ptx $s/memory.ptx conv5_global 64 256 32 8 $B $B $B u:2048 u:2048
  ncu --clock-control none $sec -k matvec_tiled -c 1 -s 1 /tmp/launch_ptx $s/tiles.ptx matvec_tiled 512 1 256 1 b:67108864 $B $B u:4096
  ncu --clock-control none $sec -k matvec_t_tiled -c 1 -s 1 /tmp/launch_ptx $s/tiles.ptx matvec_t_tiled 16 1 256 1 b:67108864 $B $B u:4096
} > "$OUT/suite38_sections.txt" 2>&1
# S: shared wavefronts with and without concurrent global traffic (shared_mix.cu, issue 37); the
# SASS-level counters in a second pass (a name this ncu lacks would fail the first pass's rows).
nvcc -arch=sm_90 -O3 $d/shared_mix.cu -o /tmp/shared_mix && /tmp/shared_mix > "$OUT/shared_mix.txt" 2>&1
cuobjdump -sass /tmp/shared_mix | grep -E "LDS|STS|LDG|Function" > "$OUT/shared_mix_sass.txt"
hw=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
hw=$hw,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
hw=$hw,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
hw=$hw,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__m_xbar2l1tex_read_sectors.sum,gpu__time_duration.sum
ncu --clock-control none --csv -k mix --metrics "$hw" /tmp/shared_mix > "$OUT/shared_mix_ncu.csv" 2>&1
ncu --query-metrics --chip gh100 2>&1 | grep -E "sass.*shared_op_(ld|st)\b|sass.*mem_shared_op_(ld|st) " > "$OUT/sass_shared_metric_names.txt"
sw=smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum
sw=$sw,smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
ncu --clock-control none --csv -k mix --metrics "$sw" /tmp/shared_mix > "$OUT/shared_mix_sass_ncu.csv" 2>&1
# suite37's s2d_4096 and tiled16_512 (zeroed buffers: neither's control flow reads memory) with
# both counter sets.
M=b:67108864
{
  ncu --clock-control none --csv -k stencil2d_5pt -c 1 -s 1 --metrics "$hw" /tmp/launch_ptx tests/fixtures/suite37/stencil.ptx stencil2d_5pt 128 512 32 8 $M $M u:4096 u:4096 u:0 u:0
  ncu --clock-control none --csv -k stencil2d_5pt -c 1 -s 1 --metrics "$sw" /tmp/launch_ptx tests/fixtures/suite37/stencil.ptx stencil2d_5pt 128 512 32 8 $M $M u:4096 u:4096 u:0 u:0
  ncu --clock-control none --csv -k sgemm_tiled16 -c 1 -s 1 --metrics "$hw" /tmp/launch_ptx tests/fixtures/suite37/sgemm.ptx sgemm_tiled16 32 32 16 16 u:512 u:512 u:512 u:0 u:0 $M $M $M
  ncu --clock-control none --csv -k sgemm_tiled16 -c 1 -s 1 --metrics "$sw" /tmp/launch_ptx tests/fixtures/suite37/sgemm.ptx sgemm_tiled16 32 32 16 16 u:512 u:512 u:512 u:0 u:0 $M $M $M
} > "$OUT/suite37_shared_ncu.csv" 2>&1
