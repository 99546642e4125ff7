#!/usr/bin/env python3
"""carveout_ncu.csv (Nsight Compute, one launch per (threads, dynamic shared bytes) of
carveout.cu): per launch the carveout the driver chose and the smallest carveout that holds the
blocks the other limits allow (at most 32, and at most what 228 KiB holds) with 1 KiB reserved
per block; prints the table and how many launches the "smallest carveout" rule gets right.
Run from this directory."""
import csv

CARVEOUTS_KIB = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]
rows = [r for r in csv.reader(open("carveout_ncu.csv")) if len(r) > 10 and r[0].isdigit()]
by = {}
for r in rows:
    by.setdefault(int(r[0]), {})[r[12]] = float(r[14].replace(",", ""))
right = 0
print("threads smem_kib chosen_kib smallest_kib limit_shared_mem")
for i in sorted(by):
    m = by[i]
    t, s = int(m["launch__block_size"]), m["launch__shared_mem_per_block_dynamic"] / 1024
    chosen = m["launch__shared_mem_config_size"] / 1024
    per = s + m["launch__shared_mem_per_block_driver"] / 1024
    others = min(m["launch__occupancy_limit_warps"], m["launch__occupancy_limit_registers"], 32)
    want = min(others, int(228 // per))
    smallest = next(c for c in CARVEOUTS_KIB if c // per >= want)
    right += smallest == chosen
    print(f"{t:7d} {s:8.0f} {chosen:10.0f} {smallest:12.0f} {m['launch__occupancy_limit_shared_mem']:16.0f}")
print(f"the smallest carveout is the driver's on {right} of {len(by)} launches")
