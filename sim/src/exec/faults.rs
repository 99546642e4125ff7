//! The memory errors of a launch, as compute-sanitizer's memcheck lists them: every distinct
//! error, not only the first.
//!
//! An access that a GPU would fault on (outside every allocation or state space, misaligned, a
//! write to read-only memory) is recorded, and the warp goes on past the instruction without
//! it (from the faulting lane on, a load leaves the destinations as they were, a store and an
//! atomic write nothing).
//! Errors are told apart by the instruction and the kind of access, as memcheck's by the line:
//! the first occurrence of each is reported with its thread, block and address, and how many
//! warp instructions made it. At most [`MAX_DISTINCT`] distinct errors are kept per SM. The launch
//! runs to its end and then fails with all of them ([`report`]); its counters and time are not
//! reported.

use crate::error::Error;

/// The most distinct errors an SM keeps.
pub const MAX_DISTINCT: usize = 32;

/// The most distinct errors a launch's report lists in full.
pub const MAX_LISTED: usize = 10;

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
}

impl Faults {
    /// Counts one more occurrence of the error at `pc` of kind `what` if it is known; `false`
    /// when it is new (the caller then builds its message and [`Faults::push`]es it), `true`
    /// when it was counted (or the SM has no room for another distinct error: it is dropped).
    pub fn counted(&mut self, pc: u32, what: &'static str) -> bool {
        if let Some(f) = self.list.iter_mut().find(|f| f.pc == pc && f.what == what) {
            f.count += 1;
            return true;
        }
        self.list.len() >= MAX_DISTINCT
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
    let mut all: Vec<Fault> = sms.into_iter().flat_map(|f| f.list).collect();
    // Stable: within a block, the SM's order.
    all.sort_by_key(|f| f.block);
    let mut out: Vec<Fault> = vec![];
    for f in all {
        match out.iter_mut().find(|o| o.pc == f.pc && o.what == f.what) {
            Some(o) => o.count += f.count,
            None => out.push(f),
        }
    }
    out
}

/// The error of launch `launch` with the distinct memory errors `faults` (at least one): one
/// error as before when there is one, else the number of errors and each (up to
/// [`MAX_LISTED`]), on one line.
pub fn report(launch: &str, faults: &[Fault]) -> Error {
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
                .take(MAX_LISTED)
                .enumerate()
                .map(|(i, f)| format!("[{}] {}{}", i + 1, f.message, times(f.count)))
                .collect();
            let more = faults.len().saturating_sub(MAX_LISTED);
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
        assert!(!a.counted(5, "read"));
        a.push(3, 5, "read", "read at 5".into());
        assert!(a.counted(5, "read"));
        assert!(!a.counted(5, "misaligned read"));
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
        let e = report("main", &all).to_string();
        assert_eq!(
            e,
            "launch `main`: 3 distinct memory errors (by instruction and kind of access): \
[1] write at 9; [2] read at 5 (in 3 warp instructions); [3] misaligned at 5"
        );
        assert_eq!(
            report("main", &all[..1]).to_string(),
            "launch `main`: write at 9"
        );
    }

    #[test]
    fn an_sm_keeps_at_most_max_distinct_errors_and_a_report_lists_max_listed() {
        let mut a = Faults::default();
        for pc in 0..40 {
            if !a.counted(pc, "read") {
                a.push(0, pc, "read", format!("e{pc}"));
            }
        }
        assert_eq!(a.list.len(), MAX_DISTINCT);
        let e = report("k", &merge([a])).to_string();
        assert!(e.contains("32 distinct memory errors"), "{e}");
        assert!(e.contains("[10] e9; and 22 more"), "{e}");
    }
}
