"""Runs, configs and reports (see the package docstring)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

import numpy as np
import pandas as pd

from . import _gpumemsim as _rs

#: numpy dtypes of the workload format's element types (docs/workload-format.md).
DTYPES = {"i8": np.dtype("i1"), "u8": np.dtype("u1"), "i16": np.dtype("<i2"), "u16": np.dtype("<u2"),
          "i32": np.dtype("<i4"), "u32": np.dtype("<u4"), "i64": np.dtype("<i8"), "u64": np.dtype("<u8"),
          "f32": np.dtype("<f4"), "f64": np.dtype("<f8"), "f16": np.dtype("<f2"), "bf16": np.dtype("<u2")}


def bundled() -> tuple[list[str], list[str]]:
    """The bundled names: (configs, workloads), as ``sim list --configs`` and ``sim list``."""
    return _rs.bundled()


@dataclass(frozen=True)
class Config:
    """A GPU config: a bundled name or a TOML path, plus what-if changes.

    ``sets`` maps dotted TOML keys (``"l1.size_bytes"``, ``"constant.cache[0].line_bytes"``)
    to values; they are made before validation, exactly as ``sim run --config-set KEY=VALUE``,
    so a bad value raises the same ``ValueError`` (naming the key and the allowed range).
    """

    source: str
    sets: tuple[tuple[str, str], ...] = ()
    name: str = field(default="", compare=False)
    path: str = field(default="", compare=False)
    toml: str = field(default="", compare=False, repr=False)

    @staticmethod
    def load(source: Union[str, os.PathLike]) -> "Config":
        """Loads and validates config ``source`` (name or path). Raises ``ValueError``."""
        return Config(str(source))._validated()

    def replace(self, changes: Mapping[str, Any]) -> "Config":
        """A copy with the dotted keys of ``changes`` set (bool as true/false), validated."""
        add = tuple((k, _literal(v)) for k, v in changes.items())
        return Config(self.source, self.sets + add)._validated()

    def _validated(self) -> "Config":
        name, path, text = _rs.config_toml(self.source, list(self.sets))
        return Config(self.source, self.sets, name, path, text)

    @property
    def label(self) -> str:
        """The config as given, with the changes: ``h200[l1.size_bytes=131072]`` (a sweep's
        ``config`` column; ``sim sweep`` writes the same)."""
        if not self.sets:
            return self.source
        return self.source + "[" + ",".join(f"{k}={v}" for k, v in self.sets) + "]"


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


@dataclass
class Workload:
    """A workload built in Python: a dict in the workload-file format (docs/workload-format.md).

    ``spec`` is what the TOML file would hold (``name``, ``ptx``, ``params``, ``buffer``,
    ``launch`` lists...); ``arrays`` gives buffers or constants their initial contents from numpy
    arrays (name -> array; written to a temporary raw little-endian file and used as
    ``init = "file:..."``). Relative paths in ``spec`` are read from ``base_dir``.
    """

    spec: dict
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)
    base_dir: str = "."

    def _toml(self, tmp: str) -> str:
        spec = json.loads(json.dumps(self.spec))
        for key in ("buffer", "constant"):
            for item in spec.get(key, []):
                ident = item.get("name", item.get("symbol"))
                if ident in self.arrays:
                    a = np.ascontiguousarray(self.arrays[ident])
                    f = os.path.join(tmp, f"{ident}.bin")
                    a.astype(a.dtype.newbyteorder("<")).tofile(f)
                    item["init"] = "file:" + os.path.abspath(f)
        base = os.path.abspath(self.base_dir)
        for key in ("ptx", "cuda"):
            if key in spec and not os.path.isabs(spec[key]):
                spec[key] = os.path.join(base, spec[key])
        return _to_toml(spec)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(v.item() if hasattr(v, "item") else v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} in a workload")


def _to_toml(spec: dict) -> str:
    """A workload dict as TOML: scalars first, then tables, then arrays of tables."""
    lines, tables = [], []
    for k, v in spec.items():
        if isinstance(v, dict):
            tables.append(f"[{k}]\n" + "".join(f"{json.dumps(a)} = {_toml_value(b)}\n" for a, b in v.items()))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for x in v:
                tables.append(f"[[{k}]]\n" + "".join(f"{json.dumps(a)} = {_toml_value(b)}\n" for a, b in x.items()))
        else:
            lines.append(f"{json.dumps(k)} = {_toml_value(v)}\n")
    return "".join(lines) + "\n".join(tables)


class Result:
    """One run: ``metrics`` (a DataFrame, one row per launch, Nsight Compute metric names as
    columns: times in ns, ``gpc__cycles_elapsed.max`` in SM cycles, bytes, counts; the units are
    ``units``), ``per_line`` / ``per_instruction`` (DataFrames when asked for, else None),
    ``outputs`` (``"launch.buffer"`` -> numpy array of the buffer's type and shape) and ``json``
    (the document of ``sim run --format json``, as a dict)."""

    def __init__(self, doc: dict, outputs: list[dict]):
        self.json: dict = doc
        w = doc["workloads"][0]
        self.units: dict = doc.get("units", {})
        rows = []
        for l in w["launches"]:
            row = {"config": doc["config_name"], "workload": w["workload"], "launch": l["label"],
                   "kernel": l.get("kernel")}
            row.update(l["metrics"])
            rows.append(row)
        self.metrics: pd.DataFrame = pd.DataFrame(rows)
        self.per_line: Optional[pd.DataFrame] = _detail(w, "per_source_line")
        self.per_instruction: Optional[pd.DataFrame] = _detail(w, "per_instruction")
        self.outputs: dict[str, np.ndarray] = {}
        for o in outputs:
            a = np.frombuffer(o["bytes"], dtype=DTYPES.get(o["type"], np.uint8))
            shape = tuple(o["shape"])
            if int(np.prod(shape)) == a.size:
                a = a.reshape(shape)
            self.outputs[f'{o["launch"]}.{o["buffer"]}'] = a

    def _repr_html_(self) -> str:
        w = self.json["workloads"][0]
        head = f"<b>{w['workload']}</b> on {self.json['gpu']} ({self.json['config']})"
        cols = [c for c in ["launch", "gpu__time_duration.sum", "gpc__cycles_elapsed.max",
                            "idc__requests.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                            "dram__bytes_read.sum"] if c in self.metrics]
        return head + self.metrics[cols].to_html(index=False)

    def __repr__(self) -> str:
        return f"<gpumemsim.Result {self.json['workloads'][0]['workload']} on {self.json['gpu']}: {len(self.metrics)} launches>"


def _detail(w: dict, key: str) -> Optional[pd.DataFrame]:
    rows = [dict(r, launch=l["label"]) for l in w["launches"] for r in l.get(key, []) or []]
    return pd.DataFrame(rows) if any(key in l for l in w["launches"]) else None


def run(config: Union[str, os.PathLike, Config], workload: Union[str, os.PathLike, Workload],
        params: Optional[Mapping[str, int]] = None, warm: bool = False,
        sample: Optional[Union[str, int]] = None, per_line: bool = False,
        per_instruction: bool = False) -> Result:
    """Runs ``workload`` on ``config`` as ``sim run CONFIG WORKLOAD --format json`` does.

    config: a bundled name, a path, or a :class:`Config` (with what-if changes).
    workload: a bundled name, a path, or a :class:`Workload` built in Python.
    params: workload parameters (``--set``; integers, as the workload format allows).
    warm: run each launch twice and report the second (``--warm``).
    sample: ``"auto"`` (default), ``"full"`` or N waves (``--sample``).
    Raises ``ValueError`` with the message ``sim`` prints for bad input.
    """
    cfg = config if isinstance(config, Config) else Config(str(config))
    sets = [(str(k), int(v)) for k, v in (params or {}).items()]
    kw = dict(params=sets, config_sets=list(cfg.sets), warm=warm,
              sample=None if sample is None else str(sample), per_line=per_line,
              per_instruction=per_instruction)
    if isinstance(workload, Workload):
        with tempfile.TemporaryDirectory() as tmp:
            text = workload._toml(tmp)
            name = workload.spec.get("name", "workload")
            doc, outs = _rs.run(cfg.source, name, inline_toml=text, base_dir=tmp, **kw)
    else:
        doc, outs = _rs.run(cfg.source, str(workload), **kw)
    return Result(json.loads(doc), outs)


def load_report(path: Union[str, os.PathLike]) -> pd.DataFrame:
    """A report as a DataFrame, one row per (workload, launch): a ``sim run --format json``
    document, or a JSON report of ``validate`` (one row per element of its lists of records)."""
    with open(path) as f:
        doc = json.load(f)
    if "workloads" in doc and doc["workloads"] and "launches" in doc["workloads"][0]:
        rows = []
        for w in doc["workloads"]:
            for l in w["launches"]:
                rows.append({"config": doc.get("config_name"), "workload": w["workload"],
                             "launch": l["label"], **l.get("metrics", {})})
        return pd.DataFrame(rows)
    return pd.json_normalize(_records(doc))


def _records(doc: Any) -> list:
    """The longest list of objects in ``doc`` (a validate report's rows)."""
    best: list = []
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            if x and all(isinstance(e, dict) for e in x) and len(x) > len(best):
                best = x
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return best
