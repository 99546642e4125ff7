"""Constant vs global memory across sizes and what-if L1 sizes, on two GPUs (a notebook as a script).

    python3 docs/examples/sweep_pseudo_random.py OUT_DIR [--sizes 4096,65536,...]

Sweeps pseudo_random's n on rtx3090 and h200, each as described and with two what-if L1 sizes
(64 KiB and 512 KiB, in 4 sets like the configs' own L1), on a local process pool, and plots the
constant/global time ratio (gpu__time_duration.sum of the `constant` launch over the `global`
one) against n. Writes OUT_DIR/sweep_pseudo_random.png and OUT_DIR/sweep_pseudo_random.csv (the
sweep's DataFrame). The same sweep from the command line: `sim sweep docs/examples/sweep.toml`.
"""

import argparse
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

import gpumemsim

# What-if L1 sizes (Config.replace takes the config file's dotted keys).
L1 = {"as described": {},
      "L1 64 KiB": {"l1.size_bytes": 65536, "l1.associativity": 128},
      "L1 512 KiB": {"l1.size_bytes": 524288, "l1.associativity": 1024}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", help="directory for the PNG and CSV (made if missing)")
    ap.add_argument("--sizes", default="4096,32768,131072,524288",
                    help="comma-separated values of n (default: %(default)s)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.out_dir, exist_ok=True)

    # Cell 1: the configs, each GPU with its what-if variants.
    configs = [gpumemsim.Config.load(g).replace(ch) for g in ("rtx3090", "h200") for ch in L1.values()]
    names = {c.label: f"{c.source}, {what}" for c, what in zip(configs, list(L1) * 2)}

    # Cell 2: the sweep, one row per launch of each point.
    df = gpumemsim.sweep(configs, "pseudo_random", {"n": sizes}, progress=False)
    bad = df[df["error"].notna()]
    if len(bad):
        raise SystemExit(f"{len(bad)} points failed:\n" + "\n".join(bad["error"]))
    df.to_csv(os.path.join(args.out_dir, "sweep_pseudo_random.csv"), index=False)

    # Cell 3: constant / global time per (config, n).
    t = df.pivot_table(index=["config", "param.n"], columns="launch", values="gpu__time_duration.sum")
    ratio = (t["constant"] / t["global"]).rename("ratio").reset_index()

    # Cell 4: the plot.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, g in ratio.groupby("config", sort=False):
        ax.plot(g["param.n"], g["ratio"], marker="o", label=names[label])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (threads)")
    ax.set_ylabel("constant / global time")
    ax.set_title("pseudo_random: constant vs global memory (gpumemsim)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = os.path.join(args.out_dir, "sweep_pseudo_random.png")
    fig.savefig(png, dpi=100)
    print(ratio.to_string(index=False))
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
