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
