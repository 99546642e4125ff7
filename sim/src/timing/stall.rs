//! Where the time goes: the warp states of the timing replay, per instruction, under Nsight
//! Compute's names.
//!
//! Nsight Compute samples each warp's state (issued, or why it could not issue) every few
//! cycles and reports the samples per reason (`smsp__pcsamp_warps_issue_stalled_<reason>`) and
//! per instruction (the Source page). The replay ([`super::replay`]) knows each warp's
//! timeline exactly, so it counts every cycle: from one cycle after the warp's latest issue to
//! its next issue, a warp is
//!
//! - stalled on the dependency that made its next instruction wait, by the kind of the
//!   instruction that produced the late register: a global, local or atomic access
//!   (`long_scoreboard`, split by the level that served it: L1 hit, L2, DRAM), shared memory,
//!   a shuffle, `ldmatrix` or an indexed constant load (LDC) through the MIO
//!   (`short_scoreboard`; a bank-conflicted access's extra wavefronts are in its latency), a
//!   constant operand or kernel parameter (`imc_miss`), an ALU result (`wait`, the fixed-latency
//!   dependency);
//! - `math_pipe_throttle` while its next instruction, ready, waits for a busy execution pipe (a
//!   tensor instruction for its sub-partition's tensor pipe; the HMMA/IMMA result itself is a
//!   fixed-latency dependency, `wait`: ptxas gives it no scoreboard);
//! - then `not_selected` for the cycles its scheduler issued another warp's instruction;
//! - `selected` for each issue slot it took;
//! - `barrier` from a `bar.sync`'s issue to its block's release;
//! - `drain` from its last issue until its stores are acknowledged (and its last results are
//!   ready).
//!
//! Reasons ncu has and the replay does not model (instruction fetch, other pipe and queue throttles,
//! branch resolution, memory barriers, sleeping) are not reported, rather than reported as 0.
//! Cycles are warp-cycles: every warp of the SM counts each of its cycles once, as a sampling
//! interval of one cycle would; ncu's `smsp__average_warp_latency_issue_stalled_<reason>.ratio`
//! and `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio` are these cycles over
//! the SASS instructions issued (a scheduler issues at most one per cycle, so its issue-active
//! cycles are its issued instructions), \[doc\] Nsight Compute Kernel Profiling Guide, "Warp
//! Scheduler States" and "Metrics Reference".

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A warp state, an index into [`Stalls`].
pub type Why = u8;

/// Issued an instruction (one per issue slot).
pub const SELECTED: Why = 0;
/// Ready, but its scheduler issued another warp's instruction.
pub const NOT_SELECTED: Why = 1;
/// Waiting for a global or local load that hit L1.
pub const LONG_L1: Why = 2;
/// Waiting for a global or local load (or an atomic) that L2 served.
pub const LONG_L2: Why = 3;
/// Waiting for a global or local load (or an atomic) that went to DRAM.
pub const LONG_DRAM: Why = 4;
/// Waiting for a shared-memory access, shuffle, `ldmatrix` or LDC (the MIO).
pub const SHORT: Why = 5;
/// Waiting for a constant operand or kernel parameter (the immediate constant cache).
pub const IMC: Why = 6;
/// Waiting for an ALU result (a fixed-latency dependency).
pub const WAIT: Why = 7;
/// Waiting at `bar.sync` for the other warps of its block.
pub const BARRIER: Why = 8;
/// Done issuing, waiting for its stores to be acknowledged.
pub const DRAIN: Why = 9;
/// Waiting for its issue floor with no late register (after a branch or a skipped region).
pub const MISC: Why = 10;
/// Ready, but the execution pipe it needs is busy: a tensor instruction waiting for its
/// sub-partition's tensor pipe ([`super::tensor`]).
pub const MATH_PIPE_THROTTLE: Why = 11;

/// Warp states counted.
pub const STATES: usize = 12;

/// The reason part of each state's Nsight Compute name, in [`Why`] order; the three
/// long-scoreboard levels are the simulator's own split of `long_scoreboard`.
pub const NAMES: [&str; STATES] = [
    "selected",
    "not_selected",
    "long_scoreboard_l1",
    "long_scoreboard_l2",
    "long_scoreboard_dram",
    "short_scoreboard",
    "imc_miss",
    "wait",
    "barrier",
    "drain",
    "misc",
    "math_pipe_throttle",
];

