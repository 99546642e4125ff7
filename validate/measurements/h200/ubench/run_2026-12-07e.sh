#!/usr/bin/env bash
# Fifth device call of 2026-12-07 (issue 38): ubench T (pipes.cu: integer and FP32 issue rates per
# SMSP; atoms.cu: shared atomics under same-word contention) and Nsight Compute's pipe utilizations, stall reasons and L1 breakdown of the launches
# that issue ~2.4 cycles per load per SM (suite38 conv7_const, transpose_naive, matvec_rows; R4's
# l1tp), and issue 39's texture fixture (tests/fixtures/texture/h200.sh, target/release/validate
# carried). Results in the tarball's t/.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
o="$OUT/t"
mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$o/gpu.csv"
nvcc -arch=sm_90 -O3 $d/pipes.cu -o /tmp/pipes 2> "$o/nvcc.txt" && /tmp/pipes > "$o/pipes.txt" 2>&1
cuobjdump -sass /tmp/pipes > "$o/pipes.sass" 2>&1
nvcc -arch=sm_90 -O3 $d/atoms.cu -o /tmp/atoms 2>> "$o/nvcc.txt" && /tmp/atoms > "$o/atoms.txt" 2>&1
cuobjdump -sass /tmp/atoms > "$o/atoms.sass" 2>&1
ncu --clock-control none --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,smsp__sass_inst_executed_op_shared_atom.sum,smsp__inst_executed.sum,gpu__time_duration.sum /tmp/atoms > "$o/atoms_ncu.csv" 2>&1
nvcc -arch=sm_90 -O3 $d/l2_writes.cu -o /tmp/l2_writes 2>> "$o/nvcc.txt" && /tmp/l2_writes > "$o/l2_writes.txt" 2>&1
nvcc -O2 -o /tmp/launch_ptx $d/launch_ptx.cu -lcuda 2>> "$o/nvcc.txt"
nvcc -arch=sm_90 -O3 $d/dram_load.cu -o /tmp/dram_load 2>> "$o/nvcc.txt"
cuobjdump -sass /tmp/dram_load > "$o/dram_load.sass" 2>&1
S="--section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --section SchedulerStats --page raw --metrics breakdown:l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_set_conflicts_pipe_lsu_mem_global_op_ld.sum,l1tex__t_set_accesses_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed_pipe_lsu.sum,sm__cycles_active.avg,gpu__time_duration.sum"
raw() { echo "=== $2"; timeout 150 ncu --clock-control none --launch-count 1 $S /tmp/launch_ptx "$@" 2>&1 | grep -v "^==\|^ok "; }
F=tests/fixtures/suite38
M64=b:67108864
{
raw $F/memory.ptx conv7_const 64 256 32 8 $M64 $M64 u:2048 u:2048
raw $F/tiles.ptx transpose_naive 64 64 32 8 $M64 $M64 u:2048
raw $F/memory.ptx matvec_rows 32 1 128 1 $M64 b:16384 b:16384 u:4096
echo "=== l1tp"
timeout 200 ncu --clock-control none -k l1tp --launch-count 1 $S /tmp/dram_load 2>&1 | grep -v "^==\|^R[0-9] \|^CLK"
} > "$o/raw.txt" 2>&1
grep -E "^=== |pipe_[a-z_]+\.(avg|sum)\.pct_of_peak_sustained_active|average_warps_issue_stalled_[a-z_]+_per_issue_active|smsp__inst_executed.sum |sm__cycles_active.avg |l1tex__t_set|l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum|t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum|smsp__inst_executed_pipe_lsu.sum|gpu__time_duration.sum|issue_active.avg.per_cycle_active|l1tex__throughput|lsuin_requests|l1tex__m_|l1tex__f_|l1tex__lsu" "$o/raw.txt" | sed 's/  */ /g' > "$o/pipes_ncu.txt"
# Issue 39's textures and surfaces on the GPU (target/release/validate carried).
OUT="$o/tex" NCU=ncu timeout 240 tests/fixtures/texture/h200.sh > "$o/tex_run.txt" 2>&1
tar czf "$OUT/t.tgz" -C "$OUT" t && rm -rf "$o"
