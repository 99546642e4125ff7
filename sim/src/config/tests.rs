//! Tests of `sim::config`: the shipped configs load, and every kind of bad input is an
//! `Error::Config` naming the file, the exact dotted key and what is allowed. Variants are built by
//! replacing lines of the shipped RTX 3090 config.

use std::path::{Path, PathBuf};

use super::GpuConfig;
use crate::error::Error;

const PATH: &str = "variant.toml";

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("configs")
        .join(name)
}

fn rtx3090_text() -> String {
    std::fs::read_to_string(shipped("rtx3090.toml")).expect("configs/rtx3090.toml is readable")
}

/// The RTX 3090 config with the one line that starts with `line` (after indentation) replaced by
/// `by` (which may be empty or several lines).
fn variant(line: &str, by: &str) -> String {
    let text = rtx3090_text();
    let hits = text
        .lines()
        .filter(|l| l.trim_start().starts_with(line))
        .count();
    assert_eq!(
        hits, 1,
        "`{line}` must match exactly one line of rtx3090.toml"
    );
    replace_line(&text, 0, line, by)
}

/// Like [`variant`], for the first line starting with `line` below the header `[section]`.
fn variant_in(section: &str, line: &str, by: &str) -> String {
    let text = rtx3090_text();
    let header = format!("[{section}]");
    let start = text.lines().position(|l| l.trim() == header);
    replace_line(&text, start.expect("section exists"), line, by)
}

fn replace_line(text: &str, from: usize, line: &str, by: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let offset = lines[from..]
        .iter()
        .position(|l| l.trim_start().starts_with(line));
    lines[from + offset.expect("line exists")] = by;
    lines.join("\n") + "\n"
}

/// The `(path, key, message)` of the config error that `text` must produce.
fn config_error(text: &str) -> (String, String, String) {
    match GpuConfig::from_toml_str(text, PATH) {
        Err(Error::Config { path, key, message }) => (path, key, message),
        Err(other) => panic!("expected Error::Config, got {other:?}"),
        Ok(_) => panic!("expected an error, the config loaded"),
    }
}

/// Asserts that `text` fails on `key` with a message containing every one of `parts`.
fn assert_rejects(text: &str, key: &str, parts: &[&str]) {
    let (path, got_key, message) = config_error(text);
    assert_eq!(path, PATH);
    assert_eq!(got_key, key, "message: {message}");
    for part in parts {
        assert!(message.contains(part), "`{message}` lacks `{part}`");
    }
}

#[test]
fn shipped_configs_load() {
    let rtx = GpuConfig::load(&shipped("rtx3090.toml")).expect("rtx3090.toml is valid");
    assert_eq!(rtx.compute_capability(), (8, 6));
    assert_eq!(rtx.sm.count, 82);
    assert!((rtx.clock_hz() - 1.695e9).abs() < 1.0);
    assert_eq!(rtx.constant.cache.len(), 2);
    assert_eq!(rtx.l1.geometry().sets(), 4);
    assert_eq!(rtx.l1.geometry().sectors_per_line(), 4);
    assert!(rtx.path.ends_with("rtx3090.toml"));

    let h200 = GpuConfig::load(&shipped("h200.toml")).expect("h200.toml is valid");
    assert_eq!(h200.compute_capability(), (9, 0));
    assert_eq!(h200.sm.count, 132);
    assert_eq!(h200.l2.size_bytes, 62_914_560);
    assert_eq!(h200.l2.geometry().sets(), 30_720);
    assert_eq!(h200.constant.cache[0].geometry().sets(), 8);
    // validate calibrate on an H200: 4242 GB/s copy bandwidth at 1974.1 MHz.
    assert!((h200.dram_bytes_per_cycle() - 4242e9 / 1.9741e9).abs() < 1e-9);
}

#[test]
fn serializes_and_round_trips() {
    let cfg = GpuConfig::load(&shipped("h200.toml")).unwrap();
    let json = serde_json::to_string(&cfg).unwrap();
    assert!(json.contains("\"sector_bytes\":32"));
    let text = toml::to_string(&cfg).unwrap();
    let back = GpuConfig::from_toml_str(&text, "again.toml").unwrap();
    assert_eq!(back.l1.size_bytes, cfg.l1.size_bytes);
    assert_eq!(back.constant.cache.len(), cfg.constant.cache.len());
}

