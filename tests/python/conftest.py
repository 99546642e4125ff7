"""Shared fixtures of the Python package's tests (run by .ci/run after `cargo test --workspace`,
which builds the `sim` binary they compare with)."""

import os
import pathlib
import subprocess

import pytest

#: The repository root: `sim` runs there, so paths read as a user types them.
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _sim_binary() -> pathlib.Path:
    """$GPUMEMSIM_SIM, else the debug build in $CARGO_TARGET_DIR or the root's target/."""
    if os.environ.get("GPUMEMSIM_SIM"):
        return pathlib.Path(os.environ["GPUMEMSIM_SIM"]).resolve()
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "sim"


@pytest.fixture(scope="session")
def sim():
    """Runs `sim ARGS...` in the repository root: (exit code, stdout, stderr)."""
    exe = _sim_binary()
    if not exe.is_file():
        pytest.fail(f"no sim binary at {exe}: run `cargo build -p sim` first (or set GPUMEMSIM_SIM)")

    def run(*args: str):
        p = subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    return run
