#!/usr/bin/env python3
"""A first event model of one SM's IDC against const_smsp (N): it does NOT reproduce the H200.

    python3 validate/measurements/h200/ubench/idc_event_model.py [iters=60] [jit=0] [P=20] [F=70]

W warps each walk K addresses S bytes apart (the same K every iteration) through a constant L1 of
8 sets x 4 ways of 64-byte lines, LRU. The IDC does one lookup every c = 2 cycles, for the warp
ready first (the lowest-numbered on a tie). A lookup of a filled line hits (the warp is ready
again a cycle later); one of an absent line misses, allocates it (the set's least recently used
line goes) and starts its fill (F cycles); one of a line whose fill is pending misses too
(pending-fill merge, no new fill). A miss stalls its warp P cycles (the 20.6 cycles per miss of
one warp, M), +- jit cycles at random. Printed per case: miss %, fills per iteration, cycles per
iteration, and N's miss % and cycles per load (const_smsp_table.txt). The warps stay in step:
every lookup after the first of a line finds it pending, so about 100% miss at any warp count,
where the H200 misses 67-70% with 4 warps and about 22% from 16 on.
"""
import random
import sys

# (warps, K, stride): (H200 miss %, cycles per load), const_smsp_table.txt, warps w0..w(W-1).
GPU = {
    (1, 32, 128): (99.9, 673.7), (2, 32, 128): (99.9, 670.2), (4, 32, 128): (69.8, 503.9),
    (8, 32, 128): (32.5, 700.1), (16, 32, 128): (21.9, 1260.0), (32, 32, 128): (21.8, 2517.5),
    (1, 32, 256): (99.9, 674.5), (4, 32, 256): (69.9, 510.6), (8, 32, 256): (100.0, 1585.6),
    (16, 32, 256): (22.0, 1262.5), (1, 8, 512): (99.7, 178.5), (4, 8, 512): (72.6, 148.4),
    (8, 8, 512): (137.5, 504.1), (16, 8, 512): (153.5, 1050.7),
}


def run(W, K, S, iters=60, c=2, P=20, F=70, jit=0, sets=8, ways=4, line=64, seed=1):
    rng = random.Random(seed)
    cache = [[] for _ in range(sets)]  # per set: [line, last use, fill done]
    pos, ready, total = [0] * W, list(range(W)), K * iters
    looks = misses = fills = 0
    t, done, last = 0, 0, 0
    while done < W:
        cand = [(ready[w], w) for w in range(W) if pos[w] < total and ready[w] <= t]
        if not cand:
            t = min(ready[w] for w in range(W) if pos[w] < total)
            continue
        _, w = min(cand)
        ln = (pos[w] % K) * S // line
        st = cache[ln % sets]
        e = next((x for x in st if x[0] == ln), None)
        looks += 1
        stall = P + rng.randint(-jit, jit)
        if e is not None and e[2] <= t:
            e[1], ready[w] = t, t + 1
        elif e is not None:
            misses += 1
            e[1], ready[w] = t, t + stall
        else:
            misses += 1
            fills += 1
            if len(st) >= ways:
                st.remove(min(st, key=lambda x: x[1]))
            st.append([ln, t, t + F])
            ready[w] = t + stall
        pos[w] += 1
        if pos[w] == total:
            done, last = done + 1, t
        t += c
    return 100 * misses / looks, fills / iters, last / iters


def main():
    kw = {k: int(v) for k, v in (a.split("=") for a in sys.argv[1:])}
    print("warps K stride | model: miss % fills/iter cycles/iter | H200: miss % cycles")
    for (W, K, S), (gm, gc) in GPU.items():
        m, f, cy = run(W, K, S, **kw)
        print(f"{W:5} {K:2} {S:6} | {m:6.1f} {f:6.1f} {cy:7.1f} | {gm:6.1f} {gc:7.1f}")


if __name__ == "__main__":
    main()
