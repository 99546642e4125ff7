//! `gpumemsim._gpumemsim`: the Rust half of the Python package. Each function takes plain
//! values (strings, integers, lists) and returns JSON text or bytes, which the Python half
//! (`sim/python/gpumemsim/`) turns into DataFrames and numpy arrays; errors are `ValueError`
//! with the message `sim` prints.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sim::config::find::find_with;
use sim::report::{doc, select::Selection, Detail};
use sim::run::{run_workload, Options};
use sim::workload::{Source, Workload};

/// A sim error as a Python `ValueError` with the whole chain of causes.
fn err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{e:#}"))
}

/// `--sample auto|full|N`, as `sim run` reads it.
fn sampling(s: Option<&str>) -> PyResult<sim::exec::Sampling> {
    sim::sweep::parse_sampling(s.unwrap_or("auto")).map_err(|m| err(format!("sample: {m}")))
}

/// The workload: a bundled name or a path, or (`inline_toml`) workload-file TOML whose relative
/// paths are read from `base_dir`.
fn workload(name: &str, inline_toml: Option<&str>, base_dir: Option<&str>) -> PyResult<Workload> {
    match inline_toml {
        None => Workload::resolve(name).map_err(err),
        Some(text) => {
            let dir = std::path::Path::new(base_dir.unwrap_or("."));
            Workload::from_toml_str(text, Source::File(dir.join(format!("{name}.toml"))))
                .map_err(err)
        }
    }
}

/// Validates config `config` (a bundled name or a path) with the what-if changes `sets`
/// (dotted key, value as typed) and returns its TOML text as validated, with the changes made.
/// Raises `ValueError` naming the key when it is not a valid config.
#[pyfunction]
#[pyo3(signature = (config, sets=vec![]))]
fn config_toml(config: &str, sets: Vec<(String, String)>) -> PyResult<(String, String, String)> {
    let found = find_with(config, &sets).map_err(err)?;
    let text = toml::to_string(&found.config).map_err(err)?;
    Ok((found.name, found.path, text))
}

/// Runs `workload` on `config` as `sim run CONFIG WORKLOAD --format json` does and returns
/// (the JSON document, the output buffers). Outputs: one tuple (launch label, buffer name,
/// element type, shape, bytes) per output buffer and launch, little-endian.
#[pyfunction]
#[pyo3(signature = (config, workload_name, params=vec![], config_sets=vec![], warm=false, sample=None,
    per_line=false, per_instruction=false, keep_outputs=true, inline_toml=None, base_dir=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    config: &str,
    workload_name: &str,
    params: Vec<(String, i64)>,
    config_sets: Vec<(String, String)>,
    warm: bool,
    sample: Option<&str>,
    per_line: bool,
    per_instruction: bool,
    keep_outputs: bool,
    inline_toml: Option<&str>,
    base_dir: Option<&str>,
) -> PyResult<(String, Vec<Bound<'py, PyDict>>)> {
    let found = find_with(config, &config_sets).map_err(err)?;
    let w = workload(workload_name, inline_toml, base_dir)?;
    let opts = Options {
        sets: params,
        warm,
        keep_outputs,
        sampling: sampling(sample)?,
        ..Default::default()
    };
    // The simulation runs without the GIL: other Python threads go on.
    let result = py.allow_threads(|| {
        run_workload(&found.config, &w, &opts).map(|mut run| {
            if per_line || per_instruction {
                run.sources = sim::run::sources::find(&run.line_files, &w);
            }
            run
        })
    });
    let run = result.map_err(err)?;
    let mut outputs = vec![];
    for l in &run.launches {
        for (name, bytes) in &l.outputs {
            let Some(spec) = run.outputs.iter().find(|o| &o.name == name) else {
                continue;
            };
            let d = PyDict::new(py);
            d.set_item("launch", &l.label)?;
            d.set_item("buffer", name)?;
            d.set_item("type", &spec.ty)?;
            d.set_item("shape", spec.shape.clone())?;
            d.set_item("bytes", PyBytes::new(py, bytes))?;
            outputs.push(d);
        }
    }
    let detail = Detail {
        per_instruction,
        per_line,
    };
    let document = doc::document(&found, &[run], &[], &Selection::all(), detail);
    Ok((serde_json::to_string(&document).map_err(err)?, outputs))
}

/// The bundled configs and workloads: (config names, workload names).
#[pyfunction]
fn bundled() -> (Vec<String>, Vec<String>) {
    let c = gpumemsim::configs()
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let w = gpumemsim::workloads()
        .iter()
        .map(|w| w.name.to_string())
        .collect();
    (c, w)
}

/// The Rust half of `gpumemsim`.
#[pymodule]
fn _gpumemsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(config_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(bundled, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
