"""gpumemsim from Python: run CUDA kernels' PTX on a simulated GPU and get Nsight Compute-named
metrics as pandas DataFrames.

    >>> import gpumemsim
    >>> r = gpumemsim.run("rtx3090", "pseudo_random", params={"n": 128000})
    >>> r.metrics["gpu__time_duration.sum"]          # ns, one row per launch

Configs and workloads are the ones ``sim`` knows: a bundled name (``rtx3090``, ``h200``;
``pseudo_random``: they are built into the extension, the same copies as the ``sim`` binary
built from the same tree) or a path to a TOML file. The simulation runs in Rust (the ``sim``
crate's library API, not the binary); the numbers are those of
``sim run CONFIG WORKLOAD --format json``.
"""

from ._api import Config, Result, Workload, bundled, load_report, run
from ._sweep import sweep

__all__ = ["Config", "Result", "Workload", "bundled", "load_report", "run", "sweep"]
