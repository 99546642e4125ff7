"""docs/examples/sweep_pseudo_random.py runs as the docs say and writes its PNG and CSV."""

import subprocess
import sys

import pandas as pd

from conftest import ROOT


def test_sweep_example_writes_the_plot(tmp_path):
    script = ROOT / "docs" / "examples" / "sweep_pseudo_random.py"
    p = subprocess.run([sys.executable, str(script), str(tmp_path / "out"), "--sizes", "4096,131072"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    png = tmp_path / "out" / "sweep_pseudo_random.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    df = pd.read_csv(tmp_path / "out" / "sweep_pseudo_random.csv")
    # 2 GPUs x 3 L1 variants x 2 sizes, two launches each.
    assert len(df) == 24 and df["error"].isna().all()
    assert "rtx3090[l1.size_bytes=65536,l1.associativity=128]" in set(df["config"])
