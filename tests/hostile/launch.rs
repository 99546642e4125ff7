//! Launches the CUDA driver refuses for what the PTX declares: a block larger than the kernel's
//! `.maxntid` or other than its `.reqntid` (`cuLaunchKernel`: CUDA_ERROR_INVALID_VALUE).

use super::*;

/// add_one with `directive` in its header, launched with `block`.
fn tuned(tag: &str, directive: &'static str, block: &'static str) -> String {
    workload(
        tag,
        move |t| t.replacen(")\n{", &format!(")\n{directive}\n{{"), 1),
        move |t| t.replace("block = [256, 1, 1]", block),
    )
}

#[test]
fn a_block_the_tuning_directives_forbid_is_refused_naming_the_directive() {
    let p = tuned("maxntid", ".maxntid 128, 1, 1", "block = [256, 1, 1]");
    run(&p).fails_with(&[
        &p,
        "launch[0].block",
        "[256, 1, 1] is 256 threads, more than the 128 of `.maxntid 128, 1, 1`",
        "kernel `add_one` at ",
        "add_one.ptx:22)",
        "CUDA_ERROR_INVALID_VALUE",
    ]);
    // The product counts: 64 x 4 threads fit .maxntid 256.
    let p = tuned("maxntid_ok", ".maxntid 256", "block = [64, 4, 1]");
    run(&p).succeeds();
    let p = tuned("reqntid", ".reqntid 256, 1", "block = [128, 2, 1]");
    run(&p).fails_with(&[
        "launch[0].block",
        "[128, 2, 1] is not the block `.reqntid 256, 1, 1` requires",
        "add_one.ptx:22)",
        "CUDA_ERROR_INVALID_VALUE",
    ]);
    let p = tuned(
        "reqntid_ok",
        ".reqntid 256 .minnctapersm 2",
        "block = [256, 1, 1]",
    );
    run(&p).succeeds();
}

/// An arch-specific (`a`) or family-specific (`f`) `.target` runs only on its GPU (family): the
/// driver does not load `.target sm_100a` PTX on an H200, and `ptxas -arch=sm_90` refuses it.
#[test]
fn an_arch_specific_target_of_another_gpu_is_refused_naming_the_line() {
    let target = |tag: &str, t: &'static str| {
        workload(
            tag,
            move |p| p.replacen(".target sm_80", t, 1),
            str::to_string,
        )
    };
    for (tag, t, what) in [
        (
            "sm100a",
            ".target sm_100a",
            "arch-specific: it runs on compute capability 10.0 only",
        ),
        (
            "sm100f",
            ".target sm_100f",
            "family-specific: it runs on compute capability 10.0 to 10.9",
        ),
        (
            "sm86a",
            ".target sm_86a",
            "arch-specific: it runs on compute capability 8.6 only",
        ),
    ] {
        let p = target(tag, t);
        run(&p).fails_with(&[
            &format!("add_one.ptx:13:1: {t} is {what}"),
            "configs/h200.toml describes a 9.0 GPU (NVIDIA H200)",
            "ptxas -arch=sm_90 refuses it",
        ]);
    }
    // Its own GPU runs it, and a plain newer target is simulated (lowered for ptxas).
    run(&target("sm90a", ".target sm_90a")).succeeds();
    run(&target("sm100", ".target sm_100")).succeeds();
}
