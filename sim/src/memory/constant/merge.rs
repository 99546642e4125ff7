//! The IDC serves the indexed constant loads of an SM's sub-partitions (SMSPs) interleaved,
//! address by address, so warps of different SMSPs that issue the same LDC together share each
//! line fill.
//!
//! Measured on an H200 (`validate/measurements/h200/ubench/const_sets.cu`, "constant cache sets"
//! in its README): a warp whose k = 32 addresses 128 bytes apart cycle through 4 sets of the
//! 8-set x 4-way constant L1 misses every request when it runs alone (the LRU's cyclic
//! thrash: `idc__requests_lookup_miss.sum` = 100% of `idc__requests.sum`), but with 8 or 16 warps
//! per SM the same pattern misses 31% and 22%: about one request in four, one per SMSP's warp.
//! Served one warp's LDC after another's, the LRU would thrash for every warp; served address by
//! address across the four SMSPs' queues, the first of the four lookups of a line fills it and
//! the three that follow hit it.
//!
//! The functional pass runs one warp's LDC at a time ([`crate::exec::turns`]); [`Merge`] keeps,
//! per LDC, the lines of the last warp that led it (its "wave") and the SMSPs whose warps have
//! joined it since. A warp of an SMSP that has not joined, issuing the same LDC within
//! [`Issue::window`] cycles of the leader, joins: each of its requests to the line the leader looked up
//! at the same position is a hit on that line (it came right after the leader's in the IDC, so
//! nothing in between evicted it, and the cache's recency order is the one the leader left);
//! its other requests are looked up as usual. A warp of an SMSP already in the wave (the next
//! warp in that SMSP's queue), or one too late, leads a new wave.

/// How many LDCs (by PC) keep a wave at once: a loop body's independent loads (ptxas unrolls
/// const_walk's loop by 4).
const WAVES: usize = 8;

/// Who issues an LDC: the instruction, the warp's scheduler (SMSP: the warp's number on the SM
/// modulo the schedulers, as [`crate::timing::Pace`] and the replay number them) and the cycle
/// its turn began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue {
    /// The LDC's PTX instruction index.
    pub pc: u32,
    /// The warp's SMSP (0 to 31).
    pub scheduler: u32,
    /// The functional pass's estimate of the cycle (SM clock) the warp's turn began.
    pub cycle: u64,
    /// Cycles from the leader's `cycle` within which a warp of another SMSP issuing the same
    /// LDC joins its wave ([`crate::config::schema::Constant::smsp_merge_cycles`]).
    pub window: u64,
    /// Cycles a fill from the next constant level is pending (that level's latency,
    /// [`super::fills`]).
    pub fill: u64,
    /// Cycles between two requests of one LDC in the IDC (`1 / addresses_per_cycle`).
    pub spacing: u64,
}

/// The lines the leader of one LDC's wave looked up, in request order.
#[derive(Debug, Clone)]
struct Wave {
    pc: u32,
    /// SMSPs whose warps are in the wave (bit per scheduler).
    joined: u32,
    cycle: u64,
    n: u8,
    lines: [u64; 32],
}

/// The waves of one SM's IDC (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Merge {
    waves: Vec<Wave>,
}

impl Merge {
    /// Forgets every wave (a launch or a wave of blocks starts).
    pub fn clear(&mut self) {
        self.waves.clear();
    }

