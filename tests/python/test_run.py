"""gpumemsim.run and Config: the numbers of `sim run --format json`, exactly; outputs as numpy
arrays; what-if configs with the errors of a config file."""

import json

import numpy as np
import pytest

import gpumemsim

N = 4096


def test_run_equals_sim_run_json(sim):
    code, out, err = sim("run", "configs/rtx3090.toml", "pseudo_random", "--set", f"n={N}", "--format", "json")
    assert code == 0, err
    cli = [l["metrics"] for l in json.loads(out)["workloads"][0]["launches"]]
    r = gpumemsim.run("rtx3090", "pseudo_random", params={"n": N})
    py = [l["metrics"] for l in r.json["workloads"][0]["launches"]]
    assert py == cli
    assert r.metrics["launch"].tolist() == ["constant", "global"]
    assert len(cli[0]) > 40
    for i, metrics in enumerate(cli):
        for name, value in metrics.items():
            assert r.metrics.loc[i, name] == value, (i, name)


def test_outputs_are_numpy_arrays_of_the_kernel_results():
    r = gpumemsim.run("rtx3090", "pseudo_random", params={"n": N})
    # sums[i] = inputs[i] (zeros) + values[(threadIdx.x * 1357) % 16384] (iota), 1024 threads a block.
    want = ((np.arange(N) % 1024) * 1357) % 16384
    for launch in ("constant", "global"):
        a = r.outputs[f"{launch}.sums"]
        assert a.dtype == np.dtype("<i4") and a.shape == (N,)
        np.testing.assert_array_equal(a, want)
    assert "<table" in r._repr_html_()


def test_config_replace_is_validated_like_config_set(sim):
    base = gpumemsim.Config.load("rtx3090")
    bigger = base.replace({"l1.size_bytes": 262144})
    assert bigger.label == "rtx3090[l1.size_bytes=262144]"
    assert "size_bytes = 262144" in bigger.toml
    with pytest.raises(ValueError) as e:
        base.replace({"l1.size_bytes": 3})
    msg = str(e.value)
    assert msg.startswith("configs/rtx3090.toml: l1.size_bytes: size_bytes = 3 is not a positive multiple"), msg
    assert "allowed:" in msg
    code, _, err = sim("run", "rtx3090", "pseudo_random", "--config-set", "l1.size_bytes=3")
    assert code == 2 and err.strip() == f"error: {msg}"
    with pytest.raises(ValueError, match=r"l1\.no_such: .*unknown field `no_such`"):
        base.replace({"l1.no_such": 1})


def test_what_if_reaches_the_run():
    c = gpumemsim.Config.load("rtx3090").replace({"l1.size_bytes": 65536, "l1.associativity": 128})
    r = gpumemsim.run(c, "pseudo_random", params={"n": N})
    assert r.json["config_sets"] == {"l1.size_bytes": "65536", "l1.associativity": "128"}