#[test]
fn unknown_keys_are_named() {
    let text = variant(
        "tag_lookups_per_cycle",
        "tag_lookups_per_cycle = 4.0\nflavor = 1",
    );
    assert_rejects(&text, "l1.flavor", &["unknown field `flavor`", "line "]);
    let text = variant("name = \"L1.5\"", "name = \"L1.5\"\nways = 4");
    assert_rejects(&text, "constant.cache[1].ways", &["unknown field `ways`"]);
    let text = variant("[dram]", "[bogus]\nx = 1\n\n[dram]");
    assert_rejects(&text, "bogus", &["unknown field `bogus`"]);
    let text = variant("[gpu]", "path = \"x\"\n[gpu]");
    assert_rejects(&text, "path", &["unknown field `path`"]);
}

#[test]
fn missing_keys_are_named() {
    let text = variant("latency_cycles = 32", "");
    assert_rejects(
        &text,
        "l1.latency_cycles",
        &["missing required key `latency_cycles` in [l1]"],
    );
    let text = variant("name = \"L1\"", "");
    assert_rejects(
        &text,
        "constant.cache[0].name",
        &["missing required key `name`"],
    );
    let dram_gone: String = rtx3090_text()
        .split("\n[dram]\n")
        .next()
        .unwrap()
        .to_string();
    assert_rejects(
        &dram_gone,
        "dram",
        &["missing required table or key `dram`"],
    );
    let no_levels = rtx3090_text().replace("[[constant.cache]]", "[[constant.other]]");
    assert_rejects(&no_levels, "constant.other", &["unknown field `other`"]);
}

#[test]
fn register_keys_are_required_and_range_checked() {
    for key in ["max_registers_per_thread", "register_allocation_unit"] {
        assert_rejects(
            &variant(key, ""),
            &format!("sm.{key}"),
            &[&format!("missing required key `{key}` in [sm]")],
        );
    }
    let cases: &[(&str, &str, &str)] = &[
        (
            "max_registers_per_thread = 0",
            "max_registers_per_thread",
            "allowed: 1 to 255",
        ),
        (
            "max_registers_per_thread = 256",
            "max_registers_per_thread",
            "allowed: 1 to 255",
        ),
        (
            "register_allocation_unit = 0",
            "register_allocation_unit",
            "allowed: 1 to 4096",
        ),
        (
            "register_allocation_unit = 8192",
            "register_allocation_unit",
            "allowed: 1 to 4096",
        ),
    ];
    for (by, key, allowed) in cases {
        let text = variant(key, by);
        let value = by.rsplit(' ').next().unwrap();
        let said = format!("{key} = {value} is out of range; {allowed}");
        assert_rejects(&text, &format!("sm.{key}"), &[&said]);
        let shown = GpuConfig::from_toml_str(&text, PATH)
            .unwrap_err()
            .to_string();
        assert!(
            shown.starts_with(&format!("variant.toml: sm.{key}: ")),
            "{shown}"
        );
    }
}

#[test]
fn every_shipped_config_has_register_limits_per_its_compute_capability() {
    // (config, max registers per thread, allocation unit): 255 and 256 per warp from compute
    // 3.5 on, 63 and 64 per warp on 2.x, 124 and 512 per block on 1.3.
    for (name, max, unit) in [
        ("h200.toml", 255, 256),
        ("a100.toml", 255, 256),
        ("rtx3090.toml", 255, 256),
        ("v100.toml", 255, 256),
        ("t4.toml", 255, 256),
        ("k40.toml", 255, 256),
        ("c2050.toml", 63, 64),
        ("c1060.toml", 124, 512),
    ] {
        let cfg = GpuConfig::load(&shipped(name)).unwrap();
        let got = (
            cfg.sm.max_registers_per_thread,
            cfg.sm.register_allocation_unit,
        );
        assert_eq!(got, (max, unit), "{name}");
    }
}

