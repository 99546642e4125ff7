//! Sweeps: `sim sweep FILE.toml` runs every point of the product of configs, what-if variants
//! of them, workloads and parameter values, and reports one row per launch of each point (the
//! rows of Python's `gpumemsim.sweep`, column for column).
//!
//! A sweep file (docs/sweep-format.md):
//!
//! ```toml
//! configs = ["rtx3090", "h200"]                 # bundled names or paths (relative to this file)
//! config_sets = [{}, { "l1.size_bytes" = 65536 }] # what-if variants of every config; default [{}]
//! workloads = ["pseudo_random"]                 # bundled names or paths (relative to this file)
//! warm = false                                  # --warm
//! sample = "auto"                               # --sample: auto, full or N
//! [params]                                      # each a value or a list of values
//! n = [1024, 2048, 4096]
//! ```
//!
//! Points are numbered in the order of the product: configs (outermost), then config sets,
//! workloads, and the params in the order the file lists them (the last varies fastest), as
//! `itertools.product` orders Python's sweep. A point that fails is one row with its error;
//! the other points still run. Every run is deterministic, so a point's numbers equal a single
//! `sim run` of it.

pub mod table;

use crate::config::find::find_with;
use crate::config::set::ConfigSet;
use crate::report::{doc, select::Selection, Detail};
use crate::run::{run_workload, Options};
use crate::workload::Workload;
use crate::{Error, Result};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

pub use table::Row;

/// A parsed sweep file.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Config arguments as written (bundled names or paths).
    pub configs: Vec<String>,
    /// What-if variants applied to every config: lists of (dotted key, value as text).
    pub config_sets: Vec<Vec<ConfigSet>>,
    /// Workload arguments as written.
    pub workloads: Vec<String>,
    /// Parameter name -> its values, in the file's order.
    pub params: Vec<(String, Vec<i64>)>,
    /// Run each launch twice and report the second (`--warm`).
    pub warm: bool,
    /// Which waves to simulate (`--sample`).
    pub sampling: crate::exec::Sampling,
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// 0-based index in the product's order.
    pub index: usize,
    /// The config argument as written.
    pub config: String,
    /// Its what-if changes.
    pub sets: Vec<ConfigSet>,
    /// The workload argument as written.
    pub workload: String,
    /// Parameter values (`--set`).
    pub params: Vec<(String, i64)>,
}

impl Point {
    /// The config's label in the rows: the argument as written, with the changes in brackets
    /// (`h200[l1.size_bytes=65536]`), as Python's `Config.label`.
    pub fn config_label(&self) -> String {
        label(&self.config, &self.sets)
    }
}

/// `config[k=v,k=v]`, or `config` without changes.
pub fn label(config: &str, sets: &[ConfigSet]) -> String {
    if sets.is_empty() {
        return config.to_string();
    }
    let inner: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{config}[{}]", inner.join(","))
}

/// `auto`, `full` or N waves (N >= 1), as `sim run --sample`. `Err` says what is allowed.
pub fn parse_sampling(s: &str) -> std::result::Result<crate::exec::Sampling, String> {
    use crate::exec::Sampling;
    match s {
        "auto" => Ok(Sampling::Auto),
        "full" => Ok(Sampling::Full),
        n => match n.parse::<u64>() {
            Ok(0) | Err(_) => Err(format!(
                "`{n}` is not auto, full or a positive number of waves"
            )),
            Ok(1) => Ok(Sampling::Full),
            Ok(k) => Ok(Sampling::Every(k)),
        },
    }
}

/// A TOML table read in the file's order (serde's maps would sort the keys).
#[derive(Debug)]
struct Ordered<V>(Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Ordered(vec![])
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V2<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut out = vec![];
                while let Some((k, v)) = m.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V2(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    configs: Vec<String>,
    #[serde(default)]
    config_sets: Vec<Ordered<toml::Value>>,
    workloads: Vec<String>,
    #[serde(default)]
    params: Ordered<toml::Value>,
    #[serde(default)]
    warm: bool,
    #[serde(default)]
    sample: Option<toml::Value>,
}

/// A config-set value as the text `--config-set` would take (floats as Python's `repr`).
fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => format!("{f:?}"),
        other => other.to_string(),
    }
}

