//! The analysis of a calibration run: a [`Raw`] record and the base config turned into rows
//! for people and [`Setting`]s for the config ([`analyze`]); pure, so that tests run it without
//! a GPU.

use super::*;

/// Relative difference above which the start and end clocks are reported as differing.
pub(super) const CLOCK_DRIFT: f64 = 0.02;
/// The least R² at which a fitted slope is written.
pub(super) const MIN_R2: f64 = 0.9;

pub(super) fn kib(bytes: f64) -> String {
    if bytes >= 1024.0 && bytes % 1024.0 == 0.0 {
        format!("{} KiB", bytes / 1024.0)
    } else if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / 1048576.0)
    } else {
        format!("{bytes} B")
    }
}

pub(super) struct Builder {
    pub(super) rows: Vec<Row>,
    pub(super) settings: Vec<Setting>,
    pub(super) warnings: Vec<String>,
}

impl Builder {
    /// A row without a key.
    pub(super) fn info(
        &mut self,
        bench: &'static str,
        quantity: &str,
        value: f64,
        unit: &str,
        detail: String,
    ) {
        self.rows.push(Row {
            bench,
            quantity: quantity.into(),
            value,
            unit: unit.into(),
            key: None,
            detail,
        });
    }

    /// A row that sets `key` (written with `decimals` if the key is a float).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set(
        &mut self,
        bench: &'static str,
        quantity: &str,
        value: f64,
        unit: &str,
        key: &str,
        decimals: u32,
        detail: String,
    ) {
        self.rows.push(Row {
            bench,
            quantity: quantity.into(),
            value,
            unit: unit.into(),
            key: Some(key.into()),
            detail: detail.clone(),
        });
        self.settings.push(Setting {
            key: key.into(),
            value,
            decimals,
            detail,
        });
    }
}

/// The clock that converts times to cycles: the mean of the start and end measurements, else
/// the device attribute's maximum, else the base config's.
pub fn clock_used(raw: &Raw, base: &GpuConfig) -> ClockUsed {
    match (raw.clock_start_mhz, raw.clock_end_mhz) {
        (Some(a), Some(b)) => ClockUsed {
            mhz: (a + b) / 2.0,
            source: format!(
                "measured: clock64 cycles over CUDA-event time, {a:.1} MHz at the start and \
{b:.1} MHz at the end of the run"
            ),
        },
        (Some(a), None) | (None, Some(a)) => ClockUsed {
            mhz: a,
            source: "measured: clock64 cycles over CUDA-event time".into(),
        },
        (None, None) => match raw.attribute_clock_mhz {
            Some(m) => ClockUsed {
                mhz: m,
                source: "not measured: the device attribute CLOCK_RATE (the maximum clock)".into(),
            },
            None => ClockUsed {
                mhz: base.sm.clock_mhz,
                source: "not measured: the base config's sm.clock_mhz".into(),
            },
        },
    }
}

/// The wavefronts the simulator predicts for a warp-level 4-byte shared load whose lane `l` reads
/// word `l * stride`, on `banks`.
pub fn predicted_wavefronts(stride: u64, banks: Banks) -> u32 {
    wavefronts(&WarpAccess::from_fn(4, |l| l * stride * 4), banks).wavefronts
}

