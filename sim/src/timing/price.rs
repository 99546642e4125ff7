//! Prices what the functional pass recorded of an access the SM served ([`Served`]): the
//! latencies of constant operands, shared-memory accesses, L1 hits, L2 acknowledgements and the
//! LDCs the constant caches served, and the constant-pipe work of those LDCs. The functional
//! pass says where an access was served; this is where that becomes cycles, once per block log,
//! before the replay reads it.

use super::Costs;
use crate::trace::{BlockLog, Lat, Served};

/// The latency in SM cycles of an access served as `s`; `ldc_lats` are those of the block's
/// [`BlockLog::ldcs`], in order.
#[inline]
pub fn latency(costs: &Costs, s: Served, ldc_lats: &[u32]) -> u32 {
    match s {
        Served::Operand => costs.imc,
        Served::Shared { wavefronts } => costs.shared_access(wavefronts),
        Served::L1 => costs.global(crate::memory::Level::Cache(0)),
        Served::Acknowledged => costs.l2,
        Served::Ldc(i) => ldc_lats[i],
    }
}

/// Prices `log`: every [`Lat::Served`] of its streams and global accesses becomes its latency
/// ([`Lat::Cycles`]), and the constant-pipe work of its LDCs that the constant caches served
/// goes onto `log.ldc[0]`, in issue order. A log priced already is left as it is.
pub fn price(costs: &Costs, log: &mut BlockLog, ldc_lats: &mut Vec<u32>) {
    ldc_lats.clear();
    for r in &log.ldcs {
        let (lat, work) = if r.start == r.end {
            costs.constant_costs_near(r.requests, r.misses)
        } else {
            costs.constant_costs(&log.levels[r.start as usize..r.end as usize])
        };
        ldc_lats.push(lat);
        if costs.sass.at(r.pc).ldc > 0 {
            log.ldc[0].push(work);
        }
    }
    log.ldcs.clear();
    let priced = |lat: &mut u32| {
        if Lat::is_served(*lat) {
            if let Lat::Served(s) = Lat::of(*lat) {
                *lat = latency(costs, s, ldc_lats);
            }
        }
    };
    for m in &mut log.mems {
        priced(&mut m.lat);
    }
    for w in &mut log.warps {
        for e in w {
            priced(&mut e.lat);
        }
    }
}
