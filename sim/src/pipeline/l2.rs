//! Pass 2, the L2 pass: a block's logged L2 requests run in order through the shared L2 and
//! DRAM; each gets its outcome (the level that served it, its latency, the DRAM bytes it moved)
//! in the block's log, and its traffic is counted.

use crate::memory::system::{L2Lines, L2Model, L2Outcome};
use crate::memory::Level;
use crate::metrics::Counters;
use crate::timing::Costs;
use crate::trace::{self, BlockLog, L2Kind, ReqOut};

/// Requests of one block that pass 2 runs before the next block of its wave runs as many
/// ([`resolve_wave`]): fine enough that blocks reading the same rows meet them in L2 together
/// (turns of 1 and 8 give the same counts on suite37 and suite38; of 32, s2d's L2 read hits are
/// 34% over the H200's again), coarse enough to take a block's requests in runs.
pub(super) const TURN: usize = 8;

/// Pass 2 for the blocks of one wave (`logs`, in block order): their atomics' contention is
/// counted block by block, then their L2 requests run through `l2` in turns of [`TURN`]
/// requests per block, round after round, as the wave's blocks run at once on the GPU: a line
/// that neighbouring blocks read at about the same time (the rows a stencil's blocks share) is
/// fetched once, where running each block's requests to the end before the next block's would
/// evict it in between (suite37's 3-D stencil: `tests/fixtures/suite37/h200.json`, s3d_256, 1.66 M
/// of 3.87 M L2 read sectors hit on the H200).
pub(super) fn resolve_wave(
    l2: &mut L2Model,
    costs: &Costs,
    c: &mut Counters,
    logs: &mut [&mut BlockLog],
) {
    for log in logs.iter_mut() {
        l2.count_atomics(&log.atomic_words, |most| costs.atomic_line(most));
        l2.count_cas(log.wave, log.block, &log.cas);
    }
    let mut from = 0;
    loop {
        let mut left = false;
        for log in logs.iter_mut() {
            let n = log.reqs.len();
            if from < n {
                resolve_requests(l2, costs, c, log, from..(from + TURN).min(n));
                left |= from + TURN < n;
            }
        }
        if !left {
            break;
        }
        from += TURN;
    }
}

/// Runs the block's L2 requests `range` (the next of its log, in order) through `l2`, counts
/// their traffic and records for each where it was served and the DRAM bytes it moved (the
/// timing pass queues those at the request's issue time).
fn resolve_requests(
    l2: &mut L2Model,
    costs: &Costs,
    c: &mut Counters,
    log: &mut BlockLog,
    range: std::ops::Range<usize>,
) {
    // In the shipped configs' L2 geometry, loads and stores go through `lines`, borrowed once for
    // a run of them (and given back for any other request): a request costs a few counts and its
    // lines' lookups.
    let fast = l2.lines().is_some();
    let mut lines = None;
    // Their counters, added to `c` once (in locals, not written through `c` per request).
    let [mut read_sectors, mut read_hits, mut write_sectors, mut write_hits] = [0u64; 4];
    let [mut dram_read, mut dram_write] = [0u64; 2];
    for i in range {
        let req = &log.reqs[i];
        let addrs = &log.addrs[req.start as usize..req.end as usize];
        if fast {
            if lines.is_none() {
                lines = l2.lines();
            }
            let f = lines.as_mut().expect("the L2's geometry does not change");
            let sb = L2Lines::SECTOR_BYTES;
            let out = match req.kind {
                L2Kind::Load | L2Kind::LoadLines => {
                    let counts = match req.kind {
                        L2Kind::LoadLines => Some(f.read_lines(addrs)),
                        _ => f.read(addrs),
                    };
                    counts.map(|r| {
                        let (read, written) = (u64::from(r.missed) * sb, u64::from(r.written) * sb);
                        read_sectors += u64::from(r.sectors);
                        read_hits += u64::from(r.hits);
                        dram_read += read;
                        dram_write += written;
                        ReqOut {
                            lat: costs.global(r.level()),
                            dram: r.missed != 0,
                            dram_bytes: read + written,
                        }
                    })
                }
                L2Kind::Store | L2Kind::StoreLines => {
                    let w = match req.kind {
                        L2Kind::StoreLines => f.write_lines(addrs),
                        _ => f.write(addrs),
                    };
                    let written = u64::from(w.written) * sb;
                    write_sectors += u64::from(w.sectors);
                    write_hits += u64::from(w.hits);
                    dram_write += written;
                    Some(ReqOut {
                        lat: costs.l2,
                        dram: false,
                        dram_bytes: written,
                    })
                }
                _ => None,
            };
            if let Some(out) = out {
                log.out.push(out.into());
                continue;
            }
        }
        lines = None;
        let mut t = L2Outcome::default();
        let served = |level: Level| ReqOut {
            lat: costs.global(level),
            dram: level == Level::Dram,
            dram_bytes: 0,
        };
        let mut out = match &req.kind {
            // `Params::line_records` only where the L2 is `L2Lines`' (`fast`).
            L2Kind::LoadLines | L2Kind::StoreLines => unreachable!("line records on a fast L2"),
            L2Kind::Load => {
                let level = l2.read_request(addrs, &mut t);
                c.l2_read_sectors += u64::from(t.sectors);
                c.l2_read_hits += u64::from(t.hits);
                served(level)
            }
            L2Kind::Store => {
                l2.write(addrs, &mut t);
                c.l2_write_sectors += u64::from(t.sectors);
                c.l2_write_hits += u64::from(t.hits);
                ReqOut {
                    lat: costs.l2,
                    ..Default::default()
                }
            }
            L2Kind::Atomic { returns } => {
                let level = addrs
                    .iter()
                    .map(|&a| l2.atomic(a, &mut t))
                    .max()
                    .unwrap_or(Level::L2);
                if *returns {
                    c.l2_atom_sectors += u64::from(t.sectors);
                    served(level.max(Level::L2))
                } else {
                    c.l2_red_sectors += u64::from(t.sectors);
                    ReqOut {
                        lat: costs.l2,
                        ..Default::default()
                    }
                }
            }
            L2Kind::Const(i) => {
                let trace::ConstReq { pc, start, end } = log.consts[*i as usize];
                let mut far = addrs.iter();
                let served: Vec<Level> = log.served[start as usize..end as usize]
                    .iter()
                    .map(|s| match s {
                        Some(l) => *l,
                        None => l2.read(*far.next().expect("one address per miss"), &mut t),
                    })
                    .collect();
                log.ldc[1].extend(costs.ldc_work(pc, &served));
                log.const_far += crate::timing::price::far_requests(&served);
                ReqOut {
                    lat: costs.constant_load(&served),
                    ..Default::default()
                }
            }
        };
        out.dram_bytes = match req.kind {
            L2Kind::Const(_) => t.dram_read,
            _ => t.dram_read + t.dram_write,
        };
        c.dram_read_bytes += t.dram_read;
        c.dram_write_bytes += t.dram_write;
        log.out.push(out.into());
    }
    c.l2_read_sectors += read_sectors;
    c.l2_read_hits += read_hits;
    c.l2_write_sectors += write_sectors;
    c.l2_write_hits += write_hits;
    c.dram_read_bytes += dram_read;
    c.dram_write_bytes += dram_write;
}
