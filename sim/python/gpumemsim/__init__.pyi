from typing import Any, Mapping, Optional, Sequence, Union
import os
import numpy as np
import pandas as pd

class Config:
    source: str
    sets: tuple[tuple[str, str], ...]
    name: str
    path: str
    toml: str
    @staticmethod
    def load(source: Union[str, os.PathLike]) -> Config: ...
    def replace(self, changes: Mapping[str, Any]) -> Config: ...
    @property
    def label(self) -> str: ...

class Workload:
    spec: dict
    arrays: Mapping[str, np.ndarray]
    base_dir: str
    def __init__(self, spec: dict, arrays: Mapping[str, np.ndarray] = ..., base_dir: str = ...) -> None: ...

class Result:
    json: dict
    units: dict
    metrics: pd.DataFrame
    per_line: Optional[pd.DataFrame]
    per_instruction: Optional[pd.DataFrame]
    outputs: dict[str, np.ndarray]
    def _repr_html_(self) -> str: ...

def bundled() -> tuple[list[str], list[str]]: ...
def run(config: Union[str, os.PathLike, Config], workload: Union[str, os.PathLike, Workload],
        params: Optional[Mapping[str, int]] = ..., warm: bool = ..., sample: Optional[Union[str, int]] = ...,
        per_line: bool = ..., per_instruction: bool = ...) -> Result: ...
def load_report(path: Union[str, os.PathLike]) -> pd.DataFrame: ...
def sweep(configs: Union[str, Config, Sequence[Union[str, Config]]], workloads: Union[str, Sequence[str]],
          params: Optional[Mapping[str, Union[int, Sequence[int]]]] = ..., engine: Any = ...,
          workers: Optional[int] = ..., progress: Optional[bool] = ..., **run_kw: Any) -> pd.DataFrame: ...
