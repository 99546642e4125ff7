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
            log.const_far += u64::from(r.misses);
            costs.constant_costs_near(r.requests, r.misses)
        } else {
            let levels = &log.levels[r.start as usize..r.end as usize];
            log.const_far += far_requests(levels);
            costs.constant_costs(levels)
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

/// How many of the `served` requests of an LDC missed the SM's nearest constant cache.
pub fn far_requests(served: &[crate::memory::Level]) -> u64 {
    served
        .iter()
        .filter(|l| !matches!(l, crate::memory::Level::Cache(0)))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Level;
    use crate::timing::tests::h200_costs as h200;
    use crate::trace::{Entry, MemRec};

    #[test]
    fn served_accesses_get_the_config_s_latencies() {
        // Which of configs/h200.toml's latencies each kind gets (the values are the config's).
        let costs = h200();
        let mut log = BlockLog::default();
        let near = log.ldc_served(0, 4, 1, &[]);
        let far = log.ldc_served(0, 2, 2, &[Level::Cache(1), Level::Cache(2)]);
        let entry = |lat| Entry { pc: 0, lat };
        log.warps = vec![vec![
            entry(Served::Operand.lat()),
            entry(Served::Shared { wavefronts: 3 }.lat()),
            entry(near),
            entry(far),
            entry(Served::Acknowledged.lat()),
            entry(7),
        ]];
        let rec = MemRec {
            lat: Served::L1.lat(),
            dwf: 1,
            start: 0,
            end: 0,
            lines: 1,
            store: false,
            hit: true,
        };
        log.mems.push(rec);
        price(&costs, &mut log, &mut Vec::new());
        let lats: Vec<u32> = log.warps[0].iter().map(|e| e.lat).collect();
        let near_lat = costs.constant_costs_near(4, 1).0;
        let far_lat = costs.constant_load(&[Level::Cache(1), Level::Cache(2)]);
        assert_eq!(
            lats,
            [costs.imc, costs.shared + 2, near_lat, far_lat, costs.l2, 7]
        );
        assert_eq!(log.mems[0].lat, costs.l1);
        assert!(log.ldcs.is_empty(), "priced once");
        // A 4-request LDC: its latency is at least the second level's, its requests 2 cycles
        // apart (0.5 addresses per cycle).
        assert!(near_lat >= costs.constant[1]);
        assert_eq!(
            costs.constant_costs_near(4, 1).0 - costs.constant_costs_near(1, 1).0,
            6
        );
    }

    #[test]
    fn every_served_kind_survives_its_packing() {
        for s in [
            Served::Operand,
            Served::Shared { wavefronts: 1 },
            Served::Shared {
                wavefronts: (1 << 26) - 1,
            },
            Served::L1,
            Served::Acknowledged,
            Served::Ldc(12345),
        ] {
            assert!(Lat::is_served(s.lat()) && !Lat::is_cycles(s.lat()));
            assert_eq!(Lat::of(s.lat()), Lat::Served(s));
        }
        assert_eq!(Lat::of(283), Lat::Cycles(283));
    }
}
