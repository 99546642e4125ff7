//! A user's kernel that gpumemsim was never bundled with: `tests/fixtures/user_kernel/histogram.cu`
//! (shared- and global-memory atomics, a warp vote, bit manipulation, 64- and 128-bit arithmetic).
//!
//! The simulator must run it from its `.cu` (compiled by NVRTC or clang, whichever it finds) and
//! from the PTX that NVRTC, clang and nvcc made of it, and all must agree: the same outputs, equal
//! to a reference computed here from the same input, and the same memory counters. The compilers'
//! instruction counts differ and are not compared (DESIGN.md: "The simulator must accept PTX from
//! nvcc, NVRTC and clang").
//!
//! `histogram.nvrtc.ptx` and `histogram.clang.ptx` are made by `make_ptx.sh`, `histogram.nvcc.ptx`
//! by `make_nvcc_ptx.sh` on a machine with the CUDA toolkit; each is stamped with the SHA-256 of the
//! `.cu` it came from. Once the nvcc variant is committed it is compared like the others.

mod common;

use common::root;
use sha2::{Digest, Sha256};
use sim::compile::{self, Compiler};
use sim::config::GpuConfig;
use sim::metrics::Counters;
use sim::run::{run_workload, LaunchResult, Options};
use sim::workload::init::{build, Elem};
use sim::workload::{Source, Workload};
use std::path::PathBuf;

const DIR: &str = "tests/fixtures/user_kernel";
const CONFIGS: [&str; 2] = ["configs/h200.toml", "configs/rtx3090.toml"];

fn config(path: &str) -> GpuConfig {
    GpuConfig::load(&root().join(path)).expect("shipped config loads")
}

fn toml_path() -> PathBuf {
    root().join(DIR).join("histogram.toml")
}

/// The histogram workload as committed (`cuda = "histogram.cu"`), or on one of the PTX files.
fn workload(ptx: Option<&str>) -> Workload {
    let text = std::fs::read_to_string(toml_path()).expect("histogram.toml");
    let text = match ptx {
        Some(p) => {
            assert!(text.contains("cuda = \"histogram.cu\""));
            text.replace("cuda = \"histogram.cu\"", &format!("ptx = \"{p}\""))
        }
        None => text,
    };
    Workload::from_toml_str(&text, Source::File(toml_path())).expect("workload parses")
}

/// The committed PTX variants: (compiler, file name), the nvcc one once it exists.
fn ptx_variants() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("NVRTC", "histogram.nvrtc.ptx"),
        ("clang", "histogram.clang.ptx"),
    ];
    if root().join(DIR).join("histogram.nvcc.ptx").exists() {
        v.push(("nvcc", "histogram.nvcc.ptx"));
    }
    v
}

