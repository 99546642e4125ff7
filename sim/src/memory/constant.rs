//! The indexed constant cache: one request per distinct address.
//!
//! "A request is split into as many separate requests as there are different memory addresses in
//! the initial request, decreasing throughput by a factor equal to the number of separate
//! requests" (CUDA C++ Programming Guide §5.3.2, "Constant Memory"). On compute capability 1.x a
//! warp's request is first split into two half-warp requests (CUDA C Programming Guide 4.2
//! §5.3.2.4), modelled by `broadcast_lanes = 16`. Measured on Hopper: `idc__requests.sum` per LDC
//! equals the number of distinct addresses even when they share a cache line (see
//! reference/anchors.md), so requests are per address, not per line.

use super::{WarpAccess, WordSet};

/// The requests of one warp access: at most one per lane, kept inline so the hot path does not
/// allocate.
pub type Requests = smallvec::SmallVec<[u64; 32]>;

/// The distinct addresses of the access, per group of `broadcast_lanes` consecutive lanes (32: the
/// whole warp; 16: each half-warp on its own), in the order they would be served. Two lanes reading
/// any bytes of the same 4-byte word share a request.
pub fn requests(access: &WarpAccess, broadcast_lanes: u32) -> Requests {
    let group = broadcast_lanes.clamp(1, 32) as usize;
    let mut out = Requests::new();
    let mut start = 0;
    while start < 32 {
        // The group's distinct words in lane order, without comparing every pair.
        let mut seen = WordSet::<64>::new();
        for (lane, a) in access.lanes() {
            if lane >= start && lane < start + group && seen.insert(a & !3) {
                out.push(a & !3);
            }
        }
        start += group;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_is_one_request() {
        assert_eq!(requests(&WarpAccess::from_fn(4, |_| 64), 32).len(), 1);
    }

    #[test]
    fn distinct_addresses_in_one_line_are_separate_requests() {
        assert_eq!(
            requests(&WarpAccess::from_fn(4, |l| 4 * (l % 8)), 32).len(),
            8
        );
    }

    #[test]
    fn half_warp_broadcast_on_compute_1x() {
        assert_eq!(requests(&WarpAccess::from_fn(4, |_| 64), 16).len(), 2);
        assert_eq!(requests(&WarpAccess::from_fn(4, |l| 4 * l), 16).len(), 32);
    }

    #[test]
    fn inactive_lanes_do_not_count() {
        let mut a = WarpAccess::from_fn(4, |l| 4 * l);
        a.mask = 0b1011;
        assert_eq!(requests(&a, 32).to_vec(), vec![0, 4, 12]);
    }
}
