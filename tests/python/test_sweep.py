"""gpumemsim.sweep: a 2-worker Dask LocalCluster returns the local process pool's DataFrame, a
failing point is a row, and `sim sweep` writes the same rows."""

import io
import math

import pandas as pd
import pytest

import gpumemsim

L1 = [{}, {"l1.size_bytes": 65536, "l1.associativity": 128}, {"l1.size_bytes": 524288, "l1.associativity": 1024}]
GPUS = ["rtx3090", "h200"]
SIZES = [256 * k for k in range(1, 35)]  # 34 sizes x 6 configs = 204 points


def configs():
    return [gpumemsim.Config.load(g).replace(s) if s else gpumemsim.Config.load(g) for g in GPUS for s in L1]


@pytest.fixture(scope="module")
def pool_frame():
    return gpumemsim.sweep(configs(), "pseudo_random", {"n": SIZES}, workers=2, progress=False)


def records(df: pd.DataFrame) -> list:
    """Rows as dicts, NaN and None alike (an empty cell)."""
    out = []
    for r in df.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    return out


def test_pool_sweep_has_every_point(pool_frame):
    df = pool_frame
    assert df["point"].nunique() == 204 and len(df) == 408
    assert df["error"].isna().all()
    assert df["point"].tolist() == sorted(df["point"].tolist())
    assert df["config"].iloc[0] == "rtx3090" and df["config"].iloc[-1] == "h200[l1.size_bytes=524288,l1.associativity=1024]"


def test_local_cluster_equals_pool(pool_frame):
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        df = gpumemsim.sweep(configs(), "pseudo_random", {"n": SIZES}, engine=client, progress=False)
    pd.testing.assert_frame_equal(df, pool_frame)


def test_a_point_equals_its_single_run(pool_frame):
    one = gpumemsim.run(configs()[4], "pseudo_random", params={"n": SIZES[7]})
    rows = pool_frame[(pool_frame["config"] == configs()[4].label) & (pool_frame["param.n"] == SIZES[7])]
    assert len(rows) == 2
    for (_, row), (_, m) in zip(rows.iterrows(), one.metrics.iterrows()):
        for name in one.metrics.columns.drop(["config", "workload"]):
            assert row[name] == m[name], name


def test_failing_points_are_rows(sim):
    bad = gpumemsim.Config("rtx3090", (("l1.size_bytes", "3"),))
    df = gpumemsim.sweep(["rtx3090", bad], ["pseudo_random", "no_such_workload"], {"n": [1024]},
                         workers=1, progress=False)
    assert df["point"].tolist() == [0, 0, 1, 2, 3]
    assert df["error"].iloc[:2].isna().all()
    _, _, err = sim("run", "rtx3090", "no_such_workload")
    assert df["error"].iloc[2] == err.strip().removeprefix("error: ")
    assert df["error"].iloc[3].startswith("configs/rtx3090.toml: l1.size_bytes: size_bytes = 3 ")
    assert df["error"].iloc[3] == df["error"].iloc[4]


def test_sim_sweep_writes_the_same_rows(sim, tmp_path, pool_frame):
    sets = ", ".join("{" + ", ".join(f'"{k}" = {v}' for k, v in s.items()) + "}" for s in L1)
    f = tmp_path / "sweep.toml"
    f.write_text(f'configs = {GPUS!r}\nconfig_sets = [{sets}]\nworkloads = ["pseudo_random"]\n'
                 f'[params]\nn = {SIZES!r}\n'.replace("'", '"'))
    code, out, err = sim("sweep", str(f))
    assert code == 0, err
    cli = pd.read_csv(io.StringIO(out))
    assert list(cli.columns) == list(pool_frame.columns)
    assert records(cli) == records(pool_frame)
