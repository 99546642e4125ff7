#!/usr/bin/env bash
# Measures the add_constant kernels on the GPU of this machine: timing at both documented sizes,
# then Nsight Compute counters (clocks left alone, caches flushed between passes: ncu's default).
# Usage, from the repository root: bash validate/harness/run_h200.sh OUTDIR
set -euo pipefail
out=${1:-/tmp/measure}
mkdir -p "$out"
nvcc -O2 -o /tmp/add_constant_timing validate/harness/add_constant_timing.cu -lcuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.csv"
/tmp/add_constant_timing kernels/ptx/add_constant.ptx 12800000 | tee "$out/timing_12800000.txt"
/tmp/add_constant_timing kernels/ptx/add_constant.ptx 128000 | tee "$out/timing_128000.txt"
metrics=gpu__time_duration.sum,gpc__cycles_elapsed.max,smsp__inst_executed.sum,idc__requests.sum,idc__requests_lookup_hit.sum,idc__requests_lookup_miss.sum,gcc__cache_requests_type_constant.sum,smsp__imc_requests.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_ldc.sum
ncu --version | tee "$out/ncu-version.txt"
ncu --clock-control none --csv --metrics "$metrics" /tmp/add_constant_timing kernels/ptx/add_constant.ptx 12800000 --profile > "$out/ncu_12800000.csv" 2> "$out/ncu_12800000.err" || tail -20 "$out/ncu_12800000.err"
tail -n +1 "$out/ncu_12800000.csv" | grep -c . || true
