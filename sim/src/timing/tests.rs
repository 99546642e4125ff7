//! The timing model's rules, case by case.

use super::dram::DramCalendar;
use super::*;

#[test]
fn blocks_fill_free_slots_no_faster_than_dispatch() {
    let mut w = SmWork::default();
    for wave in [0, 0, 1, 1] {
        w.block_done(wave, 100);
    }
    // Two slots, no dispatch limit: two rounds of 100.
    assert_eq!(w.latency(0.0), 200.0);
    // Blocks start 80 apart at most: 0, 80, 160 (slot free at 100), 240 (free at 180).
    assert_eq!(w.latency(80.0), 340.0);
}

/// The costs of the bundled H200 description.
pub(super) fn h200_costs() -> Costs {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml");
    Costs::new(&GpuConfig::load(std::path::Path::new(path)).unwrap())
}

#[test]
fn constant_work_adds_each_miss_term_in_order() {
    let costs = h200_costs();
    let (c0, c1, l2, dram) = (Level::Cache(0), Level::Cache(1), Level::L2, Level::Dram);
    let served = [c1, c0, l2, l2, dram, c0, c1, Level::Cache(9), c1];
    // The sum one term at a time, nearest level skipped, as the definition reads.
    let mut want: f64 = std::iter::empty::<f64>().sum();
    for &l in &served {
        if l != c0 {
            want += f64::from(costs.const_level(l)) / costs.const_misses_in_flight;
        }
    }
    let (pipe, miss) = costs.constant_work(&served);
    assert_eq!(pipe, 9.0 * costs.const_serial);
    assert_eq!(miss.to_bits(), want.to_bits());
    // Only the nearest level: the sum of none.
    let none: f64 = std::iter::empty::<f64>().sum();
    assert_eq!(costs.constant_work(&[c0, c0]).1.to_bits(), none.to_bits());
}

#[test]
fn constant_costs_near_match_the_walk() {
    let costs = h200_costs();
    let (c0, c1) = (Level::Cache(0), Level::Cache(1));
    let cases: [&[Level]; 6] = [
        &[],
        &[c0],
        &[c1],
        &[c0, c0, c0],
        &[c1, c0, c1, c1, c0, c1, c1],
        &[c1; 32],
    ];
    for served in cases {
        let misses = served.iter().filter(|&&l| l == c1).count() as u32;
        let (lat, (pipe, miss)) = costs.constant_costs_near(served.len() as u32, misses);
        let (want_lat, (want_pipe, want_miss)) = costs.constant_costs(served);
        assert_eq!(lat, want_lat);
        assert_eq!(pipe.to_bits(), want_pipe.to_bits());
        assert_eq!(miss.to_bits(), want_miss.to_bits());
    }
    // 32 requests, 5 served by the second level: its latency, 31 addresses after the first.
    let (lat, _) = costs.constant_costs_near(32, 5);
    let serial = (31.0 * costs.const_serial).round() as u32;
    assert_eq!(
        lat,
        costs.const_level(c1).max(costs.const_level(c0)) + serial
    );
}

#[test]
fn a_sector_map_keeps_one_wave() {
    let mut m = SectorMap::<4096>::default();
    assert_eq!(m.get(7), None);
    assert_eq!(m.insert(7, 10), None);
    assert_eq!(m.insert(7, 12), Some(10));
    m.insert_new(7, 99);
    assert_eq!(m.get(7), Some(12));
    // Growing keeps every sector.
    for s in 0..10_000u64 {
        m.insert_new(s * 4, s as u32);
    }
    assert_eq!(m.get(7), Some(12));
    assert!((0..10_000u64).all(|s| m.get(s * 4) == Some(s as u32)));
    assert_eq!(m.get(5), None);
    // The next wave starts empty.
    m.clear();
    assert_eq!(m.get(7), None);
    assert_eq!(m.get(8), None);
    assert_eq!(m.insert(8, 1), None);
    assert_eq!(m.get(8), Some(1));
    // Growing keeps every sector.
    let many: Vec<u64> = (100..20_100).collect();
    for &s in &many {
        m.insert_new(s, 7);
    }
    assert_eq!(m.len, 20_001);
    assert!(m.slots.len() >= 2 * m.len);
    assert!(many.iter().all(|&s| m.get(s) == Some(7)));
    assert_eq!(m.insert_reserved(8, 2), Some(1));
}

#[test]
fn a_fill_map_keeps_each_sectors_first_cycle() {
    // Against a plain map, over accesses without gaps, strided, scattered, and across
    // chunks, growing, and waves.
    let mut m = FillMap::default();
    let mut want = std::collections::HashMap::new();
    let mut seed = 12345u64;
    let mut next = move || {
        seed = crate::testing::lcg(seed);
        seed >> 33
    };
    for round in 0..4000u32 {
        if round % 1000 == 999 {
            m.clear();
            want.clear();
        }
        let base = next() % 100_000;
        let n = 1 + next() % 32;
        let mut sectors: Vec<u64> = match round % 3 {
            0 => (base..base + n).collect(),
            1 => (0..n).map(|k| base + k * (1 + round as u64 % 7)).collect(),
            _ => (0..n).map(|_| base + next() % 3000).collect(),
        };
        sectors.sort_unstable();
        sectors.dedup();
        let latest = sectors.iter().filter_map(|s| want.get(s)).max().copied();
        assert_eq!(m.latest(&sectors), latest.unwrap_or(0));
        m.insert_all_new(&sectors, round);
        for &s in &sectors {
            want.entry(s).or_insert(round);
        }
    }
    assert!(want.iter().all(|(&s, &c)| m.get(s) == Some(c)));
    assert_eq!(m.get(100_000 + 40_000), None);
    assert!(2 * m.len <= m.meta.len());
}

