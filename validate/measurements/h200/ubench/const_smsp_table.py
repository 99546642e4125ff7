#!/usr/bin/env python3
"""const_smsp.csv (cycles per load) joined with const_smsp_ncu.csv (Nsight Compute, one launch per
row in the same order): prints const_smsp_table.txt. Run from this directory."""
import csv

rows = [r for r in csv.reader(open("const_smsp_ncu.csv")) if len(r) > 10 and r[0].isdigit()]
by = {}
for r in rows:
    by.setdefault(int(r[0]), {})[r[12]] = float(r[14].replace(",", ""))
cases = [l.strip().split(",") for l in open("const_smsp.csv") if not l.startswith("case")]
print("case        k  stride delay warps cycles/load  idc_req  idc_miss  miss%   gcc_req")
for i, c in enumerate(cases):
    m = by[i]
    req, miss = m["idc__requests.sum"], m["idc__requests_lookup_miss.sum"]
    gcc = m["gcc__cache_requests_type_constant.sum"]
    print(f"{c[0]:10s} {c[2]:>3} {c[3]:>6} {c[4]:>5} {c[5]:>5} {float(c[6]):11.1f} "
          f"{req:8.0f} {miss:9.0f} {100 * miss / req:6.1f} {gcc:8.0f}")
