//! The memory budget (`--max-memory`, else 3/4 of what the host has): what a run needs is
//! checked before it is allocated, and the error names the input (the buffer, the kernel, the
//! trace of a runaway launch) instead of an abort or a host out of memory.

use super::*;

/// A runaway kernel's trace grew about 13 bytes a warp instruction until the host ran out: the
/// default instruction budget (2^34) could never be reached. Under the 4 GiB address-space limit
/// of these tests, and under --max-memory, it is an error: the batch stops where its trace
/// reaches the half of the budget the traces in flight get, not later.
#[test]
fn a_runaway_kernels_trace_is_bounded_by_the_budget() {
    sim(&[
        "run",
        "configs/h200.toml",
        "tests/fixtures/runaway.toml",
        "--ptxas",
        "off",
    ])
    .fails_with(&[
        "launch `spin`: the blocks of one SM ran ",
        " warp instructions in a batch, whose trace (",
        "--max-memory SIZE sets the budget",
    ]);
    let out = sim(&[
        "run",
        "configs/h200.toml",
        "tests/fixtures/runaway.toml",
        "--ptxas",
        "off",
        "--max-memory",
        "256M",
    ]);
    out.fails_with(&[
        "the blocks of one SM ran ",
        " warp instructions in a batch, whose trace (128.0 MiB at 48 bytes each)",
        "that --max-memory 256.0 MiB leaves for the traces in flight holds",
    ]);
    // The count, not the time, is the property (timed tests are not allowed): the trace stops
    // within one batch step (under 1 MiB) of its 128 MiB share.
    let ran: u64 = out
        .stderr
        .split("SM ran ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (trace, share) = (ran * 48, 128u64 << 20);
    assert!(
        trace <= share && trace > share - (1 << 20),
        "{ran} warp instructions\n{out}"
    );
}

/// Two buffers that each fit, refused together before either is allocated.
#[test]
fn buffers_beyond_the_budget_are_refused_naming_the_buffer() {
    let p = workload("buffers", str::to_string, |t| {
        t.replace("n = 1000", "n = 100000000")
    });
    sim(&["run", "configs/h200.toml", &p, "--max-memory", "600M"]).fails_with(&[
        &p,
        "buffer[1].count: buffer `dst` (100000000 elements of 4 bytes) needs 381.5 MiB of host \
memory to simulate; ",
        "left of --max-memory 600.0 MiB",
    ]);
    let out = sim(&["run", "configs/h200.toml", &p, "--max-memory", "4X"]);
    assert_eq!(out.code, Some(2), "{out}");
    assert!(
        out.stderr
            .starts_with("error: invalid value '4X' for '--max-memory <SIZE>'"),
        "{out}"
    );
    let help = sim(&["run", "--help"]);
    assert!(help.stdout.contains("--max-memory <SIZE>"), "{help}");
}

/// A 10 MB straight-line PTX file (400,000 instructions): its per-instruction state on the
/// H200's 132 SMs took 9.2 GB, allocated before anything ran (43 s, or an abort on a smaller
/// host). An SM now holds that state only once a block reaches it: add_one's 4 blocks run on
/// 4 SMs, within the 4 GiB of these tests (`/usr/bin/time -v`: 9,162,856 KB before, 775,476 KB
/// after), and the state is still checked against the budget first.
#[test]
fn a_ten_megabyte_straight_line_kernel_runs_on_132_sms_within_the_budget() {
    let body = "\tadd.s32 \t%r7, %r7, 1;\n".repeat(400_000);
    let p = workload(
        "straight",
        move |t| t.replacen("\tst.global.u32", &format!("{body}\tst.global.u32"), 1),
        str::to_string,
    );
    let bytes = std::fs::metadata(Path::new(&p).with_file_name("add_one.ptx"))
        .unwrap()
        .len();
    assert!(bytes > 9_000_000, "{bytes}");
    // 2 GiB holds the state of the 4 SMs the blocks reach (579.9 MiB, below) and their traces,
    // not that of all 132 (about 19 GiB): a memory bound where this test had a time bound (it
    // took 43 s before).
    let out = sim(&[
        "run",
        "configs/h200.toml",
        &p,
        "--ptxas",
        "off",
        "--format",
        "json",
        "--max-memory",
        "2G",
    ]);
    out.succeeds();
    // 32 warps (1000 threads in blocks of 256), each the 17 instructions of add_one and the
    // 400,000 additions.
    assert!(
        out.stdout
            .contains(&format!("\"smsp__inst_executed.sum\": {},", 32 * 400_017)),
        "{out}"
    );
    sim(&[
        "run",
        "configs/h200.toml",
        &p,
        "--ptxas",
        "off",
        "--max-memory",
        "200M",
    ])
    .fails_with(&[
        "launch `add_one`: kernel `add_one` has 400019 instructions: the per-instruction state \
of 4 SMs needs 579.9 MiB of host memory to simulate; ",
        "left of --max-memory 200.0 MiB",
    ]);
}

/// A 1 GiB `.global` array without an initializer is zero pages the kernel touches as it goes:
/// the plan copied its contents for `validate` (every page touched: 1.1 GB resident, and an
/// abort under a 3 GiB address-space limit), and nvdisasm held the cubin's 1 GiB `.nv.global`
/// section for the SASS listing. Now it runs in 77 MB (`/usr/bin/time -f %M sim run h200` of this
/// workload).
#[test]
fn a_gigabyte_global_array_without_data_runs_in_three_gigabytes_of_address_space() {
    let global = ".address_size 64\n.global .b8 g[1073741824];".to_string();
    let p = workload(
        "zero-global",
        move |t| t.replacen(".address_size 64", &global, 1),
        str::to_string,
    );
    if Command::new("prlimit").arg("--version").output().is_err() {
        return; // no prlimit on this host: nothing to limit the run by
    }
    let mut cmd = Command::new("prlimit");
    let out = cmd
        .arg(format!("--as={}", 3u64 << 30))
        .arg(env!("CARGO_BIN_EXE_sim"))
        .args(["run", "configs/h200.toml", &p, "--format", "json"])
        .current_dir(root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The launch ran to its report (the binary before aborted allocating the copy).
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"smsp__inst_executed.sum\""), "{stdout}");
}