#[test]
fn wrong_types_are_named_with_their_line() {
    let text = variant("count = 82", "count = \"82\"");
    let line = text
        .lines()
        .position(|l| l.starts_with("count = "))
        .unwrap()
        + 1;
    assert_rejects(
        &text,
        "sm.count",
        &[&format!("line {line}:9"), "invalid type: string"],
    );
    assert_rejects(
        &variant("count = 82", "count = -1"),
        "sm.count",
        &["expected u32"],
    );
    let text = variant("cache_global_loads", "cache_global_loads = 1");
    assert_rejects(&text, "l1.cache_global_loads", &["expected a boolean"]);
}

#[test]
fn malformed_toml_names_file_and_line() {
    let text = variant("count = 82", "count = 82 83");
    let line = text
        .lines()
        .position(|l| l.starts_with("count = "))
        .unwrap()
        + 1;
    let (path, key, message) = config_error(&text);
    assert_eq!((path.as_str(), key.as_str()), (PATH, "-"));
    assert!(
        message.starts_with(&format!("line {line}:12: ")),
        "{message}"
    );
    let shown = GpuConfig::from_toml_str(&text, PATH)
        .unwrap_err()
        .to_string();
    assert!(shown.starts_with("variant.toml: -: line "), "{shown}");
    let text = variant("count = 82", "count = 82\ncount = 84");
    assert_rejects(&text, "sm.count", &["duplicate key `count`"]);
}

#[test]
fn out_of_range_values_name_key_and_allowed_range() {
    let cases: &[(&str, &str, &str, &str, &[&str])] = &[
        ("l1", "sector_bytes = 32", "sector_bytes = 48", "l1.sector_bytes",
         &["sector_bytes = 48 does not divide line_bytes = 128; allowed: a power of two from 4 to line_bytes"]),
        ("sm", "count = 82", "count = 0", "sm.count", &["count = 0 is out of range; allowed: 1 to 1024"]),
        ("constant", "broadcast_lanes = 32", "broadcast_lanes = 16", "constant.broadcast_lanes",
         &["broadcast_lanes = 16 does not match compute capability 8.x", "allowed: 16 for compute capability 1.x"]),
        ("constant", "broadcast_lanes = 32", "broadcast_lanes = 24", "constant.broadcast_lanes", &["allowed: 16 or 32"]),
        ("sm", "warp_size = 32", "warp_size = 64", "sm.warp_size", &["allowed: 32"]),
        ("sm", "clock_mhz = 1695.0", "clock_mhz = nan", "sm.clock_mhz", &["not a finite number", "at most 10000"]),
        ("sm", "clock_mhz = 1695.0", "clock_mhz = 0.0", "sm.clock_mhz", &["allowed: greater than 0 and at most 10000"]),
        ("gpu", "compute_capability", "compute_capability = \"13.0\"", "gpu.compute_capability", &["major 1 to 12"]),
        ("gpu", "name = \"NVIDIA", "name = \" \"", "gpu.name", &["is empty"]),
        ("gpu", "launch_overhead_ns", "launch_overhead_ns = -1.0", "gpu.launch_overhead_ns", &["allowed: 0 to"]),
        ("sm", "max_threads_per_block", "max_threads_per_block = 2048", "sm.max_threads_per_block",
         &["exceeds sm.max_threads = 1536"]),
        ("shared", "size_per_block_bytes", "size_per_block_bytes = 200000", "shared.size_per_block_bytes",
         &["exceeds shared.size_per_sm_bytes = 102400"]),
        ("shared", "bank_width_bytes", "bank_width_bytes = 2", "shared.bank_width_bytes", &["allowed: 4 or 8"]),
        ("l1", "transaction_bytes", "transaction_bytes = 64", "l1.transaction_bytes",
         &["neither sector_bytes = 32 nor line_bytes = 128"]),
        ("l1", "size_bytes = 131072", "size_bytes = 131000", "l1.size_bytes",
         &["not a positive multiple of line_bytes * associativity = 32768"]),
        ("constant", "size_bytes = 2048", "size_bytes = 3072", "constant.cache[0].size_bytes",
         &["gives 12 sets", "allowed: a power-of-two number of sets"]),
        ("constant", "line_bytes = 256", "line_bytes = 2048", "constant.cache[1].line_bytes",
         &["allowed: a power of two from 4 to 1024"]),
        ("l2", "size_bytes = 6291456", "size_bytes = 0", "l2.size_bytes", &["not a positive multiple"]),
        ("l2", "bandwidth_bytes_per_cycle", "bandwidth_bytes_per_cycle = 0", "l2.bandwidth_bytes_per_cycle",
         &["greater than 0"]),
        ("dram", "latency_cycles = 480", "latency_cycles = 100", "dram.latency_cycles",
         &["below l2.latency_cycles = 220"]),
        ("l1", "texture_latency_cycles", "texture_latency_cycles = 20", "l1.texture_latency_cycles",
         &["allowed: 32 to 4000"]),
    ];
    for (section, line, by, key, parts) in cases {
        assert_rejects(&variant_in(section, line, by), key, parts);
    }
}

