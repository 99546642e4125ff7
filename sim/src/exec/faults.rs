//! The memory errors of a launch, as compute-sanitizer's memcheck lists them: every distinct
//! error, not only the first.
//!
//! An access that a GPU would fault on (outside every allocation or state space, misaligned, a
//! write to read-only memory) is recorded, and the warp goes on past the instruction without
//! it (from the faulting lane on, a load leaves the destinations as they were, a store and an
//! atomic write nothing).
//! Errors are told apart by the instruction and the kind of access, as memcheck's by the line:
//! the first occurrence of each is reported with its thread, block and address, and how many
//! warp instructions made it. At most the launch's limit of distinct errors
//! ([`crate::exec::barrier::Checks::memcheck_limit`], default [`MAX_DISTINCT`], `sim run
//! --memcheck-limit N`) are kept per SM and listed. The launch
//! runs to its end and then fails with all of them ([`report`]); its counters and time are not
//! reported.

use crate::error::Error;

/// The most distinct errors an SM keeps and a launch's report lists, unless the launch says
/// otherwise.
pub const MAX_DISTINCT: usize = 100;

/// One distinct error: its first occurrence and how often it occurred.
#[derive(Debug, Clone)]
pub struct Fault {
    /// The linear block index of the first occurrence.
    pub block: u64,
    /// Its instruction.
    pub pc: u32,
    /// The kind of access (`read`, `misaligned write`, ...).
    pub what: &'static str,
    /// The first occurrence, as memcheck reports it: instruction, PTX line, thread, address,
    /// nearest buffer.
    pub message: String,
    /// Warp instructions that made this error (the first included; each counts once, at its
    /// first faulting lane).
    pub count: u64,
}

/// The errors one SM recorded.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// In the order they first occurred on the SM.
    pub list: Vec<Fault>,
    /// Warp instructions that made an error of a kind not kept (the limit was reached).
    pub dropped: u64,
}

impl Faults {
    /// Counts one more occurrence of the error at `pc` of kind `what` if it is known; `false`
    /// when it is new (the caller then builds its message and [`Faults::push`]es it), `true`
    /// when it was counted (or the SM has no room for another distinct error, `limit` of them
    /// kept: it is dropped).
    pub fn counted(&mut self, pc: u32, what: &'static str, limit: usize) -> bool {
        if let Some(f) = self.list.iter_mut().find(|f| f.pc == pc && f.what == what) {
            f.count += 1;
            return true;
        }
        let full = self.list.len() >= limit;
        self.dropped += u64::from(full);
        full
    }

    /// Adds a new distinct error.
    pub fn push(&mut self, block: u64, pc: u32, what: &'static str, message: String) {
        self.list.push(Fault {
            block,
            pc,
            what,
            message,
            count: 1,
        });
    }

    /// Whether no error was recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The distinct errors of all the SMs of a launch (each SM's in its order), the earliest block
/// first and each error once (its first occurrence, the counts added).
pub fn merge(sms: impl IntoIterator<Item = Faults>) -> Vec<Fault> {
    merge_counted(sms).0
}

/// [`merge`], and the warp instructions whose errors no SM kept ([`Faults::dropped`]).
pub fn merge_counted(sms: impl IntoIterator<Item = Faults>) -> (Vec<Fault>, u64) {
    let mut dropped = 0;
    let mut all: Vec<Fault> = (sms.into_iter())
        .flat_map(|f| {
            dropped += f.dropped;
            f.list
        })
        .collect();
    // Stable: within a block, the SM's order.
    all.sort_by_key(|f| f.block);
    let mut out: Vec<Fault> = vec![];
    for f in all {
        match out.iter_mut().find(|o| o.pc == f.pc && o.what == f.what) {
            Some(o) => o.count += f.count,
            None => out.push(f),
        }
    }
    (out, dropped)
}

/// The error of launch `launch` with the distinct memory errors `faults` (at least one): one
/// error as before when there is one, else the number of errors and each (up to
/// `limit`), on one line.
pub fn report(launch: &str, faults: &[Fault], limit: usize) -> Error {
    report_dropped(launch, faults, limit, 0)
}

/// [`report`], saying how many warp instructions (`dropped`) made errors beyond the limit.
pub fn report_dropped(launch: &str, faults: &[Fault], limit: usize, dropped: u64) -> Error {
    let times = |n: u64| {
        if n > 1 {
            format!(" (in {n} warp instructions)")
        } else {
            String::new()
        }
    };
    let message = match faults {
        [one] => format!("{}{}", one.message, times(one.count)),
        _ => {
            let listed: Vec<String> = faults
                .iter()
                .take(limit)
                .enumerate()
                .map(|(i, f)| format!("[{}] {}{}", i + 1, f.message, times(f.count)))
                .collect();
            let more = faults.len().saturating_sub(limit);
            format!(
                "{} distinct memory errors (by instruction and kind of access): {}{}",
                faults.len(),
                listed.join("; "),
                if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                }
            )
        }
    };
    let message = if dropped > 0 {
        format!("{message}; and errors of {dropped} more warp instructions, not kept beyond {limit} distinct errors (--memcheck-limit)")
    } else {
        message
    };
    Error::Fault {
        launch: launch.into(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_told_apart_by_instruction_and_kind_and_counted() {
        let mut a = Faults::default();
        assert!(!a.counted(5, "read", MAX_DISTINCT));
        a.push(3, 5, "read", "read at 5".into());
        assert!(a.counted(5, "read", MAX_DISTINCT));
        assert!(!a.counted(5, "misaligned read", MAX_DISTINCT));
        a.push(3, 5, "misaligned read", "misaligned at 5".into());
        let mut b = Faults::default();
        b.push(1, 9, "write", "write at 9".into());
        b.push(4, 5, "read", "read at 5, block 4".into());
        let all = merge([a, b]);
        let got: Vec<(u64, u32, &str, u64)> = all
            .iter()
            .map(|f| (f.block, f.pc, f.what, f.count))
            .collect();
        assert_eq!(
            got,
            [
                (1, 9, "write", 1),
                (3, 5, "read", 3),
                (3, 5, "misaligned read", 1)
            ]
        );
        let e = report("main", &all, MAX_DISTINCT).to_string();
        assert_eq!(
            e,
            "launch `main`: 3 distinct memory errors (by instruction and kind of access): \
[1] write at 9; [2] read at 5 (in 3 warp instructions); [3] misaligned at 5"
        );
        assert_eq!(
            report("main", &all[..1], MAX_DISTINCT).to_string(),
            "launch `main`: write at 9"
        );
    }

    #[test]
    fn an_sm_keeps_at_most_its_limit_of_distinct_errors_and_a_report_lists_its_limit() {
        let mut a = Faults::default();
        for pc in 0..40 {
            if !a.counted(pc, "read", 32) {
                a.push(0, pc, "read", format!("e{pc}"));
            }
        }
        assert_eq!(a.list.len(), 32);
        let e = report("k", &merge([a]), 10).to_string();
        assert!(e.contains("32 distinct memory errors"), "{e}");
        assert!(e.contains("[10] e9; and 22 more"), "{e}");
    }
}