/// Analyses `raw` against the base config `base`: rows, settings, curves, warnings.
pub fn analyze(raw: &Raw, base: &GpuConfig) -> Calibration {
    let clock = clock_used(raw, base);
    let mhz = clock.mhz;
    let mut b = Builder {
        rows: vec![],
        settings: vec![],
        warnings: vec![],
    };
    let mut curves = vec![];
    let at = |cycles: f64| format!("{:.1} ns at {mhz:.1} MHz", fit::cycles_to_ns(cycles, mhz));

    // clock
    if raw.clock_start_mhz.is_some() || raw.clock_end_mhz.is_some() {
        let attr = raw.attribute_clock_mhz.map_or(String::new(), |m| {
            format!("; device attribute maximum {m:.0} MHz")
        });
        b.set(
            "clock",
            "SM clock",
            mhz,
            "MHz",
            "sm.clock_mhz",
            1,
            format!(
                "spin kernel: clock64 cycles over CUDA-event time (1M vs 21M cycles, one warp per \
SM), {}{attr}",
                clock
                    .source
                    .trim_start_matches("measured: clock64 cycles over CUDA-event time, ")
            ),
        );
        if let (Some(a), Some(e)) = (raw.clock_start_mhz, raw.clock_end_mhz) {
            if (a - e).abs() > CLOCK_DRIFT * a.max(e) {
                b.warnings.push(format!(
                    "the SM clock moved during the run ({a:.1} MHz at the start, {e:.1} at the \
end): the GPU may be throttling; cycles were converted with the mean, {mhz:.1} MHz"
                ));
            }
        }
    }

    // pointer chases
    let chases: [(&'static str, &str, Option<Chase>, &str, &str); 4] = [
        (
            "latency-l1",
            "L1 hit latency",
            raw.l1,
            "l1.latency_cycles",
            "ld.global.u64, warm",
        ),
        (
            "latency-l2",
            "L2 hit latency",
            raw.l2,
            "l2.latency_cycles",
            "ld.global.cg.u64 (L2 only), warm",
        ),
        (
            "latency-dram",
            "DRAM latency",
            raw.dram,
            "dram.latency_cycles",
            "ld.global.cg.u64, cold (L2 evicted first)",
        ),
        (
            "latency-shared",
            "shared memory latency",
            raw.shared,
            "shared.latency_cycles",
            "ld.shared.u32",
        ),
    ];
    for (bench, quantity, chase, key, how) in chases {
        let Some(c) = chase else { continue };
        let runs = if c.runs > 1 {
            format!(", median of {} runs", c.runs)
        } else {
            String::new()
        };
        b.set(
            bench,
            quantity,
            c.cycles_per_load,
            "cycles",
            key,
            0,
            format!(
                "pointer chase: {} dependent {how} loads in one thread over a {} chain{runs}: \
{:.1} cycles per load ({})",
                c.loads,
                kib(c.bytes as f64),
                c.cycles_per_load,
                at(c.cycles_per_load)
            ),
        );
    }

    // constant cache levels
    if !raw.constant_sweep.is_empty() {
        constant_levels(raw, base, &mut b, &at);
        curves.push(Curve {
            bench: "latency-constant",
            x: "working set (bytes)",
            y: "cycles per ld.const",
            points: raw.constant_sweep.clone(),
            model: None,
        });
    }

    // bandwidths
    if let Some(t) = raw.dram_copy {
        let gbs = fit::gb_per_s(t.bytes, t.ms);
        b.set(
            "bandwidth-dram",
            "DRAM copy bandwidth (read + write)",
            gbs,
            "GB/s",
            "dram.bandwidth_gb_per_s",
            1,
            format!(
                "full-GPU copy of {} (16-byte words): {} bytes read + written in {:.3} ms \
(CUDA events, median) = {gbs:.1} GB/s",
                kib(t.bytes / 2.0),
                t.bytes,
                t.ms
            ),
        );
    }
    if let Some(t) = raw.dram_read {
        let gbs = fit::gb_per_s(t.bytes, t.ms);
        b.info(
            "bandwidth-dram",
            "DRAM read bandwidth",
            gbs,
            "GB/s",
            format!(
                "full-GPU read of {} in {:.3} ms (CUDA events, median)",
                kib(t.bytes),
                t.ms
            ),
        );
    }
    if let Some(t) = raw.l2_read {
        let per_cycle = fit::bytes_per_cycle(t.bytes, t.ms, mhz);
        b.set(
            "bandwidth-l2",
            "L2 read bandwidth",
            per_cycle,
            "bytes/cycle",
            "l2.bandwidth_bytes_per_cycle",
            1,
            format!(
                "full GPU, ld.global.cg.v4 passes over a working set in L2: {} bytes in {:.3} ms \
(CUDA events, median) = {:.1} GB/s = {per_cycle:.1} bytes per cycle at {mhz:.1} MHz",
                t.bytes,
                t.ms,
                fit::gb_per_s(t.bytes, t.ms)
            ),
        );
    }
    if let Some(per_sm) = fit::median(&raw.shared_bytes_per_cycle) {
        let wavefront = f64::from(base.shared.banks * base.shared.bank_width_bytes);
        let detail = format!(
            "1024 threads per SM, conflict-free ld.shared.v4: {per_sm:.1} bytes per cycle per SM \
(clock64, median of {} SMs)",
            raw.shared_bytes_per_cycle.len()
        );
        b.info(
            "bandwidth-shared",
            "shared bandwidth per SM",
            per_sm,
            "bytes/cycle/SM",
            detail.clone(),
        );
        b.set(
            "bandwidth-shared",
            "shared wavefronts per cycle",
            per_sm / wavefront,
            "wavefronts/cycle",
            "shared.wavefronts_per_cycle",
            2,
            format!(
                "{detail} / {wavefront} bytes per wavefront ({} banks x {} bytes)",
                base.shared.banks, base.shared.bank_width_bytes
            ),
        );
    }

    // constant cost per distinct address
    if !raw.constant_addresses.is_empty() {
        let points = &raw.constant_addresses;
        match fit::linear(points) {
            Some(line) if line.slope > 0.0 && line.r2 >= MIN_R2 => {
                let detail = format!(
                    "{} warps of one SM, warp-level ld.const with 1 to 32 distinct cached \
addresses: cycles per warp-level load = {:.2} + {:.3} x addresses (R² = {:.3})",
                    raw.warps, line.intercept, line.slope, line.r2
                );
                b.info(
                    "constant-addresses",
                    "constant cycles per extra address",
                    line.slope,
                    "cycles",
                    detail.clone(),
                );
                b.set(
                    "constant-addresses",
                    "constant addresses per cycle",
                    1.0 / line.slope,
                    "addresses/cycle",
                    "constant.addresses_per_cycle",
                    2,
                    format!("{detail}: 1 / slope"),
                );
            }
            fitted => b.warnings.push(format!(
                "constant-addresses: the cycles per load do not grow along a line with the \
distinct addresses ({}); constant.addresses_per_cycle not written",
                fitted.map_or("too few points".into(), |l| format!(
                    "slope {:.3}, R² {:.3}",
                    l.slope, l.r2
                ))
            )),
        }
        curves.push(Curve {
            bench: "constant-addresses",
            x: "distinct addresses per warp",
            y: "SM cycles per warp-level ld.const",
            points: points.clone(),
            model: None,
        });
    }

    // constant misses in flight
    if !raw.constant_misses.is_empty() {
        constant_misses(raw, base, &mut b);
        curves.push(Curve {
            bench: "constant-misses",
            x: "distinct addresses per warp (all missing the first level)",
            y: "SM cycles per warp-level ld.const",
            points: raw.constant_misses.clone(),
            model: None,
        });
    }

    // bank conflicts: a check of the wavefront model
    if !raw.bank_conflicts.is_empty() {
        let banks = Banks {
            banks: base.shared.banks,
            width: base.shared.bank_width_bytes,
        };
        let model: Vec<f64> = raw
            .bank_conflicts
            .iter()
            .map(|&(stride, _)| f64::from(predicted_wavefronts(stride as u64, banks)))
            .collect();
        let pairs: Vec<(f64, f64)> = model
            .iter()
            .zip(&raw.bank_conflicts)
            .map(|(&w, &(_, cycles))| (w, cycles))
            .collect();
        if let Some(line) = fit::linear(&pairs) {
            b.info(
                "bank-conflicts",
                "shared cycles per wavefront",
                line.slope,
                "cycles",
                format!(
                    "{} warps of one SM, ld.shared.u32 at strides 1 to 32 words: cycles per \
warp-level load = {:.2} + {:.3} x predicted wavefronts (R² = {:.4}; the model is right when R² \
is near 1 and 1 / slope = {:.2} is near shared.wavefronts_per_cycle)",
                    raw.warps,
                    line.intercept,
                    line.slope,
                    line.r2,
                    1.0 / line.slope
                ),
            );
            if line.r2 < MIN_R2 {
                b.warnings.push(format!(
                    "bank-conflicts: the measured cycles do not follow the predicted wavefronts \
(R² = {:.3}): the shared-memory model disagrees with this GPU",
                    line.r2
                ));
            }
        }
        curves.push(Curve {
            bench: "bank-conflicts",
            x: "stride (4-byte words)",
            y: "SM cycles per warp-level ld.shared",
            points: raw.bank_conflicts.clone(),
            model: Some(model),
        });
    }

    // launch overhead
    if let Some(b2b) = raw.launch_gpu_back_to_back_us {
        b.set(
            "launch",
            "launch overhead (GPU side, back to back)",
            b2b * 1e3,
            "ns",
            "gpu.launch_overhead_ns",
            0,
            format!(
                "1000 empty kernels queued behind a spin kernel between two CUDA events, so that \
the host's launch cost is hidden: {:.0} ns per launch (Nsight Compute's gpu__time_duration of an \
empty kernel is of this size: 1.3-1.6 us on an H200)",
                b2b * 1e3
            ),
        );
        if raw.launch_queue_drained {
            b.warnings.push(
                "launch: the host queued the 1000 launches more slowly than the spin kernel ran: \
the back-to-back time may include the host's launch cost"
                    .into(),
            );
        }
    }
    if let Some(v) = raw.launch_gpu_single_us {
        b.info(
            "launch",
            "launch overhead (GPU side, single)",
            v * 1e3,
            "ns",
            "one empty kernel between two CUDA events queued behind a spin kernel, less two \
events queued the same way without it (median of 100)"
                .into(),
        );
    }
    if let Some(v) = raw.launch_single_us {
        b.info(
            "launch",
            "launch time with the host (single)",
            v * 1e3,
            "ns",
            "one empty kernel between two CUDA events, launched while the GPU idles (median of \
200): what `validate compare` times as a launch's median"
                .into(),
        );
    }

    Calibration {
        clock,
        rows: b.rows,
        settings: b.settings,
        curves,
        warnings: b.warnings,
    }
}

/// `constant.misses_in_flight` from the cost of each missing address: the next level's latency
/// (measured by latency-constant when it ran, else the config's) over the cycles per address.
pub(super) fn constant_misses(raw: &Raw, base: &GpuConfig, b: &mut Builder) {
    const BENCH: &str = "constant-misses";
    let Some(next) = base.constant.cache.get(1) else {
        b.warnings.push(
            "constant-misses: the config has one constant cache level: misses_in_flight not \
written"
                .into(),
        );
        return;
    };
    let measured = fit::levels(&raw.constant_sweep).get(1).map(|l| l.latency);
    let (latency, source) = match measured {
        Some(l) => (l, "measured by latency-constant"),
        None => (f64::from(next.latency_cycles), "the config's"),
    };
    match fit::linear(&raw.constant_misses) {
        Some(line) if line.slope > 0.0 && line.r2 >= MIN_R2 => {
            let detail = format!(
                "{} warps of one SM, warp-level ld.const with 1 to 32 distinct addresses that miss the constant {}: cycles per warp-level load = {:.2} + {:.3} x addresses (R² = {:.3})",
                raw.warps, base.constant.cache[0].name, line.intercept, line.slope, line.r2
            );
            b.info(
                BENCH,
                "constant cycles per missing address",
                line.slope,
                "cycles",
                detail.clone(),
            );
            b.set(
                BENCH,
                "constant misses in flight",
                latency / line.slope,
                "misses",
                "constant.misses_in_flight",
                2,
                format!(
                    "{detail}; constant {} latency {latency:.1} cycles ({source}) / {:.3}",
                    next.name, line.slope
                ),
            );
        }
        fitted => b.warnings.push(format!(
            "constant-misses: the cycles per load do not grow along a line with the distinct \
addresses ({}); constant.misses_in_flight not written",
            fitted.map_or("too few points".into(), |l| format!(
                "slope {:.3}, R² {:.3}",
                l.slope, l.r2
            ))
        )),
    }
}

/// The constant cache levels from the sweep: each plateau's latency, and the size of each level
/// that a step resolves, against the base config's `[[constant.cache]]` levels.
pub(super) fn constant_levels(
    raw: &Raw,
    base: &GpuConfig,
    b: &mut Builder,
    at: &dyn Fn(f64) -> String,
) {
    const BENCH: &str = "latency-constant";
    let found: Vec<Level> = fit::levels(&raw.constant_sweep);
    let end = raw
        .constant_sweep
        .iter()
        .map(|p| p.0)
        .fold(0.0_f64, f64::max);
    for (i, level) in found.iter().enumerate() {
        let Some(cache) = base.constant.cache.get(i) else {
            b.info(
                BENCH,
                &format!(
                    "constant level {} latency (beyond the config's levels: L2)",
                    i + 1
                ),
                level.latency,
                "cycles",
                format!(
                    "plateau from {} to {}: {:.1} cycles per ld.const",
                    kib(level.first_bytes),
                    kib(level.last_bytes),
                    level.latency
                ),
            );
            continue;
        };
        let name = &cache.name;
        b.set(
            BENCH,
            &format!("constant {name} latency"),
            level.latency,
            "cycles",
            &format!("constant.cache[{i}].latency_cycles"),
            0,
            format!(
                "pointer chase through __constant__ memory, dependent ld.const 64 bytes apart: \
plateau from {} to {} working set, {:.1} cycles per load ({})",
                kib(level.first_bytes),
                kib(level.last_bytes),
                level.latency,
                at(level.latency)
            ),
        );
        match level.next_bytes {
            Some(next) => {
                let line = u64::from(cache.line_bytes);
                let ways = u64::from(cache.associativity);
                match fit::cache_size(level.last_bytes, line, ways) {
                    Some(size) => b.set(
                        BENCH,
                        &format!("constant {name} size"),
                        size as f64,
                        "bytes",
                        &format!("constant.cache[{i}].size_bytes"),
                        0,
                        format!(
                            "constant pointer chase: {:.1} cycles per load up to a {} working set, \
more at {}: the level holds at least {} and less than {}; rounded down to {line}-byte lines x \
{ways} ways x a power-of-two number of sets",
                            level.latency,
                            kib(level.last_bytes),
                            kib(next),
                            kib(level.last_bytes),
                            kib(next)
                        ),
                    ),
                    None => b.warnings.push(format!(
                        "latency-constant: constant {name} holds {} to {}, less than one set of \
{line}-byte lines x {ways} ways: constant.cache[{i}].size_bytes not written",
                        kib(level.last_bytes),
                        kib(next)
                    )),
                }
            }
            None => b.info(
                BENCH,
                &format!("constant {name} size: at least"),
                level.last_bytes,
                "bytes",
                format!(
                    "no step by the end of the sweep ({}, the constant bank's size): the size is \
not resolved and constant.cache[{i}].size_bytes is kept",
                    kib(end)
                ),
            ),
        }
    }
    if found.len() < base.constant.cache.len() {
        b.warnings.push(format!(
            "latency-constant: {} level(s) found within {}, the config has {}: the farther \
levels keep their values",
            found.len(),
            kib(end),
            base.constant.cache.len()
        ));
    }
}