/// What histogram.cu computes, from the same input, for `n` words and `blocks` blocks of 256.
fn reference(n: usize, blocks: usize) -> Vec<(String, Vec<u8>)> {
    let bytes = build("random:11", Elem::U32, n, &|_, _| Err("no files".into())).unwrap();
    let data: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut hist = [0u32; 256];
    for w in &data {
        for k in 0..4 {
            hist[(w >> (8 * k) & 0xff) as usize] += 1;
        }
    }
    let threads = blocks * 256;
    let (mut sum_lo, mut sum_hi, mut xor) = (0u64, 0u64, 0u32);
    let mut odd = vec![0u32; threads];
    for (t, odd) in odd.iter_mut().enumerate() {
        let mut acc = 0u128;
        for &w in data.iter().skip(t).step_by(threads) {
            let p = u64::from(w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            acc = acc.wrapping_add(u128::from(p) * u128::from(w | 1));
            *odd += w.count_ones() & 1;
            xor ^= w.swap_bytes();
        }
        sum_lo = sum_lo.wrapping_add(acc as u64);
        sum_hi = sum_hi.wrapping_add((acc >> 64) as u64);
    }
    let (mut popc, mut max_brev, mut lowest) = (0u32, 0u32, u32::MAX);
    for warp in odd.chunks(32) {
        let vote = warp
            .iter()
            .enumerate()
            .fold(0u32, |v, (l, o)| v | (o & 1) << l);
        popc += vote.count_ones();
        max_brev = max_brev.max(vote.reverse_bits());
        let ffs = if vote == 0 {
            0
        } else {
            vote.trailing_zeros() + 1
        };
        lowest = lowest.min(ffs);
    }
    let le32 = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    vec![
        ("hist".into(), le32(&hist)),
        (
            "checksum".into(),
            [sum_lo, sum_hi]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        ),
        ("stats".into(), le32(&[popc, max_brev, xor])),
        ("lowest".into(), le32(&[lowest])),
    ]
}

fn run(cfg: &GpuConfig, w: &Workload, compiler: Compiler, what: &str) -> LaunchResult {
    let opts = Options {
        keep_outputs: true,
        compiler,
        ..Default::default()
    };
    let mut r = run_workload(cfg, w, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(r.launches.len(), 1);
    r.launches.remove(0)
}

/// The counters that are the kernel's, not its compiler's: instruction counts, and the uniform
/// parameter loads idc/imc also count, depend on the compiler's code (frontends.rs).
fn memory_counters(c: &Counters) -> Counters {
    let mut c = c.clone();
    c.inst_executed = 0;
    c.idc_requests = 0;
    c.idc_hits = 0;
    c.imc_requests = 0;
    c
}

fn check_outputs(l: &LaunchResult, want: &[(String, Vec<u8>)], what: &str) {
    for (name, bytes) in want {
        let got = l
            .outputs
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{what}: no output {name}"));
        assert!(
            got.1 == *bytes,
            "{what}: output `{name}` differs from the reference"
        );
    }
}

#[test]
fn user_kernel_same_counters_from_cu_and_ptx() {
    let nvrtc = compile::nvrtc_available();
    let clang = compile::find_clang().is_some();
    assert!(
        nvrtc || clang,
        "this test compiles tests/fixtures/user_kernel/histogram.cu and needs NVRTC or clang: \
{} ; or {} (CI installs NVRTC with pip, see .ci/run)",
        compile::NVRTC_HINT,
        compile::CLANG_HINT
    );
    let cfg = config("configs/h200.toml");
    let want = reference(65536, 32);
    // The .cu as a user runs it (the compiler found first), then with each compiler there is.
    let mut runs = vec![(
        "histogram.cu (auto)".to_string(),
        run(&cfg, &workload(None), Compiler::Auto, "histogram.cu"),
    )];
    for (ok, c, name) in [
        (nvrtc, Compiler::Nvrtc, "NVRTC"),
        (clang, Compiler::Clang, "clang"),
    ] {
        if ok {
            let what = format!("histogram.cu ({name})");
            runs.push((what.clone(), run(&cfg, &workload(None), c, &what)));
        }
    }
    for (compiler, file) in ptx_variants() {
        let what = format!("{file} ({compiler})");
        runs.push((
            what.clone(),
            run(&cfg, &workload(Some(file)), Compiler::Auto, &what),
        ));
    }
    let (first, base) = &runs[0];
    let expected = memory_counters(&base.counters);
    // The kernel's atomics are all there: 4 shared atomics per loop iteration, 8 per block in the
    // merge loop... at least one of every kind the kernel has.
    assert!(expected.shared_atom_inst > 0 && expected.global_red_inst > 0);
    for (what, l) in &runs {
        check_outputs(l, &want, what);
        assert_eq!(
            memory_counters(&l.counters),
            expected,
            "{what} and {first}: memory counters differ"
        );
    }
}

#[test]
fn user_kernel_nvrtc_clang_and_nvcc_ptx_give_identical_outputs_and_counters() {
    let want = reference(65536, 32);
    for path in CONFIGS {
        let cfg = config(path);
        let runs: Vec<(String, LaunchResult)> = ptx_variants()
            .into_iter()
            .map(|(compiler, file)| {
                let what = format!("{file} ({compiler}) on {path}");
                (
                    what.clone(),
                    run(&cfg, &workload(Some(file)), Compiler::Auto, &what),
                )
            })
            .collect();
        for (what, l) in &runs {
            check_outputs(l, &want, what);
            assert_eq!(
                memory_counters(&l.counters),
                memory_counters(&runs[0].1.counters),
                "{what} and {}: memory counters differ",
                runs[0].0
            );
        }
        // 32 blocks x 8 warps x 8 iterations x 4 shared atomics; the red of the merge loop and the
        // 64-bit checksum atomics (their results unused: RED, as ptxas emits).
        let c = &runs[0].1.counters;
        assert_eq!(c.shared_atom_inst, 32 * 8 * 8 * 4);
        assert_eq!(c.global_atom_inst, 0);
        assert!(c.global_red_inst >= 32 * 8 * 3);
    }
}

#[test]
fn user_kernel_ptx_is_stamped_with_the_current_source() {
    let source = std::fs::read(root().join(DIR).join("histogram.cu")).unwrap();
    let sha: String = Sha256::digest(&source)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for (_, file) in ptx_variants() {
        let text = std::fs::read_to_string(root().join(DIR).join(file)).unwrap();
        let stamp = text.lines().next().unwrap_or("");
        assert!(
            stamp.starts_with(&format!(
                "// gpumemsim: generated from histogram.cu sha256={sha} by "
            )),
            "{DIR}/{file} is not the PTX of the current histogram.cu (stamp: `{stamp}`): run \
{DIR}/make_ptx.sh (and make_nvcc_ptx.sh where nvcc is installed)"
        );
    }
}

/// Runs the `sim` binary from the workspace root with `env` on top of (or, with `clear`, instead
/// of) this process's environment.
fn sim_cli(args: &[&str], env: &[(&str, &str)], clear: bool) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sim"));
    cmd.args(args).current_dir(root());
    if clear {
        cmd.env_clear();
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("sim runs")
}

#[test]
fn the_cli_runs_a_cu_workload_and_says_what_a_missing_compiler_takes() {
    let toml = format!("{DIR}/histogram.toml");
    let args = [
        "run",
        "configs/h200.toml",
        toml.as_str(),
        "--format",
        "json",
    ];
    // With the compilers of this machine (the first test requires one).
    if compile::nvrtc_available() || compile::find_clang().is_some() {
        let out = sim_cli(&args, &[], false);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let m = &json["workloads"][0]["launches"][0]["metrics"];
        assert_eq!(m["smsp__sass_inst_executed_op_shared_atom.sum"], 8192);
        // Issue 42: `sim run` never said which compiler compiled the kernel.
        let c = &json["workloads"][0]["compiled"];
        let by = c["compiler"].as_str().unwrap_or_default();
        assert!(by.starts_with("NVRTC ") || by.starts_with("clang "), "{c}");
        assert_eq!(c["arch"], "sm_90", "{c}");
        assert!(
            c["source"].as_str().unwrap().ends_with("histogram.cu"),
            "{c}"
        );
    }
    // An unknown compiler is a usage error, on the command line or in the environment.
    let out = sim_cli(&[&args[..], &["--compiler", "nvcc"]].concat(), &[], false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: auto, nvrtc, clang"));
    let out = sim_cli(&args, &[("GPUMEMSIM_COMPILER", "nvcc")], false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GPUMEMSIM_COMPILER: unknown compiler"));
    // No clang on the PATH and no libnvrtc on LD_LIBRARY_PATH: one error line saying how to get
    // either (unless libnvrtc sits in a system library directory, where it is found anyway).
    let out = sim_cli(&args, &[("PATH", "/nonexistent")], true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        for needle in [
            "histogram.cu",
            "no CUDA compiler found",
            "pip install nvidia-cuda-nvrtc-cu12",
            "apt-get install clang-19",
        ] {
            assert!(stderr.contains(needle), "`{needle}` missing from: {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // Asking for clang where there is none names the package too.
    let out = sim_cli(
        &[&args[..], &["--compiler", "clang"]].concat(),
        &[("PATH", "/nonexistent")],
        true,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("clang not found: apt-get install clang-19")
    );
}
