//! The analysis of made-up measurements against the shipped H200 config: which keys are set to
//! what, and that the edited config loads with those values and keeps every other line.

use super::*;

/// configs/h200.toml as it was before it was calibrated (a frozen input: the tests check what
/// calibration makes of it, whatever the live config says now).
const H200: &str = include_str!("h200_before.toml");

fn base() -> GpuConfig {
    GpuConfig::from_toml_str(H200, "configs/h200.toml").unwrap()
}

/// Measurements shaped like an H200's.
fn raw() -> Raw {
    let chase = |cycles, loads, bytes, runs| {
        Some(Chase {
            cycles_per_load: cycles,
            loads,
            bytes,
            runs,
        })
    };
    Raw {
        device: "NVIDIA H200".into(),
        clock_start_mhz: Some(1980.2),
        clock_end_mhz: Some(1979.8),
        attribute_clock_mhz: Some(1980.0),
        l1: chase(33.4, 8192, 8192, 1),
        l2: chase(261.7, 8192, 1 << 20, 1),
        dram: chase(818.3, 16384, 16 << 20, 3),
        shared: chase(29.0, 8192, 4096, 1),
        // 23 cycles up to 2 KiB, one transition point, 110 beyond, no second step.
        constant_sweep: bench::CONSTANT_SWEEP
            .iter()
            .map(|&b| {
                let y = match b {
                    0..=2048 => 23.0,
                    2304 => 60.0,
                    _ => 110.0,
                };
                (f64::from(b), y)
            })
            .collect(),
        dram_read: Some(Transfer {
            bytes: 1006632960.0,
            ms: 0.22,
        }),
        dram_copy: Some(Transfer {
            bytes: 1006632960.0,
            ms: 0.24,
        }),
        // 128 passes over 15 MiB in 0.2 ms: 10066 GB/s.
        l2_read: Some(Transfer {
            bytes: 15728640.0 * 128.0,
            ms: 0.2,
        }),
        shared_bytes_per_cycle: vec![127.0, 128.0, 126.0],
        // 1.5 + 0.5 cycles per address.
        constant_addresses: bench::DISTINCT
            .iter()
            .map(|&d| (f64::from(d), 1.5 + 0.5 * f64::from(d)))
            .collect(),
        // 1 + 12 cycles per missing address.
        constant_misses: bench::DISTINCT
            .iter()
            .map(|&d| (f64::from(d), 1.0 + 12.0 * f64::from(d)))
            .collect(),
        // 1 cycle per wavefront plus 0.25.
        bank_conflicts: (1..=32u64)
            .map(|s| (s as f64, 0.25 + fit::gcd(s, 32) as f64))
            .collect(),
        warps: 16,
        launch_single_us: Some(4.75),
        launch_gpu_single_us: Some(1.45),
        launch_gpu_back_to_back_us: Some(1.3),
        launch_queue_drained: false,
    }
}

fn setting<'a>(c: &'a Calibration, key: &str) -> &'a Setting {
    c.settings
        .iter()
        .find(|s| s.key == key)
        .unwrap_or_else(|| panic!("{key} not set: {:?}", c.settings))
}

