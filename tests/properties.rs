//! Property tests (proptest) of memory transaction counts: sectors, requests, cache lookups.
//!
//! Every expectation is computed by a brute-force reference written here (sets of the bytes or
//! words each active lane touches), never by the function under test. What is checked, and why:
//! 1. `coalesce::sectors` = the distinct 32-byte segments touched by the active lanes (and
//!    `coalesce::lines` = distinct 128-byte lines): the CUDA Best Practices Guide's coalescing rule,
//!    for random masks, widths 1..16 B and clustered addresses so lanes collide.
//! 2. Sector count and constant requests are invariant under permuting lanes (a half-warp-preserving
//!    permutation for the 16-lane broadcast of compute 1.x): cost depends on the set of addresses only.
//! 3. A 4-byte aligned access with at least one active lane takes 1..=32 sectors, at most one per
//!    active lane: the bounds users read off the report (4 = coalesced, 32 = fully scattered).
//! 4. `constant::requests` = distinct 4-byte words among active lanes (32 lanes), and the sum over
//!    the two half-warps of each half's distinct words (16 lanes, compute 1.x): CUDA Programming
//!    Guide §5.3.2's serialization rule.
//! 5. Through `MemorySystem` (rtx3090): L1 hits + misses = sectors, each L1 miss is one L2 sector
//!    (32 B sectors at both levels), the `.cg` path never hits nor fills L1 even when repeated,
//!    stores never allocate in L1, and constant loads count one request per distinct word (per
//!    half-warp when `constant.broadcast_lanes = 16`) with hits + misses = requests.
//! 6. End to end on every bundled add_constant workload at small n (partial warps and blocks):
//!    global requests are one per instruction, LDC requests lie in ldc_inst..=32 * ldc_inst, and
//!    every instruction, request and sector count equals a brute-force replay of the kernel's
//!    indexing; pseudo_random's LDC is 32 requests per warp exactly when n is a multiple of 32,
//!    one_access_per_warp's is one request per warp.

use proptest::prelude::*;
use proptest::sample::select;
use sim::config::GpuConfig;
use sim::memory::system::LoadPath;
use sim::memory::system::MemorySystem;
use sim::memory::{coalesce, constant, WarpAccess};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

const RTX3090: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");

fn rtx3090() -> &'static GpuConfig {
    static CFG: OnceLock<GpuConfig> = OnceLock::new();
    CFG.get_or_init(|| GpuConfig::load(Path::new(RTX3090)).expect("configs/rtx3090.toml loads"))
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Regions the lanes' addresses cluster in: a high address, one 32 bytes below a 4 KiB boundary
/// (so small spreads straddle sectors, lines and pages), and a low one.
const BASES: [u64; 3] = [0x7f00_0000_0000, 0x7f00_0000_0fe0, 0x1000_0000];

/// Lane masks: random subsets, full warps, single lanes, partial warps (a prefix, as at the end of
/// a grid) and no lanes at all.
fn mask() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => any::<u32>(),
        2 => Just(u32::MAX),
        1 => (0u32..32).prop_map(|l| 1u32 << l),
        1 => (1u32..32).prop_map(|k| (1u32 << k) - 1),
        1 => Just(0u32),
    ]
}

/// A warp access with `bytes` drawn from `widths`; each lane's address is in one of [`BASES`]
/// plus an offset below a random spread (64 B: heavy collisions .. 1 MiB: scattered), aligned down
/// to `bytes` when `aligned`.
fn access_with(
    widths: Vec<u32>,
    aligned: bool,
    mask: impl Strategy<Value = u32>,
) -> impl Strategy<Value = WarpAccess> {
    (
        mask,
        select(widths),
        select(vec![64u64, 256, 4096, 1 << 20]),
        prop::collection::vec((0..BASES.len(), any::<u64>()), 32),
    )
        .prop_map(move |(mask, bytes, spread, lanes)| {
            let mut addrs = [0u64; 32];
            for (l, (region, off)) in lanes.into_iter().enumerate() {
                let a = BASES[region] + off % spread;
                addrs[l] = if aligned { a - a % u64::from(bytes) } else { a };
            }
            WarpAccess { mask, addrs, bytes }
        })
}

/// Global accesses: widths 1, 2, 4, 8, 16 bytes, naturally aligned (as PTX requires).
fn global_access() -> impl Strategy<Value = WarpAccess> {
    access_with(vec![1, 2, 4, 8, 16], true, mask())
}

