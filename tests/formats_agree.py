#!/usr/bin/env python3
"""Reads `sim run --format csv` with Python's csv module and `sim run --format json` with json,
and checks that they hold the same launches and the same numbers (issue 42, "Done when").

    python3 tests/formats_agree.py REPORT.csv REPORT.json [EXPECTED_WORKLOADS...]

Checks: the JSON is one object with schema_version, tool, config and config_sha256 and a
`workloads` list; every count is a JSON integer (only gpu__time_duration.sum, in ns, is a real
number); the CSV's first row names the columns (ncu's identity columns, then the metrics sorted),
its second row the units (those of the JSON's `units`), then one row per launch, in the JSON's
order, with the same workload, label, kernel, grid, block and metric values. Prints one line
saying what agreed; any disagreement is an AssertionError naming the launch and metric.
"""

import csv
import json
import sys

IDENTITY = ["ID", "Workload", "Launch", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"]
REAL = {"gpu__time_duration.sum"}


def dims(d):
    return "({}, {}, {})".format(*d)


def main(csv_path, json_path, expected):
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    assert isinstance(doc, dict), "the JSON is one object"
    for key in ("schema_version", "tool", "config", "config_sha256", "gpu", "units", "workloads"):
        assert key in doc, f"JSON key {key!r} missing"
    assert isinstance(doc["schema_version"], int)
    assert len(doc["config_sha256"]) == 64
    names = [w["workload"] for w in doc["workloads"]]
    if expected:
        assert names == expected, f"workloads {names}, expected {expected}"

    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, units, data = rows[0], rows[1], rows[2:]
    assert header[: len(IDENTITY)] == IDENTITY, header[: len(IDENTITY)]
    metrics = header[len(IDENTITY):]
    assert metrics == sorted(metrics), "metric columns sorted by name, as ncu's raw page"
    assert all(u == "" for u in units[: len(IDENTITY)])
    for m, u in zip(metrics, units[len(IDENTITY):]):
        assert doc["units"][m] == u, f"unit of {m}: CSV {u!r}, JSON {doc['units'][m]!r}"

    launches = [(w["workload"], l) for w in doc["workloads"] for l in w["launches"]]
    assert len(data) == len(launches), f"{len(data)} CSV rows, {len(launches)} JSON launches"
    for i, (row, (workload, launch)) in enumerate(zip(data, launches)):
        r = dict(zip(header, row))
        where = f"launch {i} ({workload}/{launch['label']})"
        assert r["ID"] == str(i), where
        assert r["Workload"] == workload, where
        assert r["Launch"] == launch["label"], where
        assert r["Kernel Name"] == launch["kernel"], where
        assert r["Grid Size"] == dims(launch["grid"]), where
        assert r["Block Size"] == dims(launch["block"]), where
        assert r["Device"] == doc["gpu"] and r["CC"] == doc["compute_capability"], where
        assert sorted(launch["metrics"]) == metrics, f"{where}: the same metrics"
        for m in metrics:
            j = launch["metrics"][m]
            if m in REAL:
                assert isinstance(j, float), f"{where}: {m} = {j!r} is a real number"
                assert float(r[m]) == j, f"{where}: {m}: CSV {r[m]}, JSON {j}"
            else:
                assert isinstance(j, int) and not isinstance(j, bool), f"{where}: {m} = {j!r}"
                assert int(r[m]) == j, f"{where}: {m}: CSV {r[m]}, JSON {j}"
    print(f"ok: {len(names)} workload(s), {len(data)} launches x {len(metrics)} metrics agree")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
