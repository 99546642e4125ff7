//! Launch features of issue 39 that are not tensor cores: dynamic shared memory above 48 KB with
//! the `cudaFuncAttributeMaxDynamicSharedMemorySize` opt-in (`max_dynamic_shared_bytes`), and
//! `printf`. Kernels in `tests/fixtures/tensor/` (their `.cu` beside the committed PTX,
//! `make_ptx.sh`); outputs recomputed here.

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, LaunchResult, Options};
use sim::workload::Workload;

fn try_run(config: &str, name: &str, sets: &[(&str, i64)]) -> Result<Vec<LaunchResult>, String> {
    let cfg = GpuConfig::load(&root().join(format!("configs/{config}.toml"))).unwrap();
    let p = root().join(format!("tests/fixtures/tensor/{name}.toml"));
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let opts = Options {
        keep_outputs: true,
        sets: sets.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..Default::default()
    };
    run_workload(&cfg, &w, &opts)
        .map(|r| r.launches)
        .map_err(|e| format!("{e:#}"))
}

fn ints(l: &LaunchResult, name: &str) -> Vec<i32> {
    let b = &l.outputs.iter().find(|(n, _)| n == name).unwrap().1;
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_block_uses_100_kb_of_dynamic_shared_memory_with_the_opt_in() {
    let l = &try_run("h200", "big_shared", &[]).unwrap()[0];
    let (n, blocks) = (25600, 4);
    let (input, out, hist) = (ints(l, "in"), ints(l, "out"), ints(l, "hist"));
    for b in 0..blocks {
        let slice = &input[b * n..(b + 1) * n];
        let want: Vec<i32> = slice.iter().rev().copied().collect();
        assert_eq!(&out[b * n..(b + 1) * n], &want[..], "block {b}");
        let mut counts = [0i32; 256];
        for v in slice {
            counts[(v & 255) as usize] += 1;
        }
        assert_eq!(&hist[b * 256..(b + 1) * 256], &counts[..], "block {b}");
    }
    // 1 KB static + 100 KB dynamic per block: 2 blocks in the H200's 228 KB per SM.
    assert_eq!(l.occupancy_blocks, 2);
}

/// The fixture without its `max_dynamic_shared_bytes` line, in a temporary folder.
fn without_opt_in_key() -> Workload {
    let dir = root().join("tests/fixtures/tensor");
    let text = std::fs::read_to_string(dir.join("big_shared.toml")).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("max_dynamic_shared_bytes"))
        .map(|l| {
            if l.starts_with("ptx = ") {
                format!("ptx = {:?}\n", dir.join("big_shared.ptx").to_str().unwrap())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let p = std::env::temp_dir().join(format!("big_shared_no_opt_in_{}.toml", std::process::id()));
    std::fs::write(&p, text).unwrap();
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    std::fs::remove_file(&p).unwrap();
    w
}

#[test]
fn without_the_opt_in_more_than_48_kb_is_refused_naming_the_key() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let e = format!(
        "{:#}",
        run_workload(&cfg, &without_opt_in_key(), &Options::default()).unwrap_err()
    );
    assert!(
        e.contains("shared_bytes: = 102400: 1024 bytes of static plus 102400 of dynamic shared memory exceed the 49152 bytes")
            && e.contains("set `max_dynamic_shared_bytes`"),
        "{e}"
    );
    let e = try_run("h200", "big_shared", &[("opt_in", -1)]).unwrap_err();
    assert!(e.contains("must be >= 0"), "{e}");
    // 12288 ints = 48 KB of dynamic shared memory plus 1 KB static: over 48 KB. No opt-in is
    // simulated by an opt-in smaller than the launch's dynamic shared memory.
    let e = try_run("h200", "big_shared", &[("n", 12288), ("opt_in", 0)]).unwrap_err();
    assert!(
        e.contains("shared_bytes")
            && e.contains("49152 exceeds the launch's max_dynamic_shared_bytes = 0"),
        "{e}"
    );
    // The opt-in cannot exceed the device's limit: 227 KB per block on the H200, 1 KB static.
    let e = try_run("h200", "big_shared", &[("opt_in", 232448)]).unwrap_err();
    assert!(
        e.contains("max_dynamic_shared_bytes") && e.contains("allowed: 0 to 231424"),
        "{e}"
    );
    // A V100 allows 96 KB per block: 100 KB is refused even with the opt-in.
    let e = try_run("v100", "big_shared", &[]).unwrap_err();
    assert!(e.contains("allowed: 0 to 97280"), "{e}");
    // Within 227 KB an H200 block runs alone on its SM.
    let l = &try_run(
        "h200",
        "big_shared",
        &[("n", 57856), ("opt_in", 231424), ("blocks", 1)],
    )
    .unwrap()[0];
    assert_eq!(l.occupancy_blocks, 1);
}

fn run_printf(fifo: Option<u64>) -> LaunchResult {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join("tests/fixtures/tensor/printf.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let opts = Options {
        printf_fifo_bytes: fifo,
        ..Default::default()
    };
    run_workload(&cfg, &w, &opts).unwrap().launches.remove(0)
}

/// The first call of `printf.cu` for thread `t` of block `b` (x[i] = i, n = 128), as C's printf
/// formats it.
fn first_call(b: u32, t: u32) -> String {
    let v = (b * 64 + t) as f32;
    let d = f64::from(v);
    let e = format!("{:.2e}", v * 1000.0); // Rust: 1.60e4; C: 1.60e+04
    let (m, x) = e.split_once('e').unwrap();
    let x: i32 = x.parse().unwrap();
    let g = d / 3.0;
    // %g of these values (below 1e6, at least 1e-4 or 0): six significant digits, no trailing zeros.
    let g = if g == 0.0 {
        "0".to_string()
    } else {
        let decimals = (5 - g.log10().floor() as i32).max(0) as usize;
        let s = format!("{g:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    format!(
        "block {b} thread {t:3}: v={d:.6} {m}e+{x:02} {g} |{:<6}|{:06}| 0x{:x} BEEF\n",
        -(t as i32),
        b * 100 + t,
        255 + t
    )
}

#[test]
fn printf_prints_what_c_would_in_block_warp_call_lane_order() {
    let l = run_printf(None);
    let mut want = String::new();
    for b in 0..2 {
        for t in [0, 16] {
            want += &first_call(b, t);
        }
        if b == 0 {
            // Thread 1's call comes after the warp's first call (lanes 0 and 16).
            want += "-1234567890123 18446744073709551615 -1234567890123 18446742839141661493 ok str  99.5% 0x1234\n";
        }
        for t in [32, 48] {
            want += &first_call(b, t);
        }
    }
    assert_eq!(String::from_utf8(l.printf.text.clone()).unwrap(), want);
    assert_eq!((l.printf.calls, l.printf.overwritten), (9, 0));
    assert!(l.notes.iter().all(|n| !n.contains("printf")));
}

#[test]
fn an_overflowing_printf_fifo_loses_the_oldest_calls() {
    // Records: 16 bytes + the argument buffer (48 bytes for the first call, 64 for the second).
    // Block 1's four calls take 256 bytes; the fifth newest (block 0, thread 48) does not fit 300.
    let l = run_printf(Some(300));
    let text = String::from_utf8(l.printf.text.clone()).unwrap();
    let want: String = [0, 16, 32, 48].iter().map(|&t| first_call(1, t)).collect();
    assert_eq!(text, want);
    assert_eq!((l.printf.calls, l.printf.overwritten), (9, 5));
    assert!(
        l.notes
            .iter()
            .any(|n| n.contains("5 of 9 calls overwritten") && n.contains("300-byte")),
        "{:?}",
        l.notes
    );
}