/// Constant accesses: widths 1, 2, 4 bytes, aligned (any byte of a word shares the word's request).
fn constant_access() -> impl Strategy<Value = WarpAccess> {
    access_with(vec![1, 2, 4], true, mask())
}

/// A permutation of the 32 lanes.
fn any_permutation() -> impl Strategy<Value = Vec<usize>> {
    Just((0..32).collect::<Vec<usize>>()).prop_shuffle()
}

/// A permutation of the 32 lanes that keeps each lane in its half-warp.
fn half_warp_permutation() -> impl Strategy<Value = Vec<usize>> {
    (
        Just((0..16).collect::<Vec<usize>>()).prop_shuffle(),
        Just((16..32).collect::<Vec<usize>>()).prop_shuffle(),
    )
        .prop_map(|(mut lo, hi)| {
            lo.extend(hi);
            lo
        })
}

// ---------------------------------------------------------------------------------------------
// Brute-force references (independent of sim::memory)
// ---------------------------------------------------------------------------------------------

fn active(a: &WarpAccess, lane: usize) -> bool {
    a.mask & (1u32 << lane) != 0
}

/// Every `seg`-byte segment (as segment number) holding a byte some active lane moves.
fn touched_segments(a: &WarpAccess, seg: u64) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for lane in 0..32 {
        if active(a, lane) {
            for byte in 0..u64::from(a.bytes) {
                out.insert((a.addrs[lane] + byte) / seg);
            }
        }
    }
    out
}

/// Distinct 4-byte words (as word numbers) addressed by the active lanes among `lanes`.
fn distinct_words(a: &WarpAccess, lanes: std::ops::Range<usize>) -> BTreeSet<u64> {
    lanes
        .filter(|&l| active(a, l))
        .map(|l| a.addrs[l] / 4)
        .collect()
}

/// Expected constant requests with `group` lanes per broadcast (32 or 16).
fn expected_constant_requests(a: &WarpAccess, group: usize) -> usize {
    (0..32)
        .step_by(group)
        .map(|start| distinct_words(a, start..start + group).len())
        .sum()
}

/// Lane `i` of `a` moves to lane `perm[i]`, with its mask bit.
fn permute(a: &WarpAccess, perm: &[usize]) -> WarpAccess {
    let mut addrs = [0u64; 32];
    let mut mask = 0u32;
    for (i, &to) in perm.iter().enumerate() {
        addrs[to] = a.addrs[i];
        if active(a, i) {
            mask |= 1u32 << to;
        }
    }
    WarpAccess {
        mask,
        addrs,
        bytes: a.bytes,
    }
}

