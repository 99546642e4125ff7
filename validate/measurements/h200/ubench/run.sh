#!/usr/bin/env bash
# Runs the microbenchmarks and the Nsight Compute warp-state sections of the slow bundled kernels.
# Usage, from the repository root: bash validate/measurements/h200/ubench/run.sh OUTDIR
out=${1:-/tmp/ubench-out}
mkdir -p "$out"
here=validate/measurements/h200/ubench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/nvidia-smi.csv"
nvcc -O3 -arch=sm_90 -o /tmp/ubench $here/ubench.cu 2>&1 | grep -v warning | head -20
nvcc -O2 -o /tmp/launch_ptx $here/launch_ptx.cu -lcuda 2>&1 | head -20
cuobjdump -sass /tmp/ubench > "$out/ubench.sass" 2>&1
/tmp/ubench > "$out/ubench.txt" 2>&1
cat "$out/ubench.txt"
P=kernels/ptx
M4=b:4194304
secs="--section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
run() { echo "=== $*"; timeout 120 ncu --clock-control none --launch-count 1 $secs /tmp/launch_ptx "$@" 2>&1 | grep -v "^==PROF==\|^ok "; }
{
run $P/ray.ptx ray_constant 64 64 16 16 $M4
run $P/ray.ptx ray_global 64 64 16 16 $M4
run $P/reduce.ptx reduce_smem 8192 1 128 1 $M4 b:32768 u:1048576
run $P/reduce.ptx reduce_shfl 8192 1 128 1 $M4 b:32768 u:1048576
run $P/stencil_1d.ptx stencil_1d_constant 4096 1 256 1 $M4 $M4 u:1048576
run $P/transpose.ptx transpose_naive_row 64 64 16 16 $M4 $M4 u:1024 u:1024
run $P/transpose.ptx copy_col 64 64 16 16 $M4 $M4 u:1024 u:1024
run $P/transpose.ptx copy_row 64 64 16 16 $M4 $M4 u:1024 u:1024
run $P/transpose_smem.ptx transpose_smem 32 32 32 8 $M4 $M4 u:1024 u:1024
run $P/global_access.ptx copy_float4 512 1 512 1 $M4 $M4 u:262144
run $P/global_access.ptx copy_float 2048 1 512 1 $M4 $M4 u:1048576
run $P/conv2d.ptx conv2d_constant 64 64 16 16 $M4 $M4 u:1024 u:1024
} > "$out/ncu.txt" 2>&1
# Pipe utilizations and stall reasons (raw metrics) of the kernels the timing model was checked on
S="--section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --page raw"
raw() { echo "=== $2"; ncu --clock-control none --launch-count 1 $S /tmp/launch_ptx "$@" 2>&1 | grep -v "^==\|^ok "; }
{
raw $P/ray.ptx ray_constant 64 64 16 16 $M4
raw $P/ray.ptx ray_global 64 64 16 16 $M4
raw $P/conv2d.ptx conv2d_constant 64 64 16 16 $M4 $M4 u:1024 u:1024
raw $P/reduce.ptx reduce_smem 8192 1 128 1 $M4 b:32768 u:1048576
raw $P/stencil_1d.ptx stencil_1d_constant 4096 1 256 1 $M4 $M4 u:1048576
raw $P/transpose_smem.ptx transpose_smem 32 32 32 8 $M4 $M4 u:1024 u:1024
} > "$out/raw.txt" 2>&1
grep -E "^=== |pipe_(adu|alu|cbu|fma|fmaheavy|lsu|xu|uniform)\.(avg|sum)\.pct_of_peak_sustained_active|average_warps_issue_stalled_[a-z_]+_per_issue_active|smsp__inst_executed.sum |sm__cycles_active.avg |sm__cycles_elapsed.avg |warps_active.avg.per_cycle_active|sm__warps_active" "$out/raw.txt" | sed 's/  */ /g' > "$out/ncu_pipes.txt"
# L1 and L2 throughput breakdowns of the transposes and conv2d (bd.txt)
S="--metrics breakdown:l1tex__throughput.avg.pct_of_peak_sustained_active,breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg"
bd() { echo "=== $2"; ncu --clock-control none --launch-count 1 $S /tmp/launch_ptx "$@" 2>&1 | grep -v "^==\|^ok "; }
{
for k in copy_col transpose_naive_row transpose_naive_col copy_row; do bd $P/transpose.ptx $k 64 64 16 16 $M4 $M4 u:1024 u:1024; done
bd $P/conv2d.ptx conv2d_global 64 64 16 16 $M4 b:100 $M4 u:1024 u:1024
bd $P/transpose_smem.ptx transpose_smem 32 32 32 8 $M4 $M4 u:1024 u:1024
} > "$out/bd.txt" 2>&1
# F: which stores merge before L2 (merge.csv)
nvcc -O3 -arch=sm_90 -o /tmp/merge $here/merge.cu
cuobjdump -sass /tmp/merge | grep -E "Function|STG|CS2R|BAR" > "$out/merge.sass"
ncu --clock-control none --metrics lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,gpu__time_duration.sum --csv /tmp/merge > "$out/merge.csv" 2>&1
echo "ncu lines: $(wc -l < "$out/ncu.txt") $(wc -l < "$out/ncu_pipes.txt")"
