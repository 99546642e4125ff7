//! End-to-end specification of the compute-sanitizer-like checks of `sim run` (issue 41), on the
//! kernels of `tests/fixtures/sanitize/kernels.cu` (its NVRTC PTX is committed beside it):
//!
//! 1. racecheck (`--check racecheck`): the tiled matrix multiply has no hazard; without its second
//!    `__syncthreads()` every shared load of the inner product races with the next iteration's
//!    tile store (write after read), named with both PTX and CUDA lines; warnings, exit 0, unless
//!    `--check-fail`. Within a warp, `__syncwarp()` orders accesses.
//! 2. synccheck: a block whose warps wait at `bar.sync 0` and `bar.sync 1` is a deadlock error
//!    naming both barriers, lines and warps (always); `--check synccheck` reports a
//!    `__syncthreads()` reached by half of each warp.
//! 3. forward progress: a spin-wait on a flag set by another warp or by another lane of the same
//!    warp finishes with the published value; a spin on a flag nobody sets is still a runaway.
//! 4. memcheck's limit (`--memcheck-limit N`): N distinct errors are listed, the rest counted;
//!    an error names the CUDA line (`kernels.cu:18`) where the PTX has `.loc`.
//!
//! The binary runs from the workspace root, so paths read as a user types them.

mod common;

use common::{root, sim};

/// Runs `sim run configs/h200.toml tests/fixtures/sanitize/FIXTURE.toml ARGS...`: (exit code,
/// stdout, stderr).
fn run(fixture: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let path = format!("tests/fixtures/sanitize/{fixture}.toml");
    let mut all = vec!["run", "configs/h200.toml", &path];
    all.extend_from_slice(args);
    sim(&all)
}

/// The 1-based lines of kernels.ptx that hold `needle`, within the entry `kernel`.
fn ptx_lines(kernel: &str, needle: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/sanitize/kernels.ptx")).unwrap();
    let start = text
        .lines()
        .position(|l| l.starts_with(".visible .entry") && l.contains(&format!(" {kernel}(")))
        .expect("the entry");
    text.lines()
        .enumerate()
        .skip(start + 1)
        .take_while(|(_, l)| !l.starts_with(".visible .entry"))
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The racecheck warnings of stderr `err`.
fn warnings(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("warning: launch"))
        .collect()
}

// 1. racecheck