fn sorted(v: impl AsRef<[u64]>) -> Vec<u64> {
    let mut v = v.as_ref().to_vec();
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------------------------------------
// 1-4: the pure models
// ---------------------------------------------------------------------------------------------

proptest! {
    /// 1. Sectors are exactly the distinct 32-byte segments touched, ascending; lines likewise.
    #[test]
    fn sectors_are_the_distinct_32_byte_segments_touched(a in global_access()) {
        let expected: Vec<u64> = touched_segments(&a, 32).into_iter().map(|s| s * 32).collect();
        let got = coalesce::sectors(&a, 32);
        prop_assert_eq!(got.to_vec(), expected);
        prop_assert_eq!(coalesce::lines(&got, 128), touched_segments(&a, 128).len());
    }

    /// 1b. The same with unaligned addresses: a lane straddling a boundary touches both sectors.
    #[test]
    fn sectors_count_straddling_lanes_twice(a in access_with(vec![2, 4, 8, 16], false, mask())) {
        let expected: Vec<u64> = touched_segments(&a, 32).into_iter().map(|s| s * 32).collect();
        prop_assert_eq!(coalesce::sectors(&a, 32).to_vec(), expected);
    }

    /// 1c. Consecutive elements (every lane, lane l at base + l * bytes), aligned or not: the
    /// fast path gives the distinct segments touched.
    #[test]
    fn consecutive_elements_take_the_segments_they_touch(base in 0u64..1 << 40, bytes in select(vec![1u32, 2, 4, 8, 16])) {
        let a = WarpAccess { mask: u32::MAX, addrs: std::array::from_fn(|l| base + l as u64 * u64::from(bytes)), bytes };
        let expected: Vec<u64> = touched_segments(&a, 32).into_iter().map(|s| s * 32).collect();
        prop_assert_eq!(coalesce::sectors(&a, 32).to_vec(), expected);
    }

    /// 2. Permuting the lanes (addresses and mask together) changes neither the sectors nor the
    /// constant requests (warp-wide broadcast).
    #[test]
    fn counts_are_invariant_under_lane_permutation(a in global_access(), perm in any_permutation()) {
        let p = permute(&a, &perm);
        prop_assert_eq!(p.mask.count_ones(), a.mask.count_ones());
        prop_assert_eq!(coalesce::sectors(&p, 32), coalesce::sectors(&a, 32));
        let (ra, rp) = (constant::requests(&a, 32), constant::requests(&p, 32));
        prop_assert_eq!(rp.len(), ra.len());
        prop_assert_eq!(sorted(rp), sorted(ra));
    }

    /// 2b. Half-warp broadcast (compute 1.x): invariant under permutations within each half-warp.
    #[test]
    fn half_warp_requests_are_invariant_under_in_half_permutation(a in constant_access(), perm in half_warp_permutation()) {
        let p = permute(&a, &perm);
        prop_assert_eq!(constant::requests(&p, 16).len(), constant::requests(&a, 16).len());
        prop_assert_eq!(sorted(constant::requests(&p, 16)), sorted(constant::requests(&a, 16)));
    }

    /// 3. A 4-byte aligned access with at least one active lane takes 1..=32 sectors, and no more
    /// than it has active lanes.
    #[test]
    fn four_byte_access_takes_one_to_32_sectors(a in access_with(vec![4], true, mask().prop_filter("an active lane", |m| *m != 0))) {
        let n = coalesce::sectors(&a, 32).len();
        prop_assert!((1..=32).contains(&n), "{} sectors", n);
        prop_assert!(n <= a.mask.count_ones() as usize, "{} sectors for {} lanes", n, a.mask.count_ones());
    }

    /// 4. Constant requests: distinct words among the active lanes (32), per half-warp (16).
    #[test]
    fn constant_requests_are_distinct_words(a in constant_access()) {
        let warp = constant::requests(&a, 32);
        prop_assert_eq!(warp.len(), expected_constant_requests(&a, 32));
        let words: Vec<u64> = distinct_words(&a, 0..32).into_iter().map(|w| w * 4).collect();
        prop_assert_eq!(sorted(warp), words);
        prop_assert_eq!(constant::requests(&a, 16).len(), expected_constant_requests(&a, 16));
    }
}

// ---------------------------------------------------------------------------------------------
// 5: through the cache hierarchy
// ---------------------------------------------------------------------------------------------

proptest! {
    /// 5. A random sequence of loads and stores on random SMs: lookups add up, `.cg` never hits,
    /// every L1 miss is one L2 sector.
    #[test]
    fn loads_and_stores_through_the_hierarchy(
        ops in prop::collection::vec((global_access(), 0usize..82, any::<bool>(), 0u8..4), 1..8)
    ) {
        let cfg = rtx3090();
        prop_assert_eq!((cfg.l1.sector_bytes, cfg.l2.sector_bytes), (32, 32));
        let mut mem = MemorySystem::new(cfg);
        for (a, sm, cached, kind) in &ops {
            let sectors = touched_segments(a, 32).len() as u32;
            if *kind == 0 {
                let o = mem.store(*sm, a);
                prop_assert_eq!(o.sectors, sectors);
                prop_assert_eq!(o.l2_sectors, sectors);
                prop_assert!(o.l2_hits <= o.l2_sectors);
            } else {
                let o = mem.load(*sm, a, path(*cached));
                prop_assert_eq!(o.sectors, sectors);
                prop_assert_eq!(o.lines, touched_segments(a, 128).len() as u32);
                prop_assert_eq!(o.l1_hits + o.l1_misses, o.sectors);
                if !*cached {
                    prop_assert_eq!(o.l1_hits, 0);
                }
                prop_assert_eq!(o.l2_sectors, o.l1_misses);
                prop_assert!(o.l2_hits <= o.l2_sectors);
            }
        }
    }

    /// 5b. Repeating one access on a cold hierarchy: `.cg` never hits L1 and never fills it (L2
    /// does hit the second time), stores do not allocate in L1, `.ca` hits everything the second
    /// time on the same SM and nothing on another SM.
    #[test]
    fn cg_never_hits_nor_fills_l1(a in access_with(vec![1, 2, 4, 8, 16], true, mask().prop_filter("an active lane", |m| *m != 0)), sm in 0usize..81) {
        let sectors = touched_segments(&a, 32).len() as u32;
        let mut mem = MemorySystem::new(rtx3090());
        let cold = mem.load(sm, &a, LoadPath::L2Only);
        prop_assert_eq!((cold.l1_hits, cold.l1_misses, cold.l2_sectors, cold.l2_hits), (0, sectors, sectors, 0));
        let again = mem.load(sm, &a, LoadPath::L2Only);
        prop_assert_eq!((again.l1_hits, again.l1_misses, again.l2_sectors, again.l2_hits), (0, sectors, sectors, sectors));
        let st = mem.store(sm, &a);
        prop_assert_eq!(st.sectors, sectors);
        let ca = mem.load(sm, &a, path(true));
        prop_assert_eq!((ca.l1_hits, ca.l1_misses), (0, sectors));
        let ca2 = mem.load(sm, &a, path(true));
        prop_assert_eq!((ca2.l1_hits, ca2.l1_misses, ca2.l2_sectors), (sectors, 0, 0));
        let other = mem.load(sm + 1, &a, path(true));
        prop_assert_eq!((other.l1_hits, other.l2_hits), (0, sectors));
    }

    /// 5c. Constant loads through the hierarchy: one request per distinct word (per half-warp with
    /// `constant.broadcast_lanes = 16`), each a hit or a miss.
    #[test]
    fn constant_loads_through_the_hierarchy(
        ops in prop::collection::vec((constant_access(), 0usize..82), 1..6),
        half in any::<bool>(),
    ) {
        let mut cfg = rtx3090().clone();
        let group = if half { 16 } else { 32 };
        cfg.constant.broadcast_lanes = group as _;
        let mut mem = MemorySystem::new(&cfg);
        for (a, sm) in &ops {
            let o = mem.constant_load(*sm, a);
            prop_assert_eq!(o.requests as usize, expected_constant_requests(a, group));
            prop_assert_eq!(o.hits + o.misses, o.requests);
            prop_assert_eq!(o.served.len(), o.requests as usize);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 6: end to end
// ---------------------------------------------------------------------------------------------

/// What one add_constant launch should count, replayed from the kernel's indexing.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    /// Warps with at least one thread `i < n` (each executes every memory instruction once).
    warps: u64,
    /// Distinct `values` indices per warp, summed (= LDC requests).
    index_words: u64,
    /// Distinct 32-byte sectors of `values[index]` per warp, summed.
    index_sectors: u64,
    /// Distinct 32-byte sectors of `inputs[i]` (and `sums[i]`) per warp, summed.
    elem_sectors: u64,
}

/// `index_<pattern>()` of add_constant.cu.
fn index(pattern: &str, block: u64, tid: u64) -> u64 {
    const N: u64 = 16384;
    match pattern {
        "one_access_per_block" => block % N,
        "one_access_per_warp" => (tid / 32) % N,
        "one_access_per_thread" => tid % N,
        "pseudo_random" => (tid * 1357) % N,
        p => panic!("no index function for {p}"),
    }
}

/// Replays `sums[i] = inputs[i] + values[index]` for `n` threads in blocks of 1024. Buffers are
/// 256-byte aligned and `const_values` starts the constant bank, so an int at index `k` is word
/// `k` and sector `k / 8` of its array.
fn expected(pattern: &str, n: u64) -> Expected {
    let mut e = Expected::default();
    for block in 0..n.div_ceil(1024) {
        for warp in 0..32u64 {
            let threads: Vec<(u64, u64)> = (0..32)
                .map(|l| warp * 32 + l)
                .map(|tid| (block * 1024 + tid, tid))
                .filter(|&(i, _)| i < n)
                .collect();
            if threads.is_empty() {
                continue;
            }
            e.warps += 1;
            let idx: BTreeSet<u64> = threads
                .iter()
                .map(|&(_, tid)| index(pattern, block, tid))
                .collect();
            e.index_words += idx.len() as u64;
            e.index_sectors += idx.iter().map(|k| k / 8).collect::<BTreeSet<_>>().len() as u64;
            e.elem_sectors += threads
                .iter()
                .map(|&(i, _)| i / 8)
                .collect::<BTreeSet<_>>()
                .len() as u64;
        }
    }
    e
}

const WORKLOADS: [&str; 4] = [
    "one_access_per_block",
    "one_access_per_thread",
    "one_access_per_warp",
    "pseudo_random",
];

/// n from 2048 up: arbitrary (partial warps and blocks), or a multiple of 32 (full warps only).
fn small_n() -> impl Strategy<Value = u64> {
    prop_oneof![
        (0u64..3000).prop_map(|x| 2048 + x),
        (0u64..94).prop_map(|k| 2048 + 32 * k)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// 6. End to end: requests are one per instruction, and every count matches the replay.
    #[test]
    fn add_constant_counts_end_to_end(n in small_n()) {
        let cfg = rtx3090();
        for name in WORKLOADS {
            let w = sim::workload::Workload::resolve(name).expect("bundled workload");
            let opts = sim::run::Options { sets: vec![("n".into(), n as i64)], ..Default::default() };
            let run = sim::run::run_workload(cfg, &w, &opts).expect("runs");
            let e = expected(name, n);
            prop_assert_eq!(run.launches.len(), 2);
            for l in &run.launches {
                let c = &l.counters;
                let ctx = format!("{name} n={n} launch {}: {c:?}", l.label);
                // Requests are one per instruction.
                prop_assert_eq!(c.global_ld_requests, c.global_ld_inst, "{}", ctx);
                prop_assert_eq!(c.global_st_requests, c.global_st_inst, "{}", ctx);
                prop_assert!(c.ldc_inst <= c.ldc_requests && c.ldc_requests <= 32 * c.ldc_inst, "{}", ctx);
                prop_assert_eq!(c.l1_ld_hits + c.l1_ld_misses, c.global_ld_sectors, "{}", ctx);
                // Every count matches the replay.
                prop_assert_eq!(c.global_st_inst, e.warps, "{}", ctx);
                prop_assert_eq!(c.global_st_sectors, e.elem_sectors, "{}", ctx);
                match l.label.as_str() {
                    "constant" => {
                        prop_assert_eq!(c.ldc_inst, e.warps, "{}", ctx);
                        prop_assert_eq!(c.ldc_requests, e.index_words, "{}", ctx);
                        prop_assert_eq!(c.global_ld_inst, e.warps, "{}", ctx);
                        prop_assert_eq!(c.global_ld_sectors, e.elem_sectors, "{}", ctx);
                        if name == "pseudo_random" {
                            prop_assert_eq!(c.ldc_requests == 32 * c.ldc_inst, n % 32 == 0, "{}", ctx);
                        }
                        if name == "one_access_per_warp" || name == "one_access_per_block" {
                            prop_assert_eq!(c.ldc_requests, c.ldc_inst, "{}", ctx);
                        }
                    }
                    "global" => {
                        prop_assert_eq!(c.ldc_inst, 0, "{}", ctx);
                        prop_assert_eq!(c.global_ld_inst, 2 * e.warps, "{}", ctx);
                        prop_assert_eq!(c.global_ld_sectors, e.elem_sectors + e.index_sectors, "{}", ctx);
                    }
                    other => prop_assert!(false, "unexpected launch {}", other),
                }
            }
        }
    }
}

/// The `.ca` path when `cached`, else `.cg`.
fn path(cached: bool) -> LoadPath {
    if cached {
        LoadPath::L1 { evict_first: false }
    } else {
        LoadPath::L2Only
    }
}

proptest! {
    /// The Best Practices Guide's two textbook cases at any 128-byte-aligned base: 32 consecutive
    /// aligned 4-byte words take exactly 4 sectors, and the same warp misaligned by one word 5.
    #[test]
    fn consecutive_words_take_four_sectors_and_five_when_misaligned(line in 0u64..1 << 30) {
        let base = line * 128;
        let aligned = WarpAccess::from_fn(4, |l| base + 4 * l);
        let shifted = WarpAccess::from_fn(4, |l| base + 4 + 4 * l);
        prop_assert_eq!(sim::memory::coalesce::sectors(&aligned, 32).len(), 4);
        prop_assert_eq!(sim::memory::coalesce::sectors(&shifted, 32).len(), 5);
    }
}