/// Parses sweep-file text; `path` names the file in errors. Errors name the key: a missing or
/// unknown key, an empty list, a parameter value that is not an integer, a bad `sample`.
pub fn parse(text: &str, path: &str) -> Result<Spec> {
    let bad = |key: &str, message: String| Error::Sweep {
        path: path.into(),
        key: key.into(),
        message,
    };
    let raw: RawSpec =
        crate::config::toml_error::from_str(text).map_err(|e| bad(&e.key, e.message))?;
    if raw.configs.is_empty() {
        return Err(bad(
            "configs",
            "is empty; give at least one config, e.g. configs = [\"rtx3090\"]".into(),
        ));
    }
    if raw.workloads.is_empty() {
        return Err(bad(
            "workloads",
            "is empty; give at least one workload, e.g. workloads = [\"pseudo_random\"]".into(),
        ));
    }
    let mut params = vec![];
    for (k, v) in raw.params.0 {
        let key = format!("params.{k}");
        let values = match v {
            toml::Value::Integer(x) => vec![x],
            toml::Value::Array(xs) if xs.is_empty() => {
                return Err(bad(&key, "is an empty list: a sweep over it has no points".into()))
            }
            toml::Value::Array(xs) => xs
                .iter()
                .map(|x| x.as_integer().ok_or_else(|| bad(&key, format!("{x} is not an integer; allowed: integers (workload params are integers)"))))
                .collect::<Result<Vec<i64>>>()?,
            other => {
                return Err(bad(&key, format!("{other} is not an integer or a list of integers, e.g. n = [1024, 4096]")))
            }
        };
        params.push((k, values));
    }
    let mut config_sets: Vec<Vec<ConfigSet>> = raw
        .config_sets
        .into_iter()
        .map(|t| {
            t.0.iter()
                .map(|(k, v)| (k.clone(), value_text(v)))
                .collect()
        })
        .collect();
    if config_sets.is_empty() {
        config_sets.push(vec![]);
    }
    let sampling = match &raw.sample {
        None => crate::exec::Sampling::Auto,
        Some(v) => parse_sampling(&value_text(v)).map_err(|m| bad("sample", m))?,
    };
    Ok(Spec {
        configs: raw.configs,
        config_sets,
        workloads: raw.workloads,
        params,
        warm: raw.warm,
        sampling,
    })
}

/// Every point of `spec`, in order.
pub fn points(spec: &Spec) -> Vec<Point> {
    let mut combos: Vec<Vec<(String, i64)>> = vec![vec![]];
    for (name, values) in &spec.params {
        combos = combos
            .iter()
            .flat_map(|c| {
                values
                    .iter()
                    .map(move |v| [c.clone(), vec![(name.clone(), *v)]].concat())
            })
            .collect();
    }
    let mut out = vec![];
    for c in &spec.configs {
        for s in &spec.config_sets {
            for w in &spec.workloads {
                for p in &combos {
                    let index = out.len();
                    out.push(Point {
                        index,
                        config: c.clone(),
                        sets: s.clone(),
                        workload: w.clone(),
                        params: p.clone(),
                    });
                }
            }
        }
    }
    out
}

/// `arg` as a path relative to `dir` where that file exists, else as written (a bundled name, or
/// a path relative to the current directory).
fn beside(dir: &Path, arg: &str) -> String {
    let p = dir.join(arg);
    if !Path::new(arg).is_absolute() && p.exists() {
        p.display().to_string()
    } else {
        arg.to_string()
    }
}