#[test]
fn the_tiled_matmul_without_its_second_barrier_is_reported_and_with_it_is_not() {
    let (code, _, err) = run("matmul", &["--check", "racecheck"]);
    assert_eq!(code, Some(0), "a race is a warning\n{err}");
    assert!(
        err.contains("racecheck: launch `tiled`: 0 distinct hazards"),
        "{err}"
    );
    let w = warnings(&err);
    assert!(
        w.iter().all(|l| l.contains("launch `missing_sync`")),
        "{err}"
    );
    // Every hazard: a shared load of the inner product (kernels.cu:22) before the next
    // iteration's store of a tile (kernels.cu:18 for `as`, :19 for `bs`).
    let stores = ptx_lines("matmul_missing_sync", "st.shared.f32");
    let loads = ptx_lines("matmul_missing_sync", "ld.shared.f32");
    assert_eq!((stores.len(), loads.len()), (2, 32));
    for l in &w {
        assert!(
            l.contains("write-after-read hazard on shared memory"),
            "{l}"
        );
        assert!(l.contains("(kernels.cu:22): `ld.shared.f32"), "{l}");
        assert!(
            l.contains(&format!("PTX line {} (kernels.cu:18)", stores[0]))
                || l.contains(&format!("PTX line {} (kernels.cu:19)", stores[1])),
            "{l}"
        );
    }
    // 30 of the 32 loads of the unrolled inner product are listed (as measured: racecheck keeps
    // only the last read of each byte, exec/race.rs, so a pair can go unseen).
    assert_eq!(w.len(), 30, "{err}");
    assert!(
        err.contains("racecheck: launch `missing_sync`: 30 distinct hazards"),
        "{err}"
    );
    // The JSON holds the same hazards per launch.
    let (code, out, err) = run("matmul", &["--check", "racecheck", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hazards = |i: usize| {
        v["workloads"][0]["launches"][i]["hazards"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!((hazards(0), hazards(1)), (0, 30), "{out}");
}

#[test]
fn check_fail_makes_a_hazard_an_error() {
    let (code, _, err) = run("shared_race", &["--check", "racecheck", "--check-fail"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("racecheck found 2 distinct hazards (--check-fail)"),
        "{err}"
    );
}

#[test]
fn hazards_between_warps_are_reported_and_a_syncwarp_orders_one_warp() {
    let (code, _, err) = run("shared_race", &["--check", "racecheck"]);
    assert_eq!(code, Some(0), "{err}");
    let st = ptx_lines("shared_race", "st.shared.u32");
    let ld = ptx_lines("shared_race", "ld.shared.u32");
    assert_eq!((st.len(), ld.len()), (1, 2));
    // Only the read of the other warp's word (the second load) races, both ways round: warp 0
    // reads what warp 1 writes after it (write after read), warp 1 reads what warp 0 wrote
    // (read after write); the same-warp read after __syncwarp() does not.
    let w = warnings(&err);
    assert_eq!(w.len(), 2, "{err}");
    assert!(
        w[0].contains(&format!(
            "write-after-read hazard on shared memory between thread (0,0,0) at PTX line {}",
            ld[1]
        )),
        "{err}"
    );
    assert!(
        w[0].contains(&format!(
            "thread (32,0,0) at PTX line {} (kernels.cu:85)",
            st[0]
        )),
        "{err}"
    );
    assert!(
        w[1].contains(&format!(
            "read-after-write hazard on shared memory between thread (0,0,0) at PTX line {}",
            st[0]
        )),
        "{err}"
    );
    assert!(w.iter().all(|l| l.contains("(128 byte pairs)")), "{err}");
}

#[test]
fn without_racecheck_nothing_is_checked() {
    let (code, _, err) = run("shared_race", &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("racecheck"), "{err}");
}

// 2. synccheck

#[test]
fn warps_at_different_barriers_are_a_deadlock_naming_both() {
    let b0 = ptx_lines("mismatched_barriers", "bar.sync 0;");
    let b1 = ptx_lines("mismatched_barriers", "bar.sync 1;");
    let (code, _, err) = run("mismatched", &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!(
        "launch `mismatched`: deadlock: block (0,0,0) waits at 2 different barriers, none of which every running thread reaches (on the GPU the block never finishes): at `bar.sync 0` (PTX line {} (kernels.cu:41): `bar.sync 0; // end inline asm`): warp 0 (threads (0,0,0)..(31,0,0)); at `bar.sync 1` (PTX line {} (kernels.cu:43): `bar.sync 1; // end inline asm`): warp 1 (threads (32,0,0)..(63,0,0))",
        b0[0], b1[0]
    )), "{err}");
}

#[test]
fn a_barrier_reached_by_half_a_warp_is_a_synccheck_error() {
    let bar = ptx_lines("divergent_barrier", "bar.sync");
    assert_eq!(bar.len(), 1);
    let (code, _, err) = run("divergent", &["--check", "synccheck"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!(
        "synccheck: divergent barrier: `bar.sync 0` at PTX line {} (kernels.cu:51) reached by lanes 0x0000ffff of warp 0 of block (0,0,0) (thread (0,0,0) first) while its live lanes 0xffff0000 (thread (16,0,0) first",
        bar[0]
    )), "{err}");
    // Without synccheck it runs, as before.
    assert_eq!(run("divergent", &[]).0, Some(0));
}

// 3. forward progress

#[test]
fn spin_waits_on_another_warp_or_lane_finish_with_the_published_value() {
    let dir = std::env::temp_dir().join(format!("gpumemsim-sanitize-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _, err) = run(
        "spin_wait",
        &[
            "--save-outputs",
            dir.to_str().unwrap(),
            "--max-warp-instructions",
            "1000000",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    // The last launch's `out`: each launch wrote 42 into its own slot.
    let npy = std::fs::read(dir.join("sanitize_spin_wait.lane0_waits_for_lane1.out.npy")).unwrap();
    let tail: Vec<i32> = npy[npy.len() - 16..]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(tail, [42, 42, 42, 0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_spin_on_a_flag_nobody_sets_is_still_a_runaway() {
    let (code, _, err) = run("spin_forever", &["--max-warp-instructions", "20000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("launch `spin_forever`: instruction budget of 20000 warp instructions exhausted (runaway kernel?)"), "{err}");
}

// memcheck's limit

#[test]
fn memcheck_limit_keeps_that_many_distinct_errors_and_counts_the_rest() {
    let (code, _, err) = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/out_of_bounds_twice.toml",
        "--memcheck-limit",
        "1",
    ]);
    assert_eq!(code, Some(2), "{err}");
    // The read past `src` (warp 3) is kept; the write past `dst`, made by warps 2 and 3, is
    // counted, not listed.
    assert!(err.contains("invalid global read of 4 bytes"), "{err}");
    assert!(!err.contains("invalid global write"), "{err}");
    assert!(
        err.contains("; and errors of 2 more warp instructions, not kept beyond 1 distinct errors (--memcheck-limit)"),
        "{err}"
    );
}

#[test]
fn a_memory_error_names_the_cuda_line_where_the_ptx_has_line_info() {
    // The tiled matmul of kernels.cu with `a` 100 floats short of n x n: the load of `a` into
    // the shared tile (kernels.cu:18) reads past it.
    let dir = std::env::temp_dir().join(format!("gpumemsim-memcheck-loc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let matmul =
        std::fs::read_to_string(root().join("tests/fixtures/sanitize/matmul.toml")).unwrap();
    let ptx = root().join("tests/fixtures/sanitize/kernels.ptx");
    let short = matmul
        .replace(
            "ptx = \"kernels.ptx\"",
            &format!("ptx = {:?}", ptx.display().to_string()),
        )
        .replacen(
            "count = \"n * n\"\ninit = \"random:1\"",
            "count = \"n * n - 100\"\ninit = \"random:1\"",
            1,
        );
    assert_ne!(short, matmul);
    let file = dir.join("short.toml");
    std::fs::write(&file, short).unwrap();
    let (code, _, err) = sim(&["run", "configs/h200.toml", file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("invalid global read of 4 bytes"), "{err}");
    assert!(err.contains("(kernels.cu:18): `ld.global"), "{err}");
}
