//! Parsing Nsight Compute's CSV (`ncu --csv --metrics ...`, the default "details" page).
//!
//! ncu writes its own `==PROF==`/`==WARNING==` lines and the profiled program's output to the same
//! stdout, so the parser looks for the header line (first field `ID`), then reads every line with
//! as many fields as the header and skips the rest. One row per (kernel, metric):
//!
//! ```text
//! "ID","Process ID",...,"Kernel Name",...,"Metric Name","Metric Unit","Metric Value"
//! "0","494",...,"add_constant_constant_memory",...,"dram__bytes_read.sum","byte","51,256,832"
//! ```
//!
//! Values carry thousands separators (`1,600,000`); `n/a` means the metric was not collected for
//! that kernel. Units are converted to the simulator's: nanoseconds for time, bytes, cycles and
//! plain counts (ncu scales to `usecond`, `Kbyte` and the like unless `--print-units base`).

use std::collections::BTreeMap;

/// The metrics of one profiled kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelMetrics {
    /// ncu's launch ID (0, 1, ... in profiling order).
    pub id: String,
    /// Kernel name as ncu printed it.
    pub kernel: String,
    /// Metric name → value in base units.
    pub metrics: BTreeMap<String, f64>,
    /// Metrics that ncu printed as `n/a`.
    pub missing: Vec<String>,
}

/// Splits one CSV line into fields (RFC 4180: double quotes, `""` inside quotes), by the `csv`
/// crate. Line by line, because ncu interleaves lines that are not CSV (the profiled program's
/// own output may hold an unbalanced quote); empty for a line that is not a record.
pub fn split_line(line: &str) -> Vec<String> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    match reader.records().next() {
        Some(Ok(record)) => record.iter().map(str::to_string).collect(),
        _ => vec![],
    }
}

/// The factor that turns a value in `unit` into the simulator's unit (ns, bytes, counts).
pub fn unit_scale(unit: &str) -> f64 {
    match unit {
        "ns" | "nsecond" => return 1.0,
        "us" | "usecond" => return 1e3,
        "ms" | "msecond" => return 1e6,
        "s" | "second" => return 1e9,
        _ => {}
    }
    // SI prefixes on counts and bytes: Kbyte, Mbyte, Gcycle; binary: Kibyte, MiB.
    let mut chars = unit.chars();
    let power = match chars.next() {
        Some('K') | Some('k') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        _ => return 1.0,
    };
    let rest = chars.as_str();
    if rest.starts_with('i') && rest.len() > 1 {
        1024f64.powi(power)
    } else if rest.chars().next().is_some_and(|c| c.is_ascii_lowercase()) || rest == "B" {
        1000f64.powi(power)
    } else {
        1.0
    }
}

/// Parses a value: `1,600,000` → 1600000; `n/a` or empty → `None`.
pub fn parse_value(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") {
        return None;
    }
    t.replace(',', "").parse().ok()
}

struct Columns {
    width: usize,
    id: usize,
    kernel: usize,
    metric: usize,
    unit: Option<usize>,
    value: usize,
}

impl Columns {
    fn from_header(fields: &[String]) -> Result<Columns, String> {
        let find = |name: &str| fields.iter().position(|f| f == name);
        let need = |name: &str| {
            find(name).ok_or_else(|| {
                format!(
                    "ncu's CSV header has no column \"{name}\" (columns: {})",
                    fields.join(", ")
                )
            })
        };
        Ok(Columns {
            width: fields.len(),
            id: need("ID")?,
            kernel: need("Kernel Name")?,
            metric: need("Metric Name")?,
            unit: find("Metric Unit"),
            value: need("Metric Value")?,
        })
    }
}

