//! The IDC's fills in flight: a lookup that misses a line whose fill from the next level is
//! still pending merges into that fill instead of sending a request of its own (a miss status
//! holding register). Both count as `idc__requests_lookup_miss`; only the first is a request to
//! the GPC's constant cache (`gcc__cache_requests_type_constant`).
//!
//! \[measured\] `validate/measurements/h200/ubench` N (const_smsp_table.txt) and suite38's
//! constant launches on an H200: GCC requests are 13% of the IDC misses where 8 warps per SM read
//! the same 32 lines 128 bytes apart (k32_s128: 341,048 of 2,683,111), about half where each warp
//! reads lines of its own (walk_k32_s64: 5,248,302 of 9,859,736).

/// Entries of the table (lines whose fills are remembered, by line number modulo this).
const ENTRIES: usize = 64;

/// One SM's IDC fills in flight: per entry, the line (plus one; 0 for none) and the cycle its
/// fill was requested.
#[derive(Debug, Clone)]
pub struct PendingFills {
    fills: [(u64, u64); ENTRIES],
}

impl Default for PendingFills {
    fn default() -> Self {
        Self {
            fills: [(0, 0); ENTRIES],
        }
    }
}

impl PendingFills {
    /// Forgets every fill (a launch or a wave of blocks starts).
    pub fn clear(&mut self) {
        self.fills = [(0, 0); ENTRIES];
    }

    /// A lookup of `line` missed at cycle `t`; a fill takes `fill` cycles. Returns whether it
    /// merges into a fill of the line requested less than `fill` cycles before or after `t` (the
    /// functional pass meets the warps' LDCs only roughly in cycle order); otherwise it requests
    /// the fill itself.
    pub fn miss(&mut self, line: u64, t: u64, fill: u64) -> bool {
        let e = &mut self.fills[(line % ENTRIES as u64) as usize];
        if e.0 == line.wrapping_add(1) && e.1.abs_diff(t) < fill {
            return true;
        }
        *e = (line.wrapping_add(1), t);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_miss_merges_into_a_pending_fill_of_its_line_only() {
        let mut f = PendingFills::default();
        assert!(!f.miss(7, 1000, 98));
        // The same line 97 cycles later: the fill is still pending.
        assert!(f.miss(7, 1097, 98));
        // Another line in the same entry (7 + 64) requests its own fill and takes the entry.
        assert!(!f.miss(71, 1098, 98));
        // 98 cycles after the first request line 7's fill is back: a new request.
        assert!(!f.miss(7, 1098, 98));
        assert!(f.miss(7, 1050, 98));
    }
}