/// The reasons reported per launch under ncu's names: (reason, the states summed).
pub const REASONS: [(&str, &[Why]); 11] = [
    ("long_scoreboard", &[LONG_L1, LONG_L2, LONG_DRAM]),
    ("short_scoreboard", &[SHORT]),
    ("imc_miss", &[IMC]),
    ("wait", &[WAIT]),
    ("barrier", &[BARRIER]),
    ("drain", &[DRAIN]),
    ("not_selected", &[NOT_SELECTED]),
    ("selected", &[SELECTED]),
    ("misc", &[MISC]),
    ("math_pipe_throttle", &[MATH_PIPE_THROTTLE]),
    // Not an ncu reason: the L1-hit part of long_scoreboard, listed for the table.
    ("long_scoreboard_l1", &[LONG_L1]),
];

/// Warp-cycles per warp state of one instruction (or line, or launch): index [`Why`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stalls(pub [u64; STATES]);

impl Stalls {
    /// Adds `o`'s cycles.
    pub fn add(&mut self, o: &Stalls) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }

    /// Every warp-cycle counted: the time the warps spent, issuing or not.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Warp-cycles of a reason of [`REASONS`] (its states summed); 0 for an unknown name.
    pub fn reason(&self, name: &str) -> u64 {
        REASONS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, ws)| {
                ws.iter().map(|&w| self.0[usize::from(w)]).sum()
            })
    }

    /// The reasons other than `selected` with cycles, most cycles first (ties in
    /// [`REASONS`] order), without the `long_scoreboard_l1` part: what held the warps up.
    pub fn top(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = REASONS
            .iter()
            .filter(|(n, _)| *n != "selected" && *n != "long_scoreboard_l1")
            .map(|(n, _)| (*n, self.reason(n)))
            .filter(|&(_, c)| c > 0)
            .collect();
        v.sort_by_key(|x| std::cmp::Reverse(x.1));
        v
    }

    /// Extrapolates a sampled launch ([`crate::trace::sampled`]): the part between `first` and
    /// `snap` scaled by `factor`.
    pub fn extrapolate(&mut self, first: &Stalls, snap: &Stalls, factor: f64) {
        for i in 0..STATES {
            let (a, b) = (first.0[i], snap.0[i]);
            self.0[i] = crate::trace::sampled(a, b, self.0[i], factor);
        }
    }

    /// The per-launch metrics of these cycles over `issued` SASS instructions, under ncu's
    /// names: `smsp__pcsamp_warps_issue_stalled_<reason>` (warp-cycles),
    /// `smsp__average_warp_latency_issue_stalled_<reason>.ratio` and
    /// `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio` (cycles per issue;
    /// `null` with no issue), plus the simulator's own `sim__warps_issue_stalled_<state>` of the
    /// long-scoreboard levels.
    pub fn metrics(&self, issued: u64) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let per = |c: u64| {
            if issued == 0 {
                serde_json::Value::Null
            } else {
                serde_json::Value::from(c as f64 / issued as f64)
            }
        };
        for (name, _) in REASONS.iter().filter(|(n, _)| *n != "long_scoreboard_l1") {
            let c = self.reason(name);
            m.insert(format!("smsp__pcsamp_warps_issue_stalled_{name}"), c.into());
            m.insert(
                format!("smsp__average_warp_latency_issue_stalled_{name}.ratio"),
                per(c),
            );
            m.insert(
                format!("smsp__average_warps_issue_stalled_{name}_per_issue_active.ratio"),
                per(c),
            );
        }
        for w in [LONG_L1, LONG_L2, LONG_DRAM] {
            let name = NAMES[usize::from(w)];
            m.insert(
                format!("sim__warps_issue_stalled_{name}"),
                self.0[usize::from(w)].into(),
            );
        }
        m
    }
}

impl Serialize for Stalls {
    /// `{"selected": 12, "not_selected": 3, ...}`: warp-cycles per state of [`NAMES`].
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(STATES))?;
        for (n, v) in NAMES.iter().zip(self.0) {
            m.serialize_entry(n, &v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_sum_their_states_and_top_orders_by_cycles() {
        let mut s = Stalls::default();
        s.0[usize::from(LONG_L2)] = 5;
        s.0[usize::from(LONG_DRAM)] = 7;
        s.0[usize::from(BARRIER)] = 9;
        s.0[usize::from(SELECTED)] = 100;
        assert_eq!(s.reason("long_scoreboard"), 12);
        assert_eq!(s.top(), vec![("long_scoreboard", 12), ("barrier", 9)]);
        assert_eq!(s.total(), 121);
        let m = s.metrics(4);
        assert_eq!(m["smsp__pcsamp_warps_issue_stalled_long_scoreboard"], 12);
        assert_eq!(
            m["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"],
            2.25
        );
        assert_eq!(m["sim__warps_issue_stalled_long_scoreboard_dram"], 7);
    }
}
