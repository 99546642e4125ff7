#!/usr/bin/env bash
# Device call of 2026-12-08 (issue 38, 39). Results in $OUT/w.tgz (folder w/).
#  W1. The constant hierarchy's request counters on suite38's constant launches (the IDC's misses
#      split by kind: covered by a pending miss, sent to the GCC, unserved for lack of resources;
#      the GCC's hits and misses; requests to L2), on 132 SMs as measured in suite38 and on 1 and
#      16 SMs, through launch_ptx (tests/fixtures/suite38/constant.ptx, const_walk).
#  W2. global_cas.cu: ADD, CAS and EXCH on contended global words, ns per operation.
#  W3. ubench.cu again (E: L2 write throughput) on the machine of the call, to compare with V.
#  X.  dram_random.cu: DRAM throughput by locality (random sectors, lines, 1 KiB, 4 KiB, a stream),
#      events and Nsight Compute's DRAM bytes; again on a 4 MiB buffer (L2-resident: the L2's rate
#      for scattered sectors).
#  W4. Issue 39's texture fixture with the fixed validate (target/release/validate carried).
#  W5. Where the driver places a workload's buffers (validate compare's report, `buffers`): suite37's
#      histograms (global_1m/4m run at half the predicted time if their 1 KiB bins start 512 B into
#      an aligned 1 KiB block, which spreads the 8 lines over 4 atomic-unit sets, not 2).
#  Y.  l2_scan.cu: what the L2 keeps of a buffer of 32 to 128 MiB read again and again (LRU or not),
#      events, and Nsight Compute's L2 hits of the 4th launch without flushing (--cache-control none).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=validate/measurements/h200/ubench
o="$OUT/w"
mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > "$o/gpu.csv"
nvcc -O2 -o /tmp/launch_ptx $d/launch_ptx.cu -lcuda 2> "$o/nvcc.txt"
nvcc -arch=sm_90 -O3 $d/global_cas.cu -o /tmp/global_cas 2>> "$o/nvcc.txt" && /tmp/global_cas > "$o/global_cas.txt" 2>&1
cuobjdump -sass /tmp/global_cas > "$o/global_cas.sass" 2>&1
M=idc__requests.sum,idc__requests_lookup_hit.sum,idc__requests_lookup_miss.sum,idc__requests_lookup_miss_tag_hit.sum,idc__requests_lookup_miss_tag_miss.sum,idc__requests_lookup_miss_tag_unavailable.sum,idc__request_cycles_active.sum,gcc__cache_requests_type_constant.sum,gcc__cache_requests_type_constant_lookup_hit.sum,gcc__cache_requests_type_constant_lookup_miss.sum,gcc__cache_requests_type_constant_lookup_miss_tag_hit.sum,gcc__gcc2xbar_requests_type_constant.sum,gcc__xbar2gcc_sectors.sum,gcc__cycles_active.max,gpu__time_duration.sum,sm__cycles_elapsed.max
P=tests/fixtures/suite38/constant.ptx
one() { # label grid block args...
  local l=$1 g=$2 b=$3; shift 3
  echo "=== $l grid=$g block=$b"
  timeout 60 ncu --clock-control none --csv --launch-skip 1 --launch-count 1 --metrics $M \
    /tmp/launch_ptx $P const_walk $g 1 $b 1 b:$((g * b * 4)) u:256 "$@" 2>&1 | grep '^"0"' | awk -F'","' '{print $13 "," $15}' | tr -d '"'
}
{
for g in 132 16 1; do
  for t in 2048 4096 8192 16384 32768 65536; do
    w=$((t / 4)); one t${t}_k8_s64 $g 256 u:7 u:16 u:128 u:$((w - 1)) u:$((w / 8))
  done
  one walk_k4_s64 $g 256 u:3 u:16 u:64 u:16383 u:2048
  one walk_k32_s64 $g 256 u:31 u:16 u:512 u:16383 u:2048
  one k16_s256 $g 256 u:15 u:64 u:0 u:16383 u:0
  one k32_s256 $g 256 u:31 u:64 u:0 u:16383 u:0
  one t16384_k32_s4 $g 256 u:31 u:1 u:32 u:4095 u:512
done
for t in 16384 65536; do w=$((t / 4)); one t${t}_k8_s64_1warp 1 32 u:7 u:16 u:128 u:$((w - 1)) u:$((w / 8)); done
one t65536_k8_s64_2warps 1 64 u:7 u:16 u:128 u:16383 u:2048
one t65536_k8_s64_4warps 1 128 u:7 u:16 u:128 u:16383 u:2048
} > "$o/const_ncu.txt" 2>&1
nvcc -arch=sm_90 -O3 $d/dram_random.cu -o /tmp/dram_random 2>> "$o/nvcc.txt" && /tmp/dram_random > "$o/dram_random.txt" 2>&1
timeout 90 ncu --clock-control none --csv --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed /tmp/dram_random > "$o/dram_random_ncu.csv" 2>&1
/tmp/dram_random 20 > "$o/l2_random.txt" 2>&1
timeout 90 ncu --clock-control none --csv --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum /tmp/dram_random 20 > "$o/l2_random_ncu.csv" 2>&1
nvcc -arch=sm_90 -O3 $d/ubench.cu -o /tmp/ubench 2>> "$o/nvcc.txt" && timeout 120 /tmp/ubench > "$o/ubench.txt" 2>&1
nvcc -arch=sm_90 -O3 $d/l2_writes.cu -o /tmp/l2_writes 2>> "$o/nvcc.txt" && /tmp/l2_writes > "$o/l2_writes.txt" 2>&1
OUT="$o/tex" NCU=ncu RUST_BACKTRACE=1 timeout 200 tests/fixtures/texture/h200.sh > "$o/tex_run.txt" 2>&1
nvcc -arch=sm_90 -O3 $d/l2_scan.cu -o /tmp/l2_scan 2>> "$o/nvcc.txt" && timeout 60 /tmp/l2_scan > "$o/l2_scan.txt" 2>&1
for m in 48 56 60 64 68 72 96; do
  echo "=== $m MiB"
  timeout 60 ncu --clock-control none --cache-control none --csv --kernel-name k_scan --launch-skip 3 --launch-count 1 \
    --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,gpu__time_duration.sum \
    /tmp/l2_scan $m 2>&1 | grep '^"'
done > "$o/l2_scan_ncu.csv" 2>&1
RUST_BACKTRACE=1 timeout 120 target/release/validate compare tests/fixtures/suite37/atomics.toml \
    tests/fixtures/suite38/atomics.toml --config configs/h200.toml --no-ncu --repeat 5 \
    --out "$o/places.json" > "$o/places.txt" 2>&1
tar czf "$OUT/w.tgz" -C "$OUT" w && rm -rf "$o"