/// Parses ncu's stdout into one [`KernelMetrics`] per profiled launch, in profiling order.
/// Errors when there is no header line or it lacks a needed column.
pub fn parse(text: &str) -> Result<Vec<KernelMetrics>, String> {
    let mut cols: Option<Columns> = None;
    let mut out: Vec<KernelMetrics> = vec![];
    for line in text.lines() {
        if line.starts_with("==") {
            continue;
        }
        let fields = split_line(line);
        if fields.first().is_some_and(|f| f == "ID") {
            cols = Some(Columns::from_header(&fields)?);
            continue;
        }
        let Some(c) = &cols else { continue };
        if fields.len() != c.width {
            continue;
        }
        let id = &fields[c.id];
        let k = match out.iter().position(|k| &k.id == id) {
            Some(i) => i,
            None => {
                out.push(KernelMetrics {
                    id: id.clone(),
                    kernel: fields[c.kernel].clone(),
                    metrics: BTreeMap::new(),
                    missing: vec![],
                });
                out.len() - 1
            }
        };
        let name = fields[c.metric].clone();
        let unit = c.unit.map(|u| fields[u].as_str()).unwrap_or("");
        match parse_value(&fields[c.value]) {
            Some(v) => {
                out[k].metrics.insert(name, v * unit_scale(unit));
            }
            None => out[k].missing.push(name),
        }
    }
    if cols.is_none() {
        return Err("no CSV in ncu's output (no header line starting with \"ID\")".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand in the layout of `validate/measurements/h200/add_constant/ncu_*.csv`, with
    /// the noise ncu mixes in: its own lines, the program's output, scaled units.
    const SAMPLE: &str = r#"==WARNING== Note: Running with unmodified GPU clocks.
==PROF== Connected to process 494 (/work/target/release/validate)
some output of the profiled program, with, commas
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","494","validate","127.0.0.1","add_constant_constant_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","51,256,832"
"0","494","validate","127.0.0.1","add_constant_constant_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","45,504"
"0","494","validate","127.0.0.1","add_constant_constant_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","idc__requests.sum","","1,600,000"
"0","494","validate","127.0.0.1","add_constant_constant_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","smsp__sass_inst_executed_op_ldc.sum","","n/a"
==PROF== Disconnected from process 494
"1","494","validate","127.0.0.1","add_constant_global_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","51.21"
"1","494","validate","127.0.0.1","add_constant_global_memory","1","7","(1024, 1, 1)","(12500, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","46.14"
"#;

    #[test]
    fn parses_kernels_in_order_with_base_units() {
        let k = parse(SAMPLE).unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(
            (k[0].id.as_str(), k[0].kernel.as_str()),
            ("0", "add_constant_constant_memory")
        );
        assert_eq!(k[0].metrics["dram__bytes_read.sum"], 51_256_832.0);
        assert_eq!(k[0].metrics["gpu__time_duration.sum"], 45_504.0);
        assert_eq!(k[0].metrics["idc__requests.sum"], 1_600_000.0);
        assert_eq!(k[0].missing, vec!["smsp__sass_inst_executed_op_ldc.sum"]);
        assert!(!k[0]
            .metrics
            .contains_key("smsp__sass_inst_executed_op_ldc.sum"));
        assert_eq!(k[1].kernel, "add_constant_global_memory");
        assert!((k[1].metrics["dram__bytes_read.sum"] - 51_210_000.0).abs() < 1e-6);
        assert!((k[1].metrics["gpu__time_duration.sum"] - 46_140.0).abs() < 1e-6);
    }

    #[test]
    fn parses_the_committed_h200_measurement() {
        let text = include_str!("../../measurements/h200/add_constant/ncu_12800000.csv");
        let k = parse(text).unwrap();
        assert_eq!(k.len(), 8);
        assert_eq!(k[0].metrics["idc__requests.sum"], 1_600_000.0);
        assert!(k
            .iter()
            .all(|k| k.metrics.contains_key("gpc__cycles_elapsed.max")));
    }

    #[test]
    fn no_header_is_an_error() {
        let e = parse("==ERROR== the user does not have permission\n").unwrap_err();
        assert!(e.contains("no CSV"), "{e}");
        let e = parse("\"ID\",\"Kernel Name\"\n").unwrap_err();
        assert!(e.contains("Metric Name"), "{e}");
    }

    #[test]
    fn quoted_fields_and_values() {
        assert_eq!(split_line(r#""a,b","c""d",e"#), vec!["a,b", "c\"d", "e"]);
        assert_eq!(split_line("\"x\",\"y\"\r\n"), vec!["x", "y"]);
        assert!(split_line("").is_empty());
        assert_eq!(parse_value("1,600,000"), Some(1.6e6));
        assert_eq!(parse_value("0.5"), Some(0.5));
        assert_eq!(parse_value("n/a"), None);
        assert_eq!(unit_scale("Kbyte"), 1e3);
        assert_eq!(unit_scale("Kibyte"), 1024.0);
        assert_eq!(unit_scale("msecond"), 1e6);
        assert_eq!(unit_scale("cycle"), 1.0);
        assert_eq!(unit_scale("Mcycle"), 1e6);
        assert_eq!(unit_scale(""), 1.0);
    }
}