#[test]
fn every_benchmark_sets_its_keys() {
    let c = analyze(&raw(), &base());
    let got: Vec<(&str, f64)> = c
        .settings
        .iter()
        .map(|s| (s.key.as_str(), s.value))
        .collect();
    let gbs = |bytes: f64, ms: f64| bytes / ms / 1e6;
    assert_eq!(
        got,
        vec![
            ("sm.clock_mhz", 1980.0),
            ("l1.latency_cycles", 33.4),
            ("l2.latency_cycles", 261.7),
            ("dram.latency_cycles", 818.3),
            ("shared.latency_cycles", 29.0),
            ("constant.cache[0].latency_cycles", 23.0),
            ("constant.cache[0].size_bytes", 2048.0),
            ("constant.cache[1].latency_cycles", 110.0),
            ("dram.bandwidth_gb_per_s", gbs(1006632960.0, 0.24)),
            (
                "l2.bandwidth_bytes_per_cycle",
                15728640.0 * 128.0 / (0.2 * 1980.0 * 1e3)
            ),
            ("shared.wavefronts_per_cycle", 127.0 / 128.0),
            ("constant.addresses_per_cycle", 2.0),
            ("constant.misses_in_flight", 110.0 / 12.0),
            ("gpu.launch_overhead_ns", 1300.0),
        ]
    );
    assert_eq!(c.clock.mhz, 1980.0);
    assert!(
        c.clock.source.contains("1980.2 MHz at the start"),
        "{}",
        c.clock.source
    );
    // Every key a spec names, except the unresolved L1.5 size, is set; every set key is in a spec.
    for s in &c.settings {
        assert!(
            SPECS.iter().any(|spec| spec.keys.contains(&s.key.as_str())),
            "{} is in no spec",
            s.key
        );
    }
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn the_model_checks_and_informational_rows() {
    let c = analyze(&raw(), &base());
    let row = |q: &str| {
        c.rows
            .iter()
            .find(|r| r.quantity == q)
            .unwrap_or_else(|| panic!("no row {q}: {:?}", c.rows))
    };
    let bank = row("shared cycles per wavefront");
    assert!((bank.value - 1.0).abs() < 1e-12 && bank.key.is_none());
    assert!(bank.detail.contains("R² = 1.0000"), "{}", bank.detail);
    assert_eq!(row("constant cycles per extra address").value, 0.5);
    let unresolved = row("constant L1.5 size: at least");
    assert_eq!((unresolved.value, unresolved.key.as_ref()), (65536.0, None));
    assert!(unresolved.detail.contains("not resolved"));
    assert_eq!(row("shared bandwidth per SM").value, 127.0);
    assert!((row("launch overhead (GPU side, single)").value - 1450.0).abs() < 1e-9);
    assert_eq!(row("launch time with the host (single)").value, 4750.0);
    let read = row("DRAM read bandwidth");
    assert!((read.value - 4575.6).abs() < 0.1, "{}", read.value);
    // The model's wavefronts ride along the bank-conflict curve.
    let curve = c
        .curves
        .iter()
        .find(|c| c.bench == "bank-conflicts")
        .unwrap();
    let model = curve.model.as_ref().unwrap();
    assert_eq!(&model[..8], &[1.0, 2.0, 1.0, 4.0, 1.0, 2.0, 1.0, 8.0]);
    assert_eq!(model[31], 32.0);
}

#[test]
fn the_wavefront_model_is_the_gcd_of_the_stride() {
    let banks = Banks {
        banks: 32,
        width: 4,
    };
    for s in 1..=64u64 {
        assert_eq!(
            u64::from(predicted_wavefronts(s, banks)),
            fit::gcd(s, 32),
            "stride {s}"
        );
    }
}

#[test]
fn the_calibrated_h200_config_loads_with_the_measured_values_and_keeps_the_rest() {
    let c = analyze(&raw(), &base());
    let stamp = "measured: validate calibrate, NVIDIA H200, 2026-11-21";
    let (text, written) = edit::apply(H200, &c.settings, stamp).unwrap();
    let cfg = GpuConfig::from_toml_str(&text, "calibrated").unwrap();
    assert_eq!(cfg.sm.clock_mhz, 1980.0);
    assert_eq!(cfg.l1.latency_cycles, 33);
    assert_eq!(cfg.l2.latency_cycles, 262);
    assert_eq!(cfg.dram.latency_cycles, 818);
    assert_eq!(cfg.shared.latency_cycles, 29);
    assert_eq!(cfg.constant.cache[0].latency_cycles, 23);
    assert_eq!(cfg.constant.cache[0].size_bytes, 2048);
    assert_eq!(cfg.constant.cache[1].latency_cycles, 110);
    assert_eq!(cfg.constant.cache[1].size_bytes, 65536);
    assert_eq!(cfg.dram.bandwidth_gb_per_s, 4194.3);
    assert_eq!(cfg.l2.bandwidth_bytes_per_cycle, 5084.0);
    assert_eq!(cfg.shared.wavefronts_per_cycle, 0.99);
    assert_eq!(cfg.constant.addresses_per_cycle, 2.0);
    assert_eq!(cfg.constant.misses_in_flight, 9.17);
    assert_eq!(cfg.gpu.launch_overhead_ns, 1300.0);
    assert_eq!(written.len(), c.settings.len());
    assert_eq!(text.matches(stamp).count(), c.settings.len());
    // Every line of the base that is neither a measured key nor a comment line is still there.
    let measured: Vec<&str> = written
        .iter()
        .map(|w| w.key.rsplit('.').next().unwrap())
        .collect();
    for line in H200.lines() {
        let key = line.split('=').next().unwrap().trim();
        if line.starts_with('#') || measured.contains(&key) {
            continue;
        }
        assert!(text.contains(line), "lost: {line}");
    }
    // The header comment and the unmeasured keys' comments are untouched.
    assert!(text.starts_with(&H200[..H200.find("[gpu]").unwrap()]));
    assert!(text.contains("associativity = 4               # unknown anywhere; assumption"));
    // The L1 latency's comment lines: how it was measured, then what it was.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("latency_cycles = 33 "))
        .unwrap();
    assert!(lines[at].ends_with(stamp), "{}", lines[at]);
    assert!(lines[at - 1].ends_with("(was 38)"), "{}", lines[at - 1]);
    let first = (0..at).rev().find(|&i| !lines[i].starts_with('#')).unwrap() + 1;
    assert!(
        lines[first].starts_with("# pointer chase: 8192 dependent ld.global.u64"),
        "{:?}",
        &lines[first - 3..=at]
    );
    assert!(lines[first - 1].starts_with("associativity = 466"));
}

/// What an H200 measured on 2026-11-21: the kernels of validate/calibrate with the parameters of
/// `bench`, run through CuPy on the device machine (validate/harness/calibrate/, results.json).
fn h200_measured() -> Raw {
    let chase = |cycles, loads, bytes, runs| {
        Some(Chase {
            cycles_per_load: cycles,
            loads,
            bytes,
            runs,
        })
    };
    let sweep = vec![
        (512.0, 28.015),
        (1024.0, 28.015),
        (1536.0, 28.015),
        (1792.0, 28.1),
        (2048.0, 28.083),
        (2304.0, 66.876),
        (2560.0, 97.895),
        (3072.0, 98.015),
        (4096.0, 98.015),
        (6144.0, 98.015),
        (8192.0, 98.015),
        (12288.0, 98.015),
        (16384.0, 98.015),
        (24576.0, 98.015),
        (32768.0, 98.015),
        (40960.0, 98.015),
        (49152.0, 98.015),
        (57344.0, 98.015),
        (65536.0, 98.015),
    ];
    let bank = [
        1.0088, 2.0061, 1.009, 4.007, 1.0088, 2.0061, 1.0092, 8.0073, 1.0088, 2.0061, 1.009, 4.007,
        1.0088, 2.0061, 1.0092, 16.0079, 1.0088, 2.0061, 1.0092, 4.007, 1.0088, 2.0061, 1.0092,
        8.0073, 1.0088, 2.0061, 1.0092, 4.007, 1.0088, 2.0061, 1.0092, 32.0088,
    ];
    Raw {
        device: "NVIDIA H200".into(),
        clock_start_mhz: Some(1977.6039384753728),
        clock_end_mhz: Some(1973.8941418683353),
        attribute_clock_mhz: Some(1980.0),
        l1: chase(32.0216064453125, 8192, 8192, 1),
        l2: chase(280.2313232421875, 8192, 1 << 20, 1),
        dram: chase(659.031005859375, 16384, 16 << 20, 3),
        shared: chase(23.0081787109375, 8192, 4096, 1),
        constant_sweep: sweep,
        dram_read: Some(Transfer {
            bytes: 2013265920.0,
            ms: 0.45126400887966156,
        }),
        dram_copy: Some(Transfer {
            bytes: 2013265920.0,
            ms: 0.477183997631073,
        }),
        l2_read: Some(Transfer {
            bytes: 2013265920.0,
            ms: 0.2618879973888397,
        }),
        shared_bytes_per_cycle: vec![127.80547186741524],
        constant_addresses: vec![
            (1.0, 2.0079),
            (2.0, 4.0052),
            (4.0, 8.0044),
            (8.0, 16.0036),
            (16.0, 31.9966),
            (32.0, 64.0108),
        ],
        // A separate run of the same kernels (constant_misses.py), 16 warps.
        constant_misses: vec![
            (1.0, 7.261),
            (2.0, 11.683),
            (4.0, 33.063),
            (8.0, 73.236),
            (16.0, 156.109),
            (32.0, 331.423),
        ],
        bank_conflicts: bank
            .iter()
            .enumerate()
            .map(|(i, &c)| ((i + 1) as f64, c))
            .collect(),
        warps: 16,
        launch_single_us: Some(5.360000068321824),
        launch_gpu_single_us: Some(1.4720000326633453),
        launch_gpu_back_to_back_us: Some(1.3954559564590454),
        launch_queue_drained: false,
    }
}

#[test]
fn what_an_h200_measured_becomes_this_config() {
    let c = analyze(&h200_measured(), &base());
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let stamp = "measured: validate calibrate, NVIDIA H200, 2026-11-21";
    let (text, written) = edit::apply(H200, &c.settings, stamp).unwrap();
    // The keys written and their new values (the old ones are whatever configs/h200.toml holds
    // now, which calibration itself updates).
    let got: Vec<(&str, &str)> = written
        .iter()
        .map(|w| (w.key.as_str(), w.new.as_str()))
        .collect();
    assert!(written.iter().all(|w| !w.old.is_empty()));
    assert_eq!(
        got,
        vec![
            ("sm.clock_mhz", "1975.7"),
            ("l1.latency_cycles", "32"),
            ("l2.latency_cycles", "280"),
            ("dram.latency_cycles", "659"),
            ("shared.latency_cycles", "23"),
            ("constant.cache[0].latency_cycles", "28"),
            ("constant.cache[0].size_bytes", "2048"),
            ("constant.cache[1].latency_cycles", "98"),
            ("dram.bandwidth_gb_per_s", "4219.1"),
            ("l2.bandwidth_bytes_per_cycle", "3890.9"),
            ("shared.wavefronts_per_cycle", "1.0"),
            ("constant.addresses_per_cycle", "0.5"),
            ("constant.misses_in_flight", "9.3"),
            ("gpu.launch_overhead_ns", "1395.0"),
        ]
    );
    GpuConfig::from_toml_str(&text, "calibrated").unwrap();
    let row = |q: &str| c.rows.iter().find(|r| r.quantity == q).unwrap().value;
    // The bank conflicts follow the wavefront model: one cycle per wavefront.
    assert!((row("shared cycles per wavefront") - 1.0).abs() < 0.001);
    assert!((row("DRAM read bandwidth") - 4461.4).abs() < 0.1);
    // 98.0 cycles of the L1.5 over 10.544 cycles per missing address.
    assert!((row("constant cycles per missing address") - 10.5443).abs() < 1e-4);
    assert!((row("constant misses in flight") - 9.2956).abs() < 1e-4);
}

#[test]
fn missing_benchmarks_set_nothing_and_bad_fits_are_not_written() {
    let c = analyze(&Raw::default(), &base());
    assert!(c.settings.is_empty() && c.rows.is_empty());
    assert_eq!(c.clock.mhz, 1980.0);
    assert!(c.clock.source.contains("base config"));
    let mut r = Raw {
        attribute_clock_mhz: Some(1755.0),
        constant_addresses: vec![(1.0, 5.0), (2.0, 1.0), (4.0, 9.0), (8.0, 2.0)],
        ..Raw::default()
    };
    let c = analyze(&r, &base());
    assert_eq!(c.clock.mhz, 1755.0);
    assert!(c.settings.is_empty());
    assert!(c.warnings[0].contains("constant.addresses_per_cycle not written"));
    // A clock that moves by more than 2% is reported.
    r.clock_start_mhz = Some(1980.0);
    r.clock_end_mhz = Some(1700.0);
    let c = analyze(&r, &base());
    assert_eq!(c.clock.mhz, 1840.0);
    assert!(
        c.warnings.iter().any(|w| w.contains("throttling")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn misses_in_flight_use_the_configs_latency_without_the_sweep() {
    let r = Raw {
        constant_misses: vec![(1.0, 10.6), (2.0, 21.2), (4.0, 42.4)],
        ..Raw::default()
    };
    let c = analyze(&r, &base());
    let s = setting(&c, "constant.misses_in_flight");
    assert!((s.value - 106.0 / 10.6).abs() < 1e-9, "{}", s.value);
    assert!(
        s.detail.contains("106.0 cycles (the config's)"),
        "{}",
        s.detail
    );
}

#[test]
fn a_second_constant_step_sets_the_second_size() {
    let r = Raw {
        constant_sweep: vec![
            (1024.0, 20.0),
            (2048.0, 20.0),
            (4096.0, 100.0),
            (16384.0, 101.0),
            (32768.0, 100.0),
            (49152.0, 240.0),
            (65536.0, 245.0),
        ],
        ..Raw::default()
    };
    let c = analyze(&r, &base());
    assert_eq!(setting(&c, "constant.cache[1].size_bytes").value, 32768.0);
    assert_eq!(setting(&c, "constant.cache[0].size_bytes").value, 2048.0);
    let beyond = c
        .rows
        .iter()
        .find(|r| r.quantity.contains("level 3"))
        .unwrap();
    assert_eq!((beyond.value, beyond.key.as_ref()), (242.5, None));
}

#[test]
fn the_plan_lists_every_benchmark_with_its_keys() {
    let rows = plan_rows();
    assert_eq!(rows.len(), SPECS.len());
    assert_eq!(rows[0][0], "clock");
    assert!(rows
        .iter()
        .any(|r| r[3].contains("constant.addresses_per_cycle")));
    let total: f64 = SPECS.iter().map(|s| s.seconds).sum();
    assert!(total < 60.0, "{total} s");
    let help = long_help();
    for s in SPECS {
        assert!(help.contains(s.id) && help.contains(s.method), "{}", s.id);
    }
    // Every key a spec names exists in the shipped H200 config.
    for key in SPECS.iter().flat_map(|s| s.keys.iter()) {
        assert!(edit::get(H200, key).is_some(), "{key}");
    }
}
