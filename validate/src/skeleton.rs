//! A config skeleton from a device's attributes: what `validate device --write-config` writes and
//! what `compare --config auto` builds in memory when no shipped config matches the device.
//!
//! The attributes give the identity, the occupancy limits, the SM count and clock, shared and
//! constant memory sizes, the L2 size and (from the memory clock and bus width) the DRAM bandwidth.
//! Everything else (latencies, cache geometries, bank width, the constant caches, the L1,
//! throughputs, the launch overhead) is copied from a shipped config, the nearest in compute
//! capability ([`nearest`]), and marked `# assumed: taken from configs/<x>.toml`. Pure: a
//! [`DeviceInfo`] and a [`GpuConfig`] in, TOML text out.

use crate::report::DeviceInfo;
use sim::config::GpuConfig;
use std::fmt::Write as _;

/// Column of the trailing comments, as in the shipped configs.
const COMMENT_COLUMN: usize = 32;

/// A generated config: its text and the dotted keys whose values were assumed.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    /// The TOML text.
    pub text: String,
    /// Dotted keys taken from the base config (`sm.schedulers`, `constant.cache[1].size_bytes`).
    pub assumed: Vec<String>,
    /// Tables whose every key was assumed (`l1`, `constant.cache[0]`), in file order.
    pub assumed_tables: Vec<String>,
}

impl Skeleton {
    /// The assumed keys in few words: a table whose every key was assumed as `l1.*`.
    pub fn assumed_summary(&self) -> String {
        let mut out: Vec<String> = vec![];
        for key in &self.assumed {
            let table = key.rsplit_once('.').map_or("", |(t, _)| t);
            if self.assumed_tables.iter().any(|t| t == table) {
                let all = format!("{table}.*");
                if !out.contains(&all) {
                    out.push(all);
                }
            } else {
                out.push(key.clone());
            }
        }
        out.join(", ")
    }
}

/// The skeleton's text for `info`, taking what the attributes do not give from `base` (read from
/// `base_path`, as named in the comments).
pub fn config_skeleton(info: &DeviceInfo, base: &GpuConfig, base_path: &str) -> String {
    skeleton(info, base, base_path).text
}

/// A TOML value.
trait Toml {
    fn toml(&self) -> String;
}

impl Toml for u32 {
    fn toml(&self) -> String {
        self.to_string()
    }
}

impl Toml for u64 {
    fn toml(&self) -> String {
        self.to_string()
    }
}

impl Toml for f64 {
    /// Always with a decimal point (`1980.0`), as the float keys are written in the configs.
    fn toml(&self) -> String {
        format!("{self:?}")
    }
}

impl Toml for str {
    /// A basic string: JSON's escapes are TOML's.
    fn toml(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "\"\"".into())
    }
}

/// The values the attributes give: dotted key → (TOML value, source comment).
#[derive(Default)]
struct Given(Vec<(String, String, String)>);

impl Given {
    fn set(&mut self, key: &str, value: &(impl Toml + ?Sized), source: impl Into<String>) {
        self.0.push((key.to_string(), value.toml(), source.into()));
    }

    fn get(&self, key: &str) -> Option<(&str, &str)> {
        self.0
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, v, c)| (v.as_str(), c.as_str()))
    }
}