#[test]
fn constant_cache_level_count_is_checked() {
    let text = rtx3090_text();
    let level = text.split("[[constant.cache]]").nth(1).unwrap();
    let extra = format!("\n[[constant.cache]]{level}[[constant.cache]]{level}[l1]\n");
    let four = text.replacen("\n[l1]\n", &extra, 1);
    assert_rejects(
        &four,
        "constant.cache",
        &["cache has 4 levels; allowed: 1 to 3"],
    );
}

#[test]
fn unreadable_file_is_io_error() {
    let err = GpuConfig::load(Path::new("/nonexistent/gpu.toml")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
}

/// Never panics: every truncation and many single-line mutations of a valid file.
#[test]
fn arbitrary_edits_never_panic() {
    let text = rtx3090_text();
    for cut in (0..text.len())
        .filter(|&i| text.is_char_boundary(i))
        .step_by(7)
    {
        let _ = GpuConfig::from_toml_str(&text[..cut], PATH);
    }
    let values = [
        "0",
        "-1",
        "1e309",
        "-inf",
        "nan",
        "\"\"",
        "[]",
        "{}",
        "4294967296",
        "true",
    ];
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some((key, _)) = line.split_once(" = ") else {
            continue;
        };
        for value in values {
            let mut edited = lines.clone();
            let new = format!("{key} = {value}");
            edited[i] = &new;
            let _ = GpuConfig::from_toml_str(&edited.join("\n"), PATH);
        }
        let mut dropped = lines.clone();
        dropped.remove(i);
        let _ = GpuConfig::from_toml_str(&dropped.join("\n"), PATH);
    }
}

#[test]
fn kepler_k40_config_loads() {
    let k40 = GpuConfig::load(&shipped("k40.toml")).expect("k40.toml is valid");
    assert_eq!(k40.compute_capability(), (3, 5));
    assert_eq!(k40.sm.count, 15);
    assert!((k40.clock_hz() - 745e6).abs() < 1.0);
    assert_eq!(k40.shared.banks, 32);
    assert_eq!(
        k40.shared.bank_width_bytes, 4,
        "the default 4-byte bank mode"
    );
    assert_eq!(
        k40.shared.size_per_sm_bytes + k40.l1.size_bytes as u32,
        65536
    );
    assert!(
        !k40.l1.cache_global_loads,
        "3.5 caches global loads in L2 only"
    );
    assert_eq!(k40.l1.transaction_bytes, k40.l1.line_bytes);
    assert_eq!(k40.l1.geometry().sets(), 32);
    assert_eq!(k40.l2.size_bytes, 1_572_864);
    assert_eq!(k40.constant.broadcast_lanes, 32);
    assert_eq!(k40.constant.cache.len(), 2);
    assert_eq!(k40.constant.cache[0].geometry().sets(), 8);
    assert!((k40.dram_bytes_per_cycle() - 288e9 / 745e6).abs() < 1e-9);
}

