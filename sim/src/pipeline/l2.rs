//! Pass 2, the L2 pass: a block's logged L2 requests run in order through the shared L2 and
//! DRAM; each gets its outcome (the level that served it, its latency, the DRAM bytes it moved)
//! in the block's log, and its traffic is counted.

use crate::memory::system::{L2Lines, L2Model, L2Outcome};
use crate::memory::Level;
use crate::metrics::Counters;
use crate::timing::Costs;
use crate::trace::{self, BlockLog, L2Kind, ReqOut};

/// Pass 2 for one block: runs its L2 requests in order through `l2`, counts their traffic and
/// records for each where it was served and the DRAM bytes it moved (the timing pass queues those
/// at the request's issue time).
pub(super) fn resolve_l2(l2: &mut L2Model, costs: &Costs, c: &mut Counters, log: &mut BlockLog) {
    // In the shipped configs' L2 geometry, loads and stores go through `lines`, borrowed once for
    // a run of them (and given back for any other request): a request costs a few counts and its
    // lines' lookups.
    l2.count_atomics(&log.atomic_words, |most| costs.atomic_line(most));
    l2.count_cas(log.wave, log.block, &log.cas);
    let fast = l2.lines().is_some();
    let mut lines = None;
    // Their counters, added to `c` once (in locals, not written through `c` per request).
    let [mut read_sectors, mut read_hits, mut write_sectors, mut write_hits] = [0u64; 4];
    let [mut dram_read, mut dram_write] = [0u64; 2];
    for req in &log.reqs {
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
