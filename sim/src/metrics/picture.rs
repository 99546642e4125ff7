//! The bank picture of a shared-memory access: which lanes fall into which bank, and how many
//! distinct words each bank must serve (the wavefronts of the worst bank).

use super::SharedSample;
use crate::memory::shared;
use crate::memory::WarpAccess;

/// Compresses sorted lane numbers into ranges: `0-3,8,10-11`.
fn ranges(lanes: &[usize]) -> String {
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            lanes[i].to_string()
        } else {
            format!("{}-{}", lanes[i], lanes[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Draws the banks of `s`'s worst phase, one line per bank in use:
/// a bar with one block per distinct word, the word count and the lanes.
pub fn banks(s: &SharedSample) -> String {
    let access = WarpAccess {
        mask: s.mask,
        addrs: s.addrs.clone().try_into().unwrap_or([0; 32]),
        bytes: s.bytes,
    };
    let b = shared::Banks {
        banks: s.banks,
        width: s.width,
    };
    let phase = shared::lanes_per_phase(s.bytes, b) as usize;
    let width = u64::from(s.width);
    // Per phase: per bank, the distinct words and the lanes touching them.
    type Banked = Vec<(Vec<u64>, Vec<usize>)>;
    let mut best: Option<(usize, Banked)> = None;
    for start in (0..32).step_by(phase) {
        let mut per_bank: Banked = vec![(vec![], vec![]); s.banks as usize];
        for (lane, a) in access
            .lanes()
            .filter(|(l, _)| *l >= start && *l < start + phase)
        {
            for w in a / width..=(a + u64::from(s.bytes.max(1)) - 1) / width {
                let (words, lanes) = &mut per_bank[(w % u64::from(s.banks)) as usize];
                if !words.contains(&w) {
                    words.push(w);
                }
                if !lanes.contains(&lane) {
                    lanes.push(lane);
                }
            }
        }
        let worst = per_bank.iter().map(|(w, _)| w.len()).max().unwrap_or(0);
        if best.as_ref().is_none_or(|(n, _)| worst > *n) {
            best = Some((worst, per_bank));
        }
    }
    let Some((_, per_bank)) = best else {
        return String::new();
    };
    let mut out = format!(
        "  {} banks x {} B, lanes {} per phase; worst phase shown (bar: one block per distinct word)\n",
        s.banks,
        s.width,
        phase
    );
    let mut unused = 0;
    for (bank, (words, lanes)) in per_bank.iter().enumerate() {
        if words.is_empty() {
            unused += 1;
            continue;
        }
        let mut lanes = lanes.clone();
        lanes.sort_unstable();
        out.push_str(&format!(
            "  bank {bank:>2} {:<32} {:>2} word{} lanes {}\n",
            "█".repeat(words.len().min(32)),
            words.len(),
            if words.len() == 1 { " " } else { "s" },
            ranges(&lanes)
        ));
    }
    if unused > 0 {
        out.push_str(&format!("  ({unused} banks unused)\n"));
    }
    out
}

/// One cell of the bank picture: a distinct word of a bank, the wavefront that serves it
/// (0-based, in the order the lanes reach the bank) and the lanes that touch it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cell {
    /// The bank.
    pub bank: u32,
    /// The wavefront serving the word.
    pub wavefront: u32,
    /// The word's address over the bank width.
    pub word: u64,
    /// The lanes touching the word, ascending.
    pub lanes: Vec<usize>,
}

/// The cells of `s`'s worst phase (the one whose busiest bank serves the most words), as
/// [`banks`] draws them: `(lanes per phase, cells)`, cells by bank then wavefront.
pub fn cells(s: &SharedSample) -> (u32, Vec<Cell>) {
    let access = WarpAccess {
        mask: s.mask,
        addrs: s.addrs.clone().try_into().unwrap_or([0; 32]),
        bytes: s.bytes,
    };
    let b = shared::Banks {
        banks: s.banks,
        width: s.width,
    };
    let phase = shared::lanes_per_phase(s.bytes, b) as usize;
    let width = u64::from(s.width.max(1));
    let mut best: Option<(usize, Vec<Cell>)> = None;
    for start in (0..32).step_by(phase.max(1)) {
        let mut cells: Vec<Cell> = vec![];
        for (lane, a) in access
            .lanes()
            .filter(|(l, _)| *l >= start && *l < start + phase)
        {
            for w in a / width..=(a + u64::from(s.bytes.max(1)) - 1) / width {
                let bank = (w % u64::from(s.banks.max(1))) as u32;
                match cells.iter_mut().find(|c| c.word == w) {
                    Some(c) if !c.lanes.contains(&lane) => c.lanes.push(lane),
                    Some(_) => {}
                    None => {
                        let wavefront = cells.iter().filter(|c| c.bank == bank).count() as u32;
                        cells.push(Cell {
                            bank,
                            wavefront,
                            word: w,
                            lanes: vec![lane],
                        });
                    }
                }
            }
        }
        let worst = cells.iter().map(|c| c.wavefront + 1).max().unwrap_or(0) as usize;
        if best.as_ref().is_none_or(|(n, _)| worst > *n) {
            best = Some((worst, cells));
        }
    }
    let mut cells = best.map(|b| b.1).unwrap_or_default();
    cells.iter_mut().for_each(|c| c.lanes.sort_unstable());
    cells.sort_by_key(|c| (c.bank, c.wavefront));
    (phase as u32, cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_access_draws_one_full_bank() {
        let addrs: Vec<u64> = (0..32).map(|l| 4 * (l * 32 + 3)).collect();
        let s = SharedSample {
            mask: u32::MAX,
            addrs,
            bytes: 4,
            banks: 32,
            width: 4,
            wavefronts: 32,
        };
        let p = banks(&s);
        assert!(
            p.contains("bank  3 ████████████████████████████████ 32 words lanes 0-31"),
            "{p}"
        );
        assert!(p.contains("(31 banks unused)"), "{p}");
    }

    #[test]
    fn a_column_access_is_32_cells_of_bank_3() {
        let addrs: Vec<u64> = (0..32).map(|l| 4 * (l * 32 + 3)).collect();
        let s = SharedSample {
            mask: u32::MAX,
            addrs,
            bytes: 4,
            banks: 32,
            width: 4,
            wavefronts: 32,
        };
        let (phase, c) = cells(&s);
        assert_eq!((phase, c.len()), (32, 32));
        assert!(c
            .iter()
            .enumerate()
            .all(|(i, c)| c.bank == 3 && c.wavefront == i as u32 && c.lanes == [i]));
    }

    #[test]
    fn lane_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