#[test]
fn fermi_c2050_config_loads() {
    let c2050 = GpuConfig::load(&shipped("c2050.toml")).expect("c2050.toml is valid");
    assert_eq!(c2050.compute_capability(), (2, 0));
    assert_eq!(c2050.sm.count, 14);
    assert_eq!(
        (
            c2050.sm.max_threads,
            c2050.sm.max_warps,
            c2050.sm.max_blocks
        ),
        (1536, 48, 8)
    );
    assert_eq!(c2050.shared.bank_width_bytes, 4);
    assert!(
        c2050.l1.cache_global_loads,
        "2.x caches global loads in L1 by default"
    );
    assert_eq!(c2050.l1.transaction_bytes, 128);
    assert_eq!(c2050.l1.transaction_bytes, c2050.l1.line_bytes);
    assert_eq!(c2050.l1.size_bytes, 16384);
    assert_eq!(c2050.l2.size_bytes, 786_432);
    assert_eq!(c2050.l2.geometry().sets(), 768);
    assert_eq!(c2050.constant.cache.len(), 1);
    assert_eq!(c2050.constant.cache[0].size_bytes, 8192);
    assert!(c2050.dram.latency_cycles >= c2050.l2.latency_cycles);
}

/// The Kepler and Fermi configs survive a serialize/parse round trip like the others.
#[test]
fn kepler_and_fermi_configs_round_trip() {
    for name in ["k40.toml", "c2050.toml"] {
        let cfg = GpuConfig::load(&shipped(name)).unwrap();
        let text = toml::to_string(&cfg).unwrap();
        let back = GpuConfig::from_toml_str(&text, name).unwrap();
        assert_eq!(back.gpu.compute_capability, cfg.gpu.compute_capability);
        assert_eq!(back.l1.transaction_bytes, cfg.l1.transaction_bytes);
        assert_eq!(back.constant.cache.len(), cfg.constant.cache.len());
    }
}

#[test]
fn volta_v100_config_loads() {
    let v100 = GpuConfig::load(&shipped("v100.toml")).expect("v100.toml is valid");
    assert_eq!(v100.compute_capability(), (7, 0));
    assert_eq!(v100.sm.count, 80);
    assert!(
        (v100.clock_hz() - 1.53e9).abs() < 1.0,
        "the SXM2 boost clock"
    );
    assert_eq!(v100.l2.size_bytes, 6_291_456);
    assert_eq!(v100.l2.associativity, 16);
    assert_eq!(v100.l1.geometry().sets(), 4, "Jia18: 4 L1 sets");
    assert_eq!(v100.shared.latency_cycles, 19);
    assert_eq!(v100.constant.cache.len(), 2);
    assert_eq!(v100.constant.cache[0].geometry().sets(), 8);
    assert!((v100.dram_bytes_per_cycle() - 900e9 / 1.53e9).abs() < 1e-9);
}

#[test]
fn ampere_a100_config_loads() {
    let a100 = GpuConfig::load(&shipped("a100.toml")).expect("a100.toml is valid");
    assert_eq!(a100.compute_capability(), (8, 0));
    assert_eq!(a100.sm.count, 108);
    assert!((a100.clock_hz() - 1.41e9).abs() < 1.0);
    assert_eq!(a100.l2.size_bytes, 40 * 1024 * 1024, "40 MB L2");
    assert_eq!(a100.shared.size_per_sm_bytes, 164 * 1024);
    assert_eq!(a100.l1.size_bytes, 192 * 1024, "the smallest carve-out");
    assert_eq!(a100.l1.geometry().sets(), 4);
    assert!(a100.dram.latency_cycles >= a100.l2.latency_cycles);
    assert!((a100.dram.bandwidth_gb_per_s - 1555.0).abs() < 1e-9);
}

