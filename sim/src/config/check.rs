//! Range and combination checks of a deserialized config.
//!
//! Each check is a small pure function that returns the dotted key and a message of the form
//! `<key> = <value> <what is wrong>; allowed: <what is accepted>`. The first violation wins.

use super::schema::{CacheGeometry, Constant, Dram, Gpu, Shared, Sm, Tensor, L1, L2};
use super::GpuConfig;

/// A rejected value: the dotted key and what is wrong with it (the caller adds the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    /// Dotted key, e.g. `l1.sector_bytes` or `constant.cache[1].line_bytes`.
    pub key: String,
    /// `<leaf> = <value> ...; allowed: ...`.
    pub message: String,
}

/// Result of one check.
pub(crate) type Check = Result<(), Invalid>;

fn invalid(key: &str, message: String) -> Invalid {
    Invalid {
        key: key.to_string(),
        message,
    }
}

/// The last component of a dotted key (`constant.cache[0].line_bytes` -> `line_bytes`).
fn leaf(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// `lo <= value <= hi` for an integer.
pub(crate) fn int_range(key: &str, value: u64, lo: u64, hi: u64) -> Check {
    if (lo..=hi).contains(&value) {
        return Ok(());
    }
    let msg = format!(
        "{} = {value} is out of range; allowed: {lo} to {hi}",
        leaf(key)
    );
    Err(invalid(key, msg))
}

/// `value` is one of `allowed`.
pub(crate) fn one_of(key: &str, value: u64, allowed: &[u64]) -> Check {
    if allowed.contains(&value) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(u64::to_string).collect();
    let msg = format!(
        "{} = {value} is not allowed; allowed: {}",
        leaf(key),
        list.join(" or ")
    );
    Err(invalid(key, msg))
}

/// A finite float in `(lo, hi]` when `lo_open`, else in `[lo, hi]`.
pub(crate) fn float_range(key: &str, value: f64, lo: f64, lo_open: bool, hi: f64) -> Check {
    let above_lo = if lo_open { value > lo } else { value >= lo };
    if value.is_finite() && above_lo && value <= hi {
        return Ok(());
    }
    let allowed = if lo_open {
        format!("greater than {lo} and at most {hi}")
    } else {
        format!("{lo} to {hi}")
    };
    let what = if value.is_finite() {
        "is out of range"
    } else {
        "is not a finite number"
    };
    let msg = format!("{} = {value} {what}; allowed: {allowed}", leaf(key));
    Err(invalid(key, msg))
}

/// A power of two in `lo..=hi`.
pub(crate) fn pow2_range(key: &str, value: u64, lo: u64, hi: u64) -> Check {
    if value.is_power_of_two() && (lo..=hi).contains(&value) {
        return Ok(());
    }
    let what = if value.is_power_of_two() {
        "is out of range"
    } else {
        "is not a power of two"
    };
    let msg = format!(
        "{} = {value} {what}; allowed: a power of two from {lo} to {hi}",
        leaf(key)
    );
    Err(invalid(key, msg))
}

/// A string with at least one non-blank character.
pub(crate) fn non_empty(key: &str, value: &str) -> Check {
    if !value.trim().is_empty() {
        return Ok(());
    }
    let msg = format!(
        "{} = {value:?} is empty; allowed: any non-empty string",
        leaf(key)
    );
    Err(invalid(key, msg))
}

/// `"MAJOR.MINOR"` with major 1 to 12 and minor 0 to 9 (`"8.6"` -> `(8, 6)`).
pub(crate) fn parse_compute_capability(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    let (major, minor) = (major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?);
    ((1..=12).contains(&major) && minor <= 9).then_some((major, minor))
}

/// Limits of one cache's geometry.
pub(crate) struct GeometryLimits {
    /// Smallest and largest line, bytes (powers of two).
    pub line_bytes: (u64, u64),
    /// Largest associativity.
    pub max_associativity: u64,
    /// Largest capacity, bytes.
    pub max_size_bytes: u64,
    /// Whether the cache has its own `sector_bytes` key to check.
    pub sectored: bool,
    /// Whether the number of sets must be a power of two.
    pub pow2_sets: bool,
}

/// Line, sector, associativity and size of the cache whose keys start with `prefix` (`l1`).
pub(crate) fn geometry(prefix: &str, g: CacheGeometry, lim: &GeometryLimits) -> Check {
    let key = |name: &str| format!("{prefix}.{name}");
    let (line_lo, line_hi) = lim.line_bytes;
    pow2_range(&key("line_bytes"), g.line_bytes, line_lo, line_hi)?;
    if lim.sectored {
        let (s, l) = (g.sector_bytes, g.line_bytes);
        let what = if l.checked_rem(s) != Some(0) {
            Some(format!("does not divide line_bytes = {l}"))
        } else if !s.is_power_of_two() {
            Some("is not a power of two".to_string())
        } else if s < 4 {
            Some("is below 4".to_string())
        } else {
            None
        };
        if let Some(what) = what {
            let msg =
                format!("sector_bytes = {s} {what}; allowed: a power of two from 4 to line_bytes");
            return Err(invalid(&key("sector_bytes"), msg));
        }
    }
    int_range(
        &key("associativity"),
        g.associativity,
        1,
        lim.max_associativity,
    )?;
    let set_bytes = g.line_bytes * g.associativity;
    let size = g.size_bytes;
    if size == 0 || size.checked_rem(set_bytes) != Some(0) {
        let msg = format!(
            "size_bytes = {size} is not a positive multiple of line_bytes * associativity = \
             {set_bytes}; allowed: a whole number (>= 1) of sets of {set_bytes} bytes, at most {}",
            lim.max_size_bytes
        );
        return Err(invalid(&key("size_bytes"), msg));
    }
    int_range(&key("size_bytes"), size, set_bytes, lim.max_size_bytes)?;
    let sets = size / set_bytes;
    if lim.pow2_sets && !sets.is_power_of_two() {
        let msg = format!(
            "size_bytes = {size} gives {sets} sets of line_bytes * associativity = {set_bytes} \
             bytes; allowed: a power-of-two number of sets"
        );
        return Err(invalid(&key("size_bytes"), msg));
    }
    Ok(())
}

fn gpu(g: &Gpu) -> Check {
    non_empty("gpu.name", &g.name)?;
    if parse_compute_capability(&g.compute_capability).is_none() {
        let msg = format!(
            "compute_capability = {:?} is not \"MAJOR.MINOR\"; allowed: major 1 to 12, minor 0 to 9, \
             e.g. \"8.6\"",
            g.compute_capability
        );
        return Err(invalid("gpu.compute_capability", msg));
    }
    float_range(
        "gpu.launch_overhead_ns",
        g.launch_overhead_ns,
        0.0,
        false,
        1e9,
    )?;
    float_range(
        "gpu.host_launch_interval_ns",
        g.host_launch_interval_ns,
        0.0,
        false,
        1e9,
    )
}

fn sm(s: &Sm) -> Check {
    int_range("sm.count", s.count.into(), 1, 1024)?;
    float_range("sm.clock_mhz", s.clock_mhz, 0.0, true, 10_000.0)?;
    one_of("sm.warp_size", s.warp_size.into(), &[32])?;
    int_range("sm.schedulers", s.schedulers.into(), 1, 8)?;
    int_range("sm.max_threads", s.max_threads.into(), 32, 4096)?;
    int_range("sm.max_warps", s.max_warps.into(), 1, 128)?;
    int_range("sm.max_blocks", s.max_blocks.into(), 1, 64)?;
    int_range("sm.gpcs", s.gpcs.into(), 0, s.count.into())?;
    int_range(
        "sm.max_threads_per_block",
        s.max_threads_per_block.into(),
        32,
        2048,
    )?;
    if s.max_threads_per_block > s.max_threads {
        let msg = format!(
            "max_threads_per_block = {} exceeds sm.max_threads = {}; allowed: 32 to max_threads",
            s.max_threads_per_block, s.max_threads
        );
        return Err(invalid("sm.max_threads_per_block", msg));
    }
    int_range("sm.registers", s.registers.into(), 1024, 1 << 20)?;
    let r = s.max_registers_per_thread;
    int_range("sm.max_registers_per_thread", r.into(), 1, 255)?;
    let floor = s.min_registers_per_thread;
    int_range("sm.min_registers_per_thread", floor.into(), 0, r.into())?;
    let u = s.register_allocation_unit;
    int_range("sm.register_allocation_unit", u.into(), 1, 4096)?;
    let lsu = s.lsu_instructions_per_cycle;
    float_range("sm.lsu_instructions_per_cycle", lsu, 0.0, true, 32.0)?;
    int_range("sm.alu_latency_cycles", s.alu_latency_cycles.into(), 1, 100)?;
    int_range("sm.imad_issue_cycles", s.imad_issue_cycles.into(), 1, 16)?;
    int_range("sm.alu_issue_cycles", s.alu_issue_cycles.into(), 1, 16)?;
    let d = s.block_dispatch_cycles;
    float_range("sm.block_dispatch_cycles", d, 0.0, false, 10_000.0)?;
    let w = s.warp_launch_cycles;
    float_range("sm.warp_launch_cycles", w, 0.0, false, 1000.0)?;
    let b = s.barrier_latency_cycles;
    int_range("sm.barrier_latency_cycles", b.into(), 0, 10_000)?;
    let b = s.barrier_cycles_per_warp;
    float_range("sm.barrier_cycles_per_warp", b, 0.0, false, 100.0)
}

fn shared(s: &Shared) -> Check {
    int_range(
        "shared.size_per_sm_bytes",
        s.size_per_sm_bytes.into(),
        0,
        1 << 20,
    )?;
    if s.size_per_block_bytes > s.size_per_sm_bytes {
        let msg = format!(
            "size_per_block_bytes = {} exceeds shared.size_per_sm_bytes = {}; allowed: 0 to \
             size_per_sm_bytes",
            s.size_per_block_bytes, s.size_per_sm_bytes
        );
        return Err(invalid("shared.size_per_block_bytes", msg));
    }
    if let Some(o) = s.size_per_block_optin_bytes {
        if o < s.size_per_block_bytes || o > s.size_per_sm_bytes {
            let msg = format!(
                "size_per_block_optin_bytes = {o} is outside its range; allowed: \
                 shared.size_per_block_bytes = {} to shared.size_per_sm_bytes = {}",
                s.size_per_block_bytes, s.size_per_sm_bytes
            );
            return Err(invalid("shared.size_per_block_optin_bytes", msg));
        }
    }
    one_of("shared.banks", s.banks.into(), &[16, 32])?;
    one_of(
        "shared.bank_width_bytes",
        s.bank_width_bytes.into(),
        &[4, 8],
    )?;
    int_range("shared.latency_cycles", s.latency_cycles.into(), 1, 1000)?;
    float_range(
        "shared.wavefronts_per_cycle",
        s.wavefronts_per_cycle,
        0.0,
        true,
        8.0,
    )
}

fn constant(c: &Constant, cc_major: u32) -> Check {
    int_range("constant.size_bytes", c.size_bytes.into(), 1, 1 << 20)?;
    one_of(
        "constant.broadcast_lanes",
        c.broadcast_lanes.into(),
        &[16, 32],
    )?;
    let want = if cc_major == 1 { 16 } else { 32 };
    if c.broadcast_lanes != want {
        let msg = format!(
            "broadcast_lanes = {} does not match compute capability {cc_major}.x; allowed: 16 for \
             compute capability 1.x (half-warps), 32 otherwise",
            c.broadcast_lanes
        );
        return Err(invalid("constant.broadcast_lanes", msg));
    }
    let apc = c.addresses_per_cycle;
    float_range("constant.addresses_per_cycle", apc, 0.0, true, 32.0)?;
    float_range(
        "constant.misses_in_flight",
        c.misses_in_flight,
        0.0,
        true,
        64.0,
    )?;
    float_range(
        "constant.gcc_requests_per_cycle",
        c.gcc_requests_per_cycle,
        0.0,
        false,
        64.0,
    )?;
    int_range(
        "constant.smsp_merge_cycles",
        c.smsp_merge_cycles.into(),
        0,
        100_000,
    )?;
    int_range(
        "constant.imc_latency_cycles",
        c.imc_latency_cycles.into(),
        0,
        1000,
    )?;
    if !(1..=3).contains(&c.cache.len()) {
        let msg = format!(
            "cache has {} levels; allowed: 1 to 3 [[constant.cache]] levels",
            c.cache.len()
        );
        return Err(invalid("constant.cache", msg));
    }
    let limits = GeometryLimits {
        line_bytes: (4, 1024),
        max_associativity: 64,
        max_size_bytes: 1 << 24,
        sectored: false,
        pow2_sets: true,
    };
    for (i, level) in c.cache.iter().enumerate() {
        let prefix = format!("constant.cache[{i}]");
        non_empty(&format!("{prefix}.name"), &level.name)?;
        geometry(&prefix, level.geometry(), &limits)?;
        let lat = level.latency_cycles.into();
        int_range(&format!("{prefix}.latency_cycles"), lat, 1, 2000)?;
    }
    Ok(())
}

fn l1(l: &L1) -> Check {
    let limits = GeometryLimits {
        line_bytes: (32, 1024),
        max_associativity: 1024,
        max_size_bytes: 1 << 24,
        sectored: true,
        pow2_sets: false,
    };
    geometry("l1", l.geometry(), &limits)?;
    int_range("l1.latency_cycles", l.latency_cycles.into(), 1, 2000)?;
    if let Some(t) = l.texture_latency_cycles {
        int_range(
            "l1.texture_latency_cycles",
            t.into(),
            l.latency_cycles.into(),
            4000,
        )?;
    }
    if l.transaction_bytes != l.sector_bytes && l.transaction_bytes != l.line_bytes {
        let msg = format!(
            "transaction_bytes = {} is neither sector_bytes = {} nor line_bytes = {}; allowed: \
             sector_bytes (32 B sectored transactions) or line_bytes (128 B line transactions of \
             Fermi/Kepler)",
            l.transaction_bytes, l.sector_bytes, l.line_bytes
        );
        return Err(invalid("l1.transaction_bytes", msg));
    }
    float_range("l1.sectors_per_cycle", l.sectors_per_cycle, 0.0, true, 64.0)?;
    let tags = l.tag_lookups_per_cycle;
    float_range("l1.tag_lookups_per_cycle", tags, 0.0, true, 64.0)?;
    if let Some(w) = l.store_merge_cycles {
        int_range("l1.store_merge_cycles", w.into(), 0, 1000)?;
    }
    Ok(())
}

fn l2(l: &L2) -> Check {
    let limits = GeometryLimits {
        line_bytes: (32, 1024),
        max_associativity: 1024,
        max_size_bytes: 1 << 32,
        sectored: true,
        pow2_sets: false,
    };
    geometry("l2", l.geometry(), &limits)?;
    int_range("l2.latency_cycles", l.latency_cycles.into(), 1, 10_000)?;
    let bw = l.bandwidth_bytes_per_cycle;
    float_range("l2.bandwidth_bytes_per_cycle", bw, 0.0, true, 1e6)?;
    let w = l.write_bandwidth_bytes_per_cycle;
    float_range("l2.write_bandwidth_bytes_per_cycle", w, 0.0, false, 1e6)?;
    let r = l.write_requests_per_cycle;
    float_range("l2.write_requests_per_cycle", r, 0.0, false, 1e6)?;
    let a = l.same_address_atomic_cycles;
    float_range("l2.same_address_atomic_cycles", a, 0.0, false, 1e6)?;
    int_range("l2.atomic_units", l.atomic_units.into(), 0, 4096)?;
    int_range("l2.set_displacement", l.set_displacement.into(), 0, 65535)?;
    let f = l.fill_bytes;
    if f < l.sector_bytes
        || f > l.line_bytes
        || !f.is_multiple_of(l.sector_bytes)
        || !f.is_power_of_two()
    {
        return Err(invalid(
            "l2.fill_bytes",
            format!(
                "fill_bytes = {f} is not a power-of-two multiple of sector_bytes = {} up to line_bytes = {}; allowed: sector_bytes to line_bytes",
                l.sector_bytes, l.line_bytes
            ),
        ));
    }
    Ok(())
}

fn dram(d: &Dram, l2: &L2) -> Check {
    float_range(
        "dram.bandwidth_gb_per_s",
        d.bandwidth_gb_per_s,
        0.0,
        true,
        1e6,
    )?;
    int_range("dram.latency_cycles", d.latency_cycles.into(), 1, 100_000)?;
    if d.latency_cycles < l2.latency_cycles {
        let msg = format!(
            "latency_cycles = {} is below l2.latency_cycles = {}; allowed: l2.latency_cycles to \
             100000 (the DRAM latency includes the L2 miss)",
            d.latency_cycles, l2.latency_cycles
        );
        return Err(invalid("dram.latency_cycles", msg));
    }
    Ok(())
}

/// The (A/B type, C/D type) pairs PTX has for each shape the tensor pipe's table may list: the
/// `mma.sync` forms of PTX ISA §9.7.14.5.14 the simulator executes and `wmma.mma` m16n16k16
/// (§9.7.14.4) with f16 multiplicands.
pub(crate) const TENSOR_FORMS: &[(&str, &[(&str, &str)])] = &[
    (
        "m16n8k8",
        &[
            ("f16", "f32"),
            ("f16", "f16"),
            ("bf16", "f32"),
            ("tf32", "f32"),
        ],
    ),
    (
        "m16n8k16",
        &[
            ("f16", "f32"),
            ("f16", "f16"),
            ("bf16", "f32"),
            ("s8", "s32"),
        ],
    ),
    ("m16n8k32", &[("s8", "s32")]),
    ("m16n16k16", &[("f16", "f32"), ("f16", "f16")]),
];

fn tensor(t: &Tensor) -> Check {
    for (i, f) in t.form.iter().enumerate() {
        let key = |leaf: &str| format!("tensor.form[{i}].{leaf}");
        let Some((_, pairs)) = TENSOR_FORMS.iter().find(|(s, _)| *s == f.shape) else {
            let shapes: Vec<&str> = TENSOR_FORMS.iter().map(|(s, _)| *s).collect();
            let msg = format!(
                "shape = {:?} is not a tensor form's shape; allowed: {}",
                f.shape,
                shapes.join(", ")
            );
            return Err(invalid(&key("shape"), msg));
        };
        if !pairs.contains(&(f.ab_type.as_str(), f.cd_type.as_str())) {
            let list: Vec<String> = pairs.iter().map(|(a, c)| format!("{a}/{c}")).collect();
            let msg = format!(
                "ab_type = {:?} with cd_type = {:?} is not a form of shape {}; allowed                  (ab_type/cd_type): {}",
                f.ab_type,
                f.cd_type,
                f.shape,
                list.join(", ")
            );
            return Err(invalid(&key("ab_type"), msg));
        }
        let same = |g: &super::schema::TensorForm| {
            (g.shape.as_str(), g.ab_type.as_str(), g.cd_type.as_str())
                == (f.shape.as_str(), f.ab_type.as_str(), f.cd_type.as_str())
        };
        if let Some(j) = t.form[..i].iter().position(same) {
            let msg = format!(
                "shape = {:?} (ab_type = {:?}, cd_type = {:?}) is listed twice, also as \
                 tensor.form[{j}]; allowed: each form once",
                f.shape, f.ab_type, f.cd_type
            );
            return Err(invalid(&key("shape"), msg));
        }
        int_range(&key("latency_cycles"), f.latency_cycles.into(), 1, 1000)?;
        int_range(&key("issue_cycles"), f.issue_cycles.into(), 1, 1000)?;
    }
    Ok(())
}

/// Every range and combination check, table by table in file order.
pub(crate) fn validate(cfg: &GpuConfig) -> Check {
    gpu(&cfg.gpu)?;
    let (major, _) = cfg.compute_capability();
    sm(&cfg.sm)?;
    shared(&cfg.shared)?;
    constant(&cfg.constant, major)?;
    l1(&cfg.l1)?;
    l2(&cfg.l2)?;
    dram(&cfg.dram, &cfg.l2)?;
    tensor(&cfg.tensor)
}
