//! Where the time goes, in the reports: a launch's warp states ([`crate::timing::stall`]) as a
//! line of the table, as JSON under Nsight Compute's names, and each line's share of the time
//! with its top stall reasons.

use crate::run::LaunchResult;
use crate::timing::stall::{Stalls, LONG_DRAM, LONG_L1, LONG_L2};
use serde_json::{json, Value};

/// The warp states of launch `l`: its instructions' summed.
pub fn launch_stalls(l: &LaunchResult) -> Stalls {
    let mut s = Stalls::default();
    for (_, _, p) in &l.per_pc {
        s.add(&p.stalls);
    }
    s
}

/// `a` as a percentage of `b`, one decimal (`-` when `b` is 0).
fn pct(a: u64, b: u64) -> String {
    super::format::share(a, b, 1)
}

/// The top `n` stall reasons of `s` with their shares of its warp-cycles, `, `-separated
/// (`long_scoreboard 80.1%, wait 9.0%`); `-` when nothing stalled.
pub fn top_text(s: &Stalls, n: usize) -> String {
    let total = s.total();
    let v: Vec<String> = (s.top().into_iter().take(n))
        .map(|(r, c)| format!("{r} {}", pct(c, total)))
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

/// One line of the table saying where launch `l`'s warps spent their time, with the levels of
/// the long scoreboard.
pub fn summary(l: &LaunchResult) -> String {
    let s = launch_stalls(l);
    let total = s.total();
    if total == 0 {
        return format!("{}: warp states: none replayed", l.label);
    }
    let long = s.reason("long_scoreboard");
    let levels = if long > 0 {
        let part = |w: u8, name: &str| {
            let c = s.0[usize::from(w)];
            (c > 0).then(|| format!("{name} {}", pct(c, total)))
        };
        let v: Vec<String> = [
            part(LONG_L1, "L1 hit"),
            part(LONG_L2, "L2"),
            part(LONG_DRAM, "DRAM"),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(" (long_scoreboard: {})", v.join(", "))
    } else {
        String::new()
    };
    format!(
        "{}: where the warps' time goes (Nsight Compute's warp states): selected {}, stalled on {}{levels}; {:.1} cycles per issued instruction{}",
        l.label,
        pct(s.reason("selected"), total),
        top_text(&s, 4),
        total as f64 / s.reason("selected").max(1) as f64,
        beyond(l).map_or(String::new(), |n| format!("; {n}")),
    )
}

/// What the warp states leave out when a throughput bound, not the replay's timeline, set the
/// launch's time: the replay does not queue warps at that unit, so its waits (ncu's throttle
/// reasons) are not among them.
pub fn beyond(l: &LaunchResult) -> Option<String> {
    let b = l.timing.bound;
    let cycles = |n: &str| (l.timing.bounds.iter()).find(|(k, _)| *k == n).map(|x| x.1);
    let (Some(set), Some(lat)) = (cycles(b), cycles("latency")) else {
        return None;
    };
    (b != "latency" && set > lat).then(|| {
        format!(
            "the {b} bound ({set:.0} cycles) set the time, beyond the replay's timeline ({lat:.0}): \
the warps' queueing at that unit is not in these states"
        )
    })
}

/// The JSON `warp_states` object of launch `l`: its warp-cycles and ncu's per-reason metrics
/// ([`Stalls::metrics`]).
pub fn launch_json(l: &LaunchResult) -> Value {
    let s = launch_stalls(l);
    let issued = s.reason("selected");
    json!({
        "warp_cycles": s.total(),
        "issued": issued,
        "top": s.top().into_iter().map(|(r, c)| json!({"reason": r, "cycles": c})).collect::<Vec<_>>(),
        "metrics": s.metrics(issued),
        "not_covered": beyond(l),
    })
}