#[test]
fn turing_t4_config_loads() {
    let t4 = GpuConfig::load(&shipped("t4.toml")).expect("t4.toml is valid");
    assert_eq!(t4.compute_capability(), (7, 5));
    assert_eq!(t4.sm.count, 40);
    assert_eq!(
        (t4.sm.max_threads, t4.sm.max_warps, t4.sm.max_blocks),
        (1024, 32, 16)
    );
    assert_eq!(
        t4.shared.size_per_sm_bytes,
        64 * 1024,
        "the largest carve-out"
    );
    assert_eq!(
        t4.l1.size_bytes,
        (96 - 32) * 1024,
        "96 KB unified L1/shared less the smallest carve-out"
    );
    assert!(
        (t4.shared.wavefronts_per_cycle - 0.5).abs() < 1e-12,
        "64 B/clk/SM"
    );
    assert_eq!(t4.l2.size_bytes, 4 * 1024 * 1024);
    assert_eq!(
        t4.constant.cache[1].size_bytes,
        46 * 1024,
        "Jia19: ~46 KiB L1.5"
    );
    assert_eq!(t4.constant.cache[1].geometry().sets(), 8);
    assert!((t4.dram_bytes_per_cycle() - 320e9 / 1.59e9).abs() < 1e-9);
}

#[test]
fn compute_1x_c1060_config_loads() {
    let c1060 = GpuConfig::load(&shipped("c1060.toml")).expect("c1060.toml is valid");
    assert_eq!(c1060.compute_capability(), (1, 3));
    assert_eq!(c1060.sm.count, 30);
    assert_eq!(c1060.constant.broadcast_lanes, 16, "half-warp broadcasts");
    assert_eq!(c1060.shared.banks, 16);
    assert_eq!(c1060.shared.size_per_sm_bytes, 16384);
    assert_eq!(
        (
            c1060.sm.max_threads,
            c1060.sm.max_warps,
            c1060.sm.max_blocks,
            c1060.sm.max_threads_per_block
        ),
        (1024, 32, 8, 512)
    );
    assert_eq!(c1060.sm.registers, 16384);
    assert!(
        !c1060.l1.cache_global_loads,
        "global memory is uncached on 1.x"
    );
    assert_eq!(c1060.l1.geometry().sets(), 1, "L1 placeholder: one line");
    assert_eq!(c1060.l2.size_bytes, 32, "L2 placeholder: one line");
    assert_eq!(c1060.l2.latency_cycles, c1060.dram.latency_cycles);
    assert_eq!(c1060.constant.cache.len(), 1);
    assert_eq!(c1060.constant.cache[0].size_bytes, 8192);
    assert!((c1060.dram_bytes_per_cycle() - 102.4e9 / 1.296e9).abs() < 1e-9);
}

/// The Volta, Ampere, Turing and compute-1.x configs survive a serialize/parse round trip.
#[test]
fn v100_a100_t4_c1060_configs_round_trip() {
    for name in ["v100.toml", "a100.toml", "t4.toml", "c1060.toml"] {
        let cfg = GpuConfig::load(&shipped(name)).unwrap();
        let text = toml::to_string(&cfg).unwrap();
        let back = GpuConfig::from_toml_str(&text, name).unwrap();
        assert_eq!(back.gpu.compute_capability, cfg.gpu.compute_capability);
        assert_eq!(back.constant.broadcast_lanes, cfg.constant.broadcast_lanes);
        assert_eq!(back.l2.size_bytes, cfg.l2.size_bytes);
    }
}

/// The RTX 3090 config with one more `[[tensor.form]]` (its 10th, `tensor.form[9]`) of `body`.
fn with_form(body: &str) -> String {
    format!("{}\n[[tensor.form]]\n{body}\n", rtx3090_text())
}