#[test]
fn a_wave_without_hits_skips_the_fills_and_changes_nothing() {
    // Misses and stores (with and without merging) of waves that have no load hitting L1:
    // an SM that records the fills and one told there are no hits answer and count alike.
    let mut costs = h200_costs();
    let mut seed = 99u64;
    let mut next = move || {
        seed = crate::testing::lcg(seed);
        seed >> 33
    };
    for merge in [None, Some(1), Some(50)] {
        costs.store_merge = merge;
        let (mut a, mut b) = (SmWork::default(), SmWork::default());
        b.expect_hits(false);
        for round in 0..3000u64 {
            let wave = (round / 500) as usize;
            let now = (round * 7 + next() % 20) as u32;
            a.now = now;
            b.now = now;
            let base = next() % 5000;
            let n = 1 + next() % 32;
            let mut sectors: Vec<u64> = match round % 3 {
                0 => (base..base + n).collect(),
                1 => (0..n).map(|k| base + k * (1 + round % 5)).collect(),
                _ => (0..n).map(|_| base + next() % 300).collect(),
            };
            sectors.sort_unstable();
            sectors.dedup();
            let (store, lat, dwf) = (next() % 2 == 0, 100 + next() as u32 % 400, 1 + n as u32);
            let lines = distinct_lines(&costs, &sectors) as u32;
            let want = a.global_sectors(&costs, wave, dwf, &sectors, lines, store, false, lat);
            let got = b.global_sectors(&costs, wave, dwf, &sectors, lines, store, false, lat);
            assert_eq!(got, want);
        }
        assert_eq!(b.fills.len, 0);
        assert_eq!(
            (
                a.data_wavefronts,
                a.store_sectors,
                a.store_sectors_sent,
                a.l2_write_lines
            ),
            (
                b.data_wavefronts,
                b.store_sectors,
                b.store_sectors_sent,
                b.l2_write_lines
            )
        );
    }
}

#[test]
fn dram_queue_drains_at_the_bandwidth_share() {
    let mut w = SmWork {
        dram: DramCalendar::new(16.0),
        ..Default::default()
    };
    w.now = 0;
    assert_eq!(w.queue_dram(1024), 1024);
    // 10 cycles later 160 bytes have drained: 864 are still ahead, plus these 128.
    w.now = 10;
    assert_eq!(w.queue_dram(128), 992);
    // 100 cycles later the queue is empty: only this request is ahead of itself.
    w.now = 110;
    assert_eq!(w.queue_dram(128), 128);
    // The idle DRAM saved nothing up: two requests at once queue behind each other.
    w.now = 1000;
    assert_eq!(w.queue_dram(64), 64);
    assert_eq!(w.queue_dram(64), 128);
    // The next wave starts 1002 cycles later: the 128 bytes booked in the bin of cycle 1002
    // (992-1023) count as ahead, plus these 64.
    w.advance(1002);
    w.now = 0;
    assert_eq!(w.queue_dram(64), 192);
}

#[test]
fn a_request_waits_only_for_what_was_booked_from_its_own_cycle_on() {
    // The replay reaches a warp's accesses in its stream's order, not in cycle order: a store
    // issued at cycle 1201 may come before a load issued at cycle 114.
    let mut w = SmWork {
        dram: DramCalendar::new(16.0),
        ..Default::default()
    };
    w.now = 100;
    assert_eq!(w.queue_dram(1024), 1024);
    // No DRAM bytes: nothing booked (the store L2 acknowledged).
    w.now = 1201;
    w.queue_dram_only(0);
    assert_eq!(w.queue_dram(0), 0);
    // 2048 bytes booked from cycle 1300 on do not delay the load issued at 114, which waits
    // for the 1024 bytes of cycle 100 still ahead (50 cycles, 800 bytes) and itself.
    w.now = 1300;
    assert_eq!(w.queue_dram(2048), 2048);
    w.now = 114;
    assert_eq!(w.queue_dram(64), 800 + 64);
    // A load at cycle 1290 finds 192 of those 2048 bytes booked in its bin (1280-1311: 16 x 12
    // cycles from 1300), and room for itself in the 22 cycles from 1290: both are ahead.
    w.now = 1290;
    assert_eq!(w.queue_dram(128), 192 + 128);
}

#[test]
fn a_request_l2_served_moves_the_dram_queue_as_one_it_serves() {
    // Random requests, some served by L2 (`queue_dram_only`), on random shares (none too):
    // the queue answers the same afterwards as when each asks `queue_dram`.
    for seed in 1..100 {
        let mut x = seed;
        let mut r = || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        let share = [0.0, 6.7, 16.0, 0.3][(r() % 4) as usize];
        let new = || SmWork {
            dram: DramCalendar::new(share),
            ..Default::default()
        };
        let (mut a, mut b) = (new(), new());
        let mut now = 0u32;
        for _ in 0..300 {
            now += (r() % 50) as u32;
            (a.now, b.now) = (now, now);
            let bytes = [0, 32, 128, 1024, r() % 5000][(r() % 5) as usize];
            if r() % 3 == 0 {
                a.queue_dram_only(bytes);
                b.queue_dram(bytes);
            } else {
                assert_eq!(a.queue_dram(bytes), b.queue_dram(bytes), "seed {seed}");
            }
        }
    }
}
