#!/usr/bin/env bash
# Fourth device call of 2026-12-07 (issue 38): ubench R (dram_load.cu): DRAM latency by pattern
# and under load, hist_global by bin placement. Results in the tarball's r/.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$OUT/r/gpu.csv"
nvcc -arch=sm_90 -O3 $d/dram_load.cu -o /tmp/dram_load 2> "$OUT/r/nvcc.txt" && /tmp/dram_load > "$OUT/r/dram_load.txt" 2>&1
m=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex_op_red.sum,gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
ncu --clock-control none --csv --metrics "$m" -k 'regex:^(walk|hist_global|l1tp)$' /tmp/dram_load > "$OUT/r/dram_load_ncu.csv" 2>&1
ncu --query-metrics 2>&1 | grep -E "l1tex__(t_output_wavefronts|data_pipe_lsu_wavefronts|lsu_writeback|t_set)" > "$OUT/r/l1_metric_names.txt"
m2=l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__lsu_writeback_active.sum
ncu --clock-control none --csv --metrics "$m2" -k l1tp /tmp/dram_load > "$OUT/r/l1tp_ncu.csv" 2>&1
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$OUT/r"