#[test]
fn tensor_forms_are_checked_by_key() {
    let ok = "shape = \"m16n16k16\"\nab_type = \"f16\"\ncd_type = \"f32\"\nlatency_cycles = 40\nissue_cycles = 64";
    let cfg = GpuConfig::from_toml_str(&with_form(ok), PATH).unwrap();
    assert_eq!(cfg.tensor.form.len(), 10);
    let bad = |from: &str, to: &str| with_form(&ok.replace(from, to));
    assert_rejects(
        &bad("m16n16k16", "m8n8k4"),
        "tensor.form[9].shape",
        &["\"m8n8k4\"", "m16n8k8, m16n8k16, m16n8k32, m16n16k16"],
    );
    assert_rejects(
        &bad("ab_type = \"f16\"", "ab_type = \"tf32\""),
        "tensor.form[9].ab_type",
        &["not a form of shape m16n16k16", "f16/f32, f16/f16"],
    );
    assert_rejects(
        &bad("latency_cycles = 40", "latency_cycles = 0"),
        "tensor.form[9].latency_cycles",
        &["latency_cycles = 0 is out of range; allowed: 1 to 1000"],
    );
    assert_rejects(
        &bad("issue_cycles = 64", "issue_cycles = 1001"),
        "tensor.form[9].issue_cycles",
        &["allowed: 1 to 1000"],
    );
    // rtx3090.toml lists m16n8k16 f16 -> f32 first.
    let twice = "shape = \"m16n8k16\"\nab_type = \"f16\"\ncd_type = \"f32\"\nlatency_cycles = 40\nissue_cycles = 64";
    assert_rejects(
        &with_form(twice),
        "tensor.form[9].shape",
        &["listed twice, also as tensor.form[0]"],
    );
    assert_rejects(
        &with_form(&format!("{ok}\nrate = 2")),
        "tensor.form[9].rate",
        &["unknown field `rate`"],
    );
}

#[test]
fn tensor_table_is_optional_and_shipped_configs_list_their_gpus_forms() {
    let text = rtx3090_text();
    let cut = text.find("\n[tensor]").expect("rtx3090.toml has [tensor]");
    let cfg = GpuConfig::from_toml_str(&text[..cut], PATH).unwrap();
    assert!(cfg.tensor.form.is_empty());
    let forms = |name: &str| {
        let cfg = GpuConfig::load(&shipped(name)).unwrap();
        let mut v: Vec<String> = (cfg.tensor.form.iter())
            .map(|f| format!("{}.{}.{}", f.shape, f.ab_type, f.cd_type))
            .collect();
        v.sort();
        v
    };
    for old in ["c1060.toml", "c2050.toml", "k40.toml"] {
        assert!(forms(old).is_empty(), "{old}");
    }
    assert_eq!(
        forms("v100.toml"),
        ["m16n16k16.f16.f16", "m16n16k16.f16.f32"]
    );
    assert_eq!(forms("t4.toml").len(), 4);
    for sm80 in ["a100.toml", "rtx3090.toml", "h200.toml"] {
        assert_eq!(forms(sm80).len(), 9, "{sm80}");
    }
}

/// The line (1-based) of the first line of `text` that starts with `start` below `[section]`.
fn line_of(text: &str, section: &str, start: &str) -> usize {
    let header = format!("[{section}]");
    let from = text.lines().position(|l| l.trim() == header).unwrap();
    let offset = text.lines().skip(from).position(|l| l.starts_with(start));
    from + offset.unwrap() + 1
}

#[test]
fn each_kind_of_error_names_the_file_the_key_path_and_the_line() {
    // (text, key path, the line the message names, part of the message)
    let unknown = variant_in("l1", "associativity", "associativity = 256\nflavor = 1");
    let mistyped = variant_in("l1", "associativity", "associativity = \"256\"");
    let out_of_range = variant_in("l1", "associativity", "associativity = 0");
    let missing = variant_in("l1", "associativity", "");
    let cases = [
        (
            &unknown,
            "l1.flavor",
            line_of(&unknown, "l1", "flavor"),
            "unknown field `flavor`",
        ),
        (
            &mistyped,
            "l1.associativity",
            line_of(&mistyped, "l1", "associativity"),
            "invalid type",
        ),
        (
            &out_of_range,
            "l1.associativity",
            line_of(&out_of_range, "l1", "associativity"),
            "0",
        ),
        // a missing key has no line of its own: the message names its table's header
        (
            &missing,
            "l1.associativity",
            line_of(&missing, "l1", "[l1]"),
            "missing",
        ),
    ];
    for (text, key, line, part) in cases {
        let shown = GpuConfig::from_toml_str(text, PATH)
            .unwrap_err()
            .to_string();
        assert!(shown.starts_with(&format!("{PATH}: {key}: ")), "{shown}");
        assert!(
            shown.contains(&format!("line {line}")),
            "line {line}: {shown}"
        );
        assert!(shown.contains(part), "{part}: {shown}");
        assert!(!shown.contains('\n'), "{shown}");
    }
}