    /// Warp `who` issues an LDC whose requests are `words[..n]` on lines of `1 << line_shift`
    /// bytes. Returns, bit `r` per request, those that hit by sharing the wave's line fill (none
    /// when the warp leads a new wave, which then records its lines).
    pub fn issue(&mut self, who: Issue, words: &[u64; 32], n: usize, line_shift: u32) -> u32 {
        let n = n.min(32);
        let bit = 1u32 << (who.scheduler & 31);
        let slot = self.waves.iter().position(|w| w.pc == who.pc);
        if let Some(w) = slot.map(|s| &mut self.waves[s]) {
            if w.joined & bit == 0 && who.cycle.abs_diff(w.cycle) <= who.window {
                w.joined |= bit;
                let mut shared = 0;
                for (r, &word) in words[..n.min(usize::from(w.n))].iter().enumerate() {
                    if word >> line_shift == w.lines[r] {
                        shared |= 1 << r;
                    }
                }
                return shared;
            }
        }
        let mut lines = [u64::MAX; 32];
        for (l, &word) in lines.iter_mut().zip(&words[..n]) {
            *l = word >> line_shift;
        }
        let wave = Wave {
            pc: who.pc,
            joined: bit,
            cycle: who.cycle,
            n: n as u8,
            lines,
        };
        match slot {
            Some(s) => self.waves[s] = wave,
            None if self.waves.len() < WAVES => self.waves.push(wave),
            None => {
                // The wave begun longest ago makes room.
                let oldest = (0..self.waves.len())
                    .min_by_key(|&s| self.waves[s].cycle)
                    .unwrap_or(0);
                self.waves[oldest] = wave;
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(k: u64, stride: u64) -> [u64; 32] {
        std::array::from_fn(|l| (l as u64 % k) * stride)
    }

    #[test]
    fn warps_of_other_smsps_share_the_leaders_lines_and_the_next_warp_of_an_smsp_leads() {
        let mut m = Merge::default();
        let w = words(32, 128);
        let at = |scheduler, cycle| Issue {
            pc: 7,
            scheduler,
            cycle,
            window: 256,
            fill: 98,
            spacing: 2,
        };
        assert_eq!(m.issue(at(0, 0), &w, 32, 6), 0, "the first warp leads");
        assert_eq!(m.issue(at(1, 3), &w, 32, 6), u32::MAX);
        assert_eq!(m.issue(at(2, 3), &w, 16, 6), 0xffff, "16 requests");
        assert_eq!(
            m.issue(at(0, 9), &w, 32, 6),
            0,
            "SMSP 0 is in the wave: a new one"
        );
        assert_eq!(m.issue(at(1, 9), &w, 32, 6), u32::MAX);
        assert_eq!(m.issue(at(2, 9 + 257), &w, 32, 6), 0, "too late: leads");
    }

    #[test]
    fn an_sm_thrashing_alone_shares_fills_across_smsps() {
        // 32 words 128 B apart: 8 lines in each of 4 sets of the H200's 4-way constant L1, the
        // LRU's cyclic thrash for a warp alone; warps of SMSPs 1-3 at the same LDC hit every
        // request, the next warp of SMSP 0 leads and misses every one again.
        use crate::config::GpuConfig;
        use crate::memory::system::{ConstLevelsOutcome, MemorySystem};
        use crate::memory::{Level, WarpAccess};
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml");
        let cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        let mut mem = MemorySystem::new(&cfg);
        let p = mem.params;
        let sm = &mut mem.sms[0];
        let a = WarpAccess::from_fn(4, |l| 128 * l);
        let mut o = ConstLevelsOutcome::default();
        let misses = |sm: &mut crate::memory::system::SmCaches, o: &mut ConstLevelsOutcome, s| {
            let who = Issue {
                pc: 3,
                scheduler: s,
                cycle: 10 * u64::from(s),
                window: 256,
                fill: 98,
                spacing: 2,
            };
            sm.constant_load_issued_into(&p, &a, who, o);
            assert_eq!((o.requests, o.hits + o.misses), (32, 32));
            o.misses
        };
        for s in [0, 1, 2, 3, 0, 1] {
            let want = if s == 0 { 32 } else { 0 };
            assert_eq!(misses(sm, &mut o, s), want, "SMSP {s}");
        }
        assert!(o.served.iter().all(|&l| l == Level::Cache(0)));
        // Half the lanes on lines of their own: those 16 are looked up (and miss), in order.
        let b = WarpAccess::from_fn(4, |l| 128 * l + if l >= 16 { 32768 } else { 0 });
        let who = Issue {
            pc: 3,
            scheduler: 2,
            cycle: 50,
            window: 256,
            fill: 98,
            spacing: 2,
        };
        sm.constant_load_issued_into(&p, &b, who, &mut o);
        assert_eq!((o.requests, o.hits, o.misses), (32, 16, 16));
        assert_eq!(o.served[15], Level::Cache(0));
        assert_ne!(o.served[16], Level::Cache(0));
    }

    #[test]
    fn only_requests_to_the_leaders_line_at_the_same_position_share() {
        let mut m = Merge::default();
        let at = |scheduler| Issue {
            pc: 1,
            scheduler,
            cycle: 0,
            window: 256,
            fill: 98,
            spacing: 2,
        };
        m.issue(at(0), &words(32, 128), 32, 6);
        // Lanes 0..16 read the leader's lines 0..16; lanes 16..32 read them again (lines 0..16).
        assert_eq!(m.issue(at(1), &words(16, 128), 32, 6), 0xffff);
        // Another LDC has a wave of its own.
        let other = Issue { pc: 2, ..at(1) };
        assert_eq!(m.issue(other, &words(32, 128), 32, 6), 0);
    }
}
