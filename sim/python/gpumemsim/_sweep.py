"""Sweeps: the product of configs, workloads and parameter values, one DataFrame.

Engines: a local process pool (``concurrent.futures``) by default, or Dask distributed when given
a ``distributed.Client``. Dask rather than Ray: it is pure Python from pip (no daemon, no native
wheel per platform), ``distributed.LocalCluster`` starts a cluster in-process for tests and
laptops, and the same client reaches a real cluster (SSH, Kubernetes, HPC job queues).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import pandas as pd

from ._api import Config, run


def _points(configs, workloads, params) -> list[tuple[Config, str, dict]]:
    configs = [configs] if isinstance(configs, (str, Config, os.PathLike)) else list(configs)
    workloads = [workloads] if isinstance(workloads, (str, os.PathLike)) else list(workloads)
    params = params or {}
    names = list(params)
    grids = [list(v) if isinstance(v, Iterable) and not isinstance(v, str) else [v]
             for v in params.values()]
    out = []
    for c, w, values in itertools.product(configs, workloads, itertools.product(*grids)):
        c = c if isinstance(c, Config) else Config(str(c))
        out.append((c, str(w), dict(zip(names, values))))
    return out


def _one(point: tuple[int, Config, str, dict], run_kw: dict) -> list[dict]:
    """The rows of one point: one per launch, or one row with ``error`` set."""
    i, c, w, p = point
    base = {"point": i, "config": c.label, "workload": w, **{f"param.{k}": v for k, v in p.items()}}
    try:
        r = run(c, w, params=p, **run_kw)
    except ValueError as e:  # a bad point is a row, not the end of the sweep
        # The message sim prints, as `sim sweep` writes it.
        return [dict(base, error=str(e))]
    except Exception as e:
        return [dict(base, error=f"{type(e).__name__}: {e}")]
    rows = []
    for rec in r.metrics.to_dict("records"):
        rec.pop("config", None)
        rec.pop("workload", None)
        rows.append(dict(base, error=None, **rec))
    return rows


def _progress(total: int, show: Optional[bool]):
    if show is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="gpumemsim sweep")


def sweep(configs: Union[str, Config, Sequence[Union[str, Config]]],
          workloads: Union[str, Sequence[str]],
          params: Optional[Mapping[str, Union[int, Sequence[int]]]] = None,
          engine: Any = None, workers: Optional[int] = None,
          progress: Optional[bool] = None, **run_kw) -> pd.DataFrame:
    """Runs every (config, workload, params) of the product of the arguments.

    configs: names, paths or :class:`Config` objects (what-if variants: ``Config.replace``).
    workloads: names or paths. params: parameter name -> value or list of values.
    engine: None (a local process pool of ``workers`` processes, default one per core) or a
    ``distributed.Client`` (Dask). run_kw: passed to :func:`run` (``warm``, ``sample``).
    Points are numbered in the order of the product: configs outermost, then workloads, then
    the params in their order (the last varies fastest), as ``sim sweep`` numbers them.
    Returns one row per launch of each point, in point order, with columns ``point``,
    ``config`` (the label, with what-if changes), ``workload``, ``param.NAME``, ``error``
    (None, or the message of a point that failed: then its only row; for bad input the message
    ``sim`` prints, as in ``sim sweep``'s rows), ``launch``, ``kernel`` and
    the Nsight Compute metrics. The numbers equal single :func:`run` calls (runs are
    deterministic). Progress: a tqdm bar when tqdm is installed (``progress=False``: none).
    """
    points = [(i, *p) for i, p in enumerate(_points(configs, workloads, params))]
    bar = _progress(len(points), progress)
    results: dict[int, list[dict]] = {}
    if engine is None:
        # spawn, not fork: a forked child would inherit the simulator's thread pool without
        # its threads (a parent that ran a simulation already) and could hang.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = {pool.submit(_one, p, run_kw): p[0] for p in points}
            for f in as_completed(futures):
                results[futures[f]] = f.result()
                if bar is not None:
                    bar.update(1)
    else:
        from distributed import as_completed as dask_completed

        futures = engine.map(_one, points, run_kw=run_kw, pure=False)
        index = {f.key: p[0] for f, p in zip(futures, points)}
        for f in dask_completed(futures):
            results[index[f.key]] = f.result()
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    rows = [r for i in range(len(points)) for r in results[i]]
    return pd.DataFrame(rows)