/// `v` rounded to one decimal.
fn tenths(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Peak DRAM bandwidth in GB/s: 2 transfers per memory clock (DDR) x bus width / 8.
pub fn dram_peak_gb_per_s(memory_clock_mhz: f64, bus_bits: u32) -> f64 {
    2.0 * memory_clock_mhz * 1e6 * f64::from(bus_bits) / 8.0 / 1e9
}

/// What `info` gives, keyed by the config's dotted keys (`base` decides the L2 geometry that the
/// L2 size must fit).
fn given(info: &DeviceInfo, base: &GpuConfig) -> Given {
    let mut g = Given::default();
    let attr = |name: &str| format!("[measured] device attribute {name}");
    g.set("gpu.name", info.name.as_str(), "[measured] cuDeviceGetName");
    g.set(
        "gpu.compute_capability",
        info.compute_capability.as_str(),
        "[measured] device attributes COMPUTE_CAPABILITY_MAJOR, _MINOR",
    );
    g.set("sm.count", &info.sm_count, attr("MULTIPROCESSOR_COUNT"));
    if let Some(mhz) = info.sm_clock_mhz.filter(|&m| m > 0.0) {
        let source = attr("CLOCK_RATE (the maximum SM clock)");
        g.set("sm.clock_mhz", &tenths(mhz), source);
    }
    if let Some(w) = info.warp_size {
        g.set("sm.warp_size", &w, attr("WARP_SIZE"));
    }
    if let Some(t) = info.max_threads_per_sm {
        g.set("sm.max_threads", &t, attr("MAX_THREADS_PER_MULTIPROCESSOR"));
        let warp = info.warp_size.unwrap_or(base.sm.warp_size).max(1);
        let source = "[derived] max_threads / warp_size (no attribute gives it)";
        g.set("sm.max_warps", &(t / warp), source);
    }
    if let Some(b) = info.max_blocks_per_sm {
        g.set("sm.max_blocks", &b, attr("MAX_BLOCKS_PER_MULTIPROCESSOR"));
    }
    if let Some(t) = info.max_threads_per_block {
        g.set(
            "sm.max_threads_per_block",
            &t,
            attr("MAX_THREADS_PER_BLOCK"),
        );
    }
    if let Some(r) = info.registers_per_sm {
        g.set("sm.registers", &r, attr("MAX_REGISTERS_PER_MULTIPROCESSOR"));
    }
    let to_u32 = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
    if let Some(b) = to_u32(info.shared_per_sm_bytes) {
        let source = attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR");
        g.set("shared.size_per_sm_bytes", &b, source);
    }
    if let Some(b) = to_u32(info.shared_per_block_bytes) {
        let optin = info
            .shared_per_block_optin_bytes
            .map_or(String::new(), |o| {
                format!(" (opt-in up to {o} is not the default)")
            });
        let source = attr(&format!("MAX_SHARED_MEMORY_PER_BLOCK{optin}"));
        g.set("shared.size_per_block_bytes", &b, source);
    }
    if let Some(b) = to_u32(info.constant_bytes) {
        g.set("constant.size_bytes", &b, attr("TOTAL_CONSTANT_MEMORY"));
    }
    let major = info.compute_capability.split('.').next();
    if let Some(major) = major.and_then(|m| m.trim().parse::<u32>().ok()) {
        let lanes: u32 = if major == 1 { 16 } else { 32 };
        let source = "[derived] compute capability: 16 lanes (half-warps) on 1.x, 32 after";
        g.set("constant.broadcast_lanes", &lanes, source);
    }
    // The size must be a whole number of sets of the (assumed) line size and associativity.
    let set_bytes = u64::from(base.l2.line_bytes) * u64::from(base.l2.associativity);
    match info.l2_bytes.filter(|&b| b >= set_bytes) {
        Some(b) if b % set_bytes == 0 => g.set("l2.size_bytes", &b, attr("L2_CACHE_SIZE")),
        Some(b) => g.set(
            "l2.size_bytes",
            &(b / set_bytes * set_bytes),
            format!(
                "[derived] device attribute L2_CACHE_SIZE = {b} rounded down to whole sets of \
                 line_bytes x associativity = {set_bytes}"
            ),
        ),
        None => {}
    }
    if let (Some(mhz), Some(bits)) = (info.memory_clock_mhz, info.memory_bus_bits) {
        if mhz > 0.0 && bits > 0 {
            g.set(
                "dram.bandwidth_gb_per_s",
                &tenths(dram_peak_gb_per_s(mhz, bits)),
                format!(
                    "[derived] 2 x MEMORY_CLOCK_RATE {mhz} MHz x GLOBAL_MEMORY_BUS_WIDTH {bits} \
                     bit / 8 (DDR pin rate; kernels sustain less: measure a copy)"
                ),
            );
        }
    }
    g
}

/// `key = value` padded to the comment column, then `# comment`.
fn line(out: &mut String, kv: &str, comment: &str) {
    let pad = COMMENT_COLUMN.saturating_sub(kv.len()).max(1);
    let _ = writeln!(out, "{kv}{:pad$}# {comment}", "");
}

/// The skeleton for `info` with the rest from `base` (read from `base_path`).
///
/// The keys and their order are those of `base` serialized, so that every key of the schema is
/// written, including keys added after this function: what the attributes give replaces the
/// base's value, everything else keeps it and is marked assumed.
pub fn skeleton(info: &DeviceInfo, base: &GpuConfig, base_path: &str) -> Skeleton {
    let given = given(info, base);
    let base_text = toml::to_string(base).unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# gpumemsim GPU config skeleton: {} (compute capability {}), written by\n\
         # `validate device --write-config` from the device's attributes (cuDeviceGetAttribute).\n\
         #\n\
         # Read by `sim::config` (unknown keys and out-of-range values are errors). Sizes in bytes,\n\
         # latencies in SM clock cycles, bandwidths as the key says. [measured]: the device's\n\
         # attributes; [derived]: computed from them. Every value marked `assumed: taken from\n\
         # {base_path}` is not given by the attributes and was copied from that config ({},\n\
         # compute capability {}, {} MHz): latencies are its cycles, cache geometries and\n\
         # throughputs its values. Measure them on this GPU (MT4G, microbenchmarks, `validate\n\
         # compare`) and replace the comments with their sources before trusting the predictions.",
        info.name,
        info.compute_capability,
        base.gpu.name,
        base.gpu.compute_capability,
        base.sm.clock_mhz
    );
    let assumed_comment = format!("assumed: taken from {base_path}");
    let mut assumed: Vec<String> = vec![];
    let mut assumed_tables: Vec<String> = vec![];
    let mut table = String::new();
    let (mut keys, mut keys_assumed) = (0, 0);
    let mut array_index: Vec<(String, usize)> = vec![];
    let mut close = |table: &str, keys: usize, keys_assumed: usize| {
        if keys > 0 && keys == keys_assumed {
            assumed_tables.push(table.to_string());
        }
    };
    for raw in base_text.lines() {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with('[') {
            close(&table, keys, keys_assumed);
            (keys, keys_assumed) = (0, 0);
            table = if let Some(name) = l.strip_prefix("[[").and_then(|x| x.strip_suffix("]]")) {
                let i = match array_index.iter_mut().find(|(n, _)| n == name) {
                    Some((_, i)) => {
                        *i += 1;
                        *i
                    }
                    None => {
                        array_index.push((name.to_string(), 0));
                        0
                    }
                };
                format!("{name}[{i}]")
            } else {
                l.trim_matches(|c| c == '[' || c == ']').to_string()
            };
            let _ = write!(out, "\n{l}\n");
            continue;
        }
        let Some((key, value)) = l.split_once(" = ") else {
            out.push_str(raw);
            out.push('\n');
            continue;
        };
        let dotted = format!("{table}.{}", key.trim());
        keys += 1;
        match given.get(&dotted) {
            Some((v, source)) => line(&mut out, &format!("{key} = {v}"), source),
            None => {
                line(&mut out, &format!("{key} = {value}"), &assumed_comment);
                assumed.push(dotted);
                keys_assumed += 1;
            }
        }
    }
    close(&table, keys, keys_assumed);
    Skeleton {
        text: out,
        assumed,
        assumed_tables,
    }
}