/// Runs one point; `dir` is where relative paths of the sweep file are looked for first.
/// Returns its rows: one per launch, or one row whose `error` is the message `sim run` prints.
pub fn run_point(point: &Point, spec: &Spec, dir: &Path) -> Vec<Row> {
    let mut base = Row::default();
    base.push("point", Value::from(point.index));
    base.push("config", Value::from(point.config_label()));
    base.push("workload", Value::from(point.workload.clone()));
    for (k, v) in &point.params {
        base.push(&format!("param.{k}"), Value::from(*v));
    }
    match launches(point, spec, dir) {
        Err(e) => {
            base.push("error", Value::from(format!("{e:#}")));
            vec![base]
        }
        Ok(launches) => launches
            .into_iter()
            .map(|l| {
                let mut row = base.clone();
                row.push("error", Value::Null);
                row.push("launch", l.get("label").cloned().unwrap_or(Value::Null));
                row.push("kernel", l.get("kernel").cloned().unwrap_or(Value::Null));
                if let Some(Value::Object(m)) = l.get("metrics") {
                    for (k, v) in m {
                        row.push(k, v.clone());
                    }
                }
                row
            })
            .collect(),
    }
}

/// Runs every point of `spec` on rayon's threads (each point's own simulation is parallel too)
/// and returns their rows in point order. `done` is called after each point with the number of
/// points finished and the total (for a progress bar).
pub fn run_all(spec: &Spec, dir: &Path, done: &(dyn Fn(usize, usize) + Sync)) -> Vec<Row> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let pts = points(spec);
    let finished = AtomicUsize::new(0);
    let per_point: Vec<Vec<Row>> = pts
        .par_iter()
        .map(|p| {
            let rows = run_point(p, spec, dir);
            done(finished.fetch_add(1, Ordering::Relaxed) + 1, pts.len());
            rows
        })
        .collect();
    per_point.into_iter().flatten().collect()
}

/// The launches of the point's `sim run --format json` document.
fn launches(point: &Point, spec: &Spec, dir: &Path) -> Result<Vec<Value>> {
    let found = find_with(&beside(dir, &point.config), &point.sets)?;
    let w = Workload::resolve(&beside(dir, &point.workload))?;
    let opts = Options {
        sets: point.params.clone(),
        warm: spec.warm,
        sampling: spec.sampling,
        ..Default::default()
    };
    let run = run_workload(&found.config, &w, &opts)?;
    let d = doc::document(&found, &[run], &[], &Selection::all(), Detail::default());
    Ok(match d.pointer("/workloads/0/launches") {
        Some(Value::Array(ls)) => ls.clone(),
        _ => vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_order_and_labels() {
        let s = parse(
            "configs = [\"a\", \"b\"]\nworkloads = [\"w\"]\nconfig_sets = [{}, {\"l1.size_bytes\" = 65536, \"dram.x\" = 0.5}]\n[params]\nz = [1, 2]\na = 7\n",
            "s.toml",
        )
        .unwrap();
        let p = points(&s);
        assert_eq!(p.len(), 2 * 2 * 2);
        assert_eq!(p[0].params, vec![("z".into(), 1), ("a".into(), 7)]);
        assert_eq!(p[1].params[0].1, 2);
        assert_eq!(p[2].config_label(), "a[l1.size_bytes=65536,dram.x=0.5]");
        assert_eq!(p[4].config_label(), "b");
        assert_eq!(p[7].index, 7);
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse("configs = []\nworkloads = [\"w\"]\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml: configs: is empty"), "{e}");
        let e = parse(
            "configs = [\"a\"]\nworkloads = [\"w\"]\n[params]\nn = []\n",
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("s.toml: params.n: is an empty list"), "{e}");
        let e = parse(
            "configs = [\"a\"]\nworkloads = [\"w\"]\nsample = 0\n",
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "s.toml: sample: `0` is not auto, full or a positive number of waves"
        );
        let e = parse("configs = [\"a\"]\nworkload = [\"w\"]\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `workload`"), "{e}");
    }
}