/// Index of the config in `configs` (path, config) nearest to compute capability `cc`
/// (`"MAJOR.MINOR"`): of those with the same major, the nearest minor (the higher on a tie);
/// without one, the latest (the highest compute capability). `None` when `configs` is empty.
pub fn nearest<P>(cc: &str, configs: &[(P, GpuConfig)]) -> Option<usize> {
    let want = parse_cc(cc);
    let same_major = configs
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| want.is_some_and(|(major, _)| c.compute_capability().0 == major))
        .min_by_key(|(_, (_, c))| {
            let (_, minor) = c.compute_capability();
            let want_minor = want.map_or(0, |w| w.1);
            (minor.abs_diff(want_minor), std::cmp::Reverse(minor))
        })
        .map(|(i, _)| i);
    same_major.or_else(|| {
        configs
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|(_, (_, c))| c.compute_capability())
            .map(|(i, _)| i)
    })
}

fn parse_cc(cc: &str) -> Option<(u32, u32)> {
    let (major, minor) = cc.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn shipped(name: &str) -> GpuConfig {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../configs")
            .join(name);
        GpuConfig::load(&p).unwrap()
    }

    /// A GPU that no shipped config describes, with every attribute the driver reports.
    pub(crate) fn b200() -> DeviceInfo {
        DeviceInfo {
            name: "NVIDIA B200".into(),
            compute_capability: "10.0".into(),
            sm_count: 148,
            sm_clock_mhz: Some(1965.0),
            memory_clock_mhz: Some(3996.0),
            memory_bus_bits: Some(8192),
            memory_bytes: 191_000_000_000,
            l2_bytes: Some(132_120_576),
            shared_per_sm_bytes: Some(233_472),
            shared_per_block_bytes: Some(49_152),
            shared_per_block_optin_bytes: Some(232_448),
            constant_bytes: Some(65_536),
            max_threads_per_sm: Some(2048),
            max_blocks_per_sm: Some(32),
            max_threads_per_block: Some(1024),
            registers_per_sm: Some(65_536),
            warp_size: Some(32),
        }
    }

    #[test]
    fn a_skeleton_loads_and_takes_every_attribute() {
        let base = shipped("h200.toml");
        let s = skeleton(&b200(), &base, "configs/h200.toml");
        let cfg = GpuConfig::from_toml_str(&s.text, "generated").unwrap_or_else(|e| {
            panic!("{e}\n{}", s.text);
        });
        assert_eq!(cfg.gpu.name, "NVIDIA B200");
        assert_eq!(cfg.gpu.compute_capability, "10.0");
        assert_eq!((cfg.sm.count, cfg.sm.clock_mhz), (148, 1965.0));
        assert_eq!(
            (cfg.sm.max_threads, cfg.sm.max_warps, cfg.sm.max_blocks),
            (2048, 64, 32)
        );
        assert_eq!(cfg.sm.max_threads_per_block, 1024);
        assert_eq!(cfg.shared.size_per_block_bytes, 49_152);
        assert_eq!(cfg.l2.size_bytes, 132_120_576);
        // 2 x 3996 MHz x 8192 bit / 8 = 8183.8 GB/s.
        assert_eq!(cfg.dram.bandwidth_gb_per_s, 8183.8);
        assert!(
            s.text.contains("[derived] 2 x MEMORY_CLOCK_RATE 3996 MHz"),
            "{}",
            s.text
        );
        // What the attributes do not give is the base's, and marked.
        assert_eq!(cfg.l1.size_bytes, base.l1.size_bytes);
        assert_eq!(cfg.constant.cache.len(), base.constant.cache.len());
        assert_eq!(cfg.dram.latency_cycles, base.dram.latency_cycles);
        let marked = s
            .text
            .lines()
            .filter(|l| l.ends_with("# assumed: taken from configs/h200.toml"))
            .count();
        assert_eq!(marked, s.assumed.len());
        for key in [
            "gpu.launch_overhead_ns",
            "sm.schedulers",
            "shared.bank_width_bytes",
            "constant.cache[1].associativity",
            "l1.size_bytes",
            "l2.latency_cycles",
            "dram.latency_cycles",
        ] {
            assert!(s.assumed.iter().any(|k| k == key), "{key}: {:?}", s.assumed);
        }
        for key in [
            "sm.count",
            "l2.size_bytes",
            "dram.bandwidth_gb_per_s",
            "gpu.name",
        ] {
            assert!(!s.assumed.iter().any(|k| k == key), "{key}");
        }
        // The tensor pipe's forms come whole from the base config too.
        let mut tables = vec![
            "constant.cache[0]".to_string(),
            "constant.cache[1]".into(),
            "l1".into(),
        ];
        tables.extend((0..9).map(|i| format!("tensor.form[{i}]")));
        assert_eq!(s.assumed_tables, tables);
        let summary = s.assumed_summary();
        assert!(
            summary.starts_with("gpu.launch_overhead_ns, gpu.host_launch_interval_ns, sm.gpcs,"),
            "{summary}"
        );
        assert!(summary.contains("constant.cache[0].*, constant.cache[1].*, l1.*, l2.line_bytes"));
        assert_eq!(config_skeleton(&b200(), &base, "configs/h200.toml"), s.text);
    }

    #[test]
    fn missing_attributes_are_assumed_too() {
        let base = shipped("a100.toml");
        let info = DeviceInfo {
            name: "Some \"GPU\"".into(),
            compute_capability: "8.9".into(),
            sm_count: 128,
            // An L2 that is not a whole number of 128 B x 16-way sets.
            l2_bytes: Some(1_000_000),
            ..DeviceInfo::default()
        };
        let s = skeleton(&info, &base, "configs/a100.toml");
        let cfg = GpuConfig::from_toml_str(&s.text, "generated").unwrap_or_else(|e| {
            panic!("{e}\n{}", s.text);
        });
        assert_eq!(cfg.gpu.name, "Some \"GPU\"");
        assert_eq!(cfg.sm.clock_mhz, base.sm.clock_mhz);
        assert_eq!(cfg.dram.bandwidth_gb_per_s, base.dram.bandwidth_gb_per_s);
        assert_eq!(cfg.l2.size_bytes, 1_000_000 / 2048 * 2048);
        assert!(s.text.contains("rounded down to whole sets"));
        for key in [
            "sm.clock_mhz",
            "sm.max_warps",
            "shared.size_per_sm_bytes",
            "dram.bandwidth_gb_per_s",
        ] {
            assert!(s.assumed.iter().any(|k| k == key), "{key}: {:?}", s.assumed);
        }
    }

    #[test]
    fn the_h200_attributes_rebuild_its_config() {
        // The device block of the committed H200 report (without the attributes added later).
        let text = include_str!("../measurements/h200/report.json");
        let r: crate::report::Report = serde_json::from_str(text).unwrap();
        let base = shipped("h200.toml");
        let s = skeleton(&r.device, &base, "configs/h200.toml");
        let cfg = GpuConfig::from_toml_str(&s.text, "generated").unwrap();
        assert_eq!(cfg.gpu.name, base.gpu.name);
        assert_eq!(cfg.sm.count, base.sm.count);
        // The device's maximum clock; the shipped config has the clock `validate calibrate`
        // measured under load, within 0.5% of it.
        assert_eq!(cfg.sm.clock_mhz, 1980.0);
        assert!((cfg.sm.clock_mhz - base.sm.clock_mhz).abs() / cfg.sm.clock_mhz < 0.005);
        assert_eq!(cfg.sm.max_warps, base.sm.max_warps);
        assert_eq!(cfg.shared.size_per_sm_bytes, base.shared.size_per_sm_bytes);
        assert_eq!(cfg.l2.size_bytes, base.l2.size_bytes);
        // 2 x 3201 MHz x 6016 bit / 8: the pin rate, 4.8 TB/s, above the 4.3 TB/s measured in
        // configs/h200.toml.
        assert_eq!(cfg.dram.bandwidth_gb_per_s, 4814.3);
    }

    #[test]
    fn a_skeleton_on_every_shipped_config_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut n = 0;
        for (path, base) in crate::configs::load_all(&[dir]) {
            let info = DeviceInfo {
                compute_capability: base.gpu.compute_capability.clone(),
                ..b200()
            };
            let s = skeleton(&info, &base, "base.toml");
            let what = path.display();
            GpuConfig::from_toml_str(&s.text, "generated")
                .unwrap_or_else(|e| panic!("{what}: {e}\n{}", s.text));
            // Every key of the base is written once, given or assumed.
            let keys = toml::to_string(&base)
                .unwrap()
                .lines()
                .filter(|l| l.contains(" = "))
                .count();
            let written = s.text.lines().filter(|l| l.contains(" = ")).count();
            assert_eq!(written, keys, "{what}");
            assert!(!s.assumed.is_empty() && s.assumed.len() < keys, "{what}");
            n += 1;
        }
        assert!(n >= 8, "{n} configs");
    }

    #[test]
    fn the_nearest_config_has_the_same_major_else_is_the_latest() {
        let configs: Vec<(PathBuf, GpuConfig)> = [
            "a100.toml",
            "c2050.toml",
            "h200.toml",
            "rtx3090.toml",
            "v100.toml",
        ]
        .iter()
        .map(|n| (PathBuf::from(n), shipped(n)))
        .collect();
        let pick = |cc: &str| nearest(cc, &configs).map(|i| configs[i].0.display().to_string());
        assert_eq!(pick("9.0").unwrap(), "h200.toml");
        assert_eq!(pick("8.0").unwrap(), "a100.toml");
        assert_eq!(pick("8.9").unwrap(), "rtx3090.toml");
        assert_eq!(pick("8.3").unwrap(), "rtx3090.toml"); // a tie: the higher minor
        assert_eq!(pick("7.5").unwrap(), "v100.toml");
        assert_eq!(pick("2.1").unwrap(), "c2050.toml");
        assert_eq!(pick("10.0").unwrap(), "h200.toml");
        assert_eq!(pick("6.1").unwrap(), "h200.toml");
        assert_eq!(pick("garbage").unwrap(), "h200.toml");
        assert_eq!(nearest::<PathBuf>("9.0", &[]), None);
    }
}
