use super::*;

/// `ptxas -v -arch=sm_90 kernels/ptx/transpose.ptx` of ptxas 12.9.86 (nvidia-cuda-nvcc-cu12),
/// verbatim.
const TRANSPOSE_SM90: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'transpose_naive_col' for 'sm_90'
ptxas info    : Function properties for transpose_naive_col
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 19.661 ms
ptxas info    : Compiling entry function 'transpose_naive_row' for 'sm_90'
ptxas info    : Function properties for transpose_naive_row
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.606 ms
ptxas info    : Compiling entry function 'copy_col' for 'sm_90'
ptxas info    : Function properties for copy_col
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 14.828 ms
ptxas info    : Compiling entry function 'copy_row' for 'sm_90'
ptxas info    : Function properties for copy_row
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.314 ms
";

#[test]
fn registers_per_entry_parse_from_ptxas_12_9() {
    let want: Vec<(String, u32)> = [
        "transpose_naive_col",
        "transpose_naive_row",
        "copy_col",
        "copy_row",
    ]
    .iter()
    .map(|e| (e.to_string(), 10))
    .collect();
    assert_eq!(parse_registers(TRANSPOSE_SM90), want);
}

#[test]
fn registers_parse_from_ptxas_13_0_which_prints_no_function_properties() {
    // validate/measurements/h200/ptxas-registers.txt (ptxas 13.0, sm_90), verbatim.
    let log = "\
ptxas info    : Compiling entry function 'conv2d_global' for 'sm_90'
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
ptxas info    : Compiling entry function 'conv2d_constant' for 'sm_90'
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
";
    assert_eq!(
        parse_registers(log),
        [
            ("conv2d_global".to_string(), 32),
            ("conv2d_constant".to_string(), 32)
        ]
    );
}

#[test]
fn a_called_function_and_an_empty_kernel_parse_apart() {
    // ptxas 12.9 -v -arch=sm_90 of a module with an entry `k` calling the `.func f`, and an
    // empty entry `k2` (verbatim; `f`'s properties come last, with no register count).
    let log = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers
ptxas info    : Compile time = 1.544 ms
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 1.369 ms
ptxas info    : Function properties for f
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";
    assert_eq!(
        parse_registers(log),
        [("k2".to_string(), 4), ("k".to_string(), 8)]
    );
    // A callee's own `Used` line between an entry's header and its count is the callee's.
    let nested = "\
ptxas info    : Compiling entry function '_Z4mainPi' for 'sm_80'
ptxas info    : Function properties for _Z6helperi
ptxas info    : Used 6 registers, used 0 barriers
ptxas info    : Function properties for _Z4mainPi
ptxas info    : Used 18 registers, used 1 barriers, 368 bytes cmem[0]
";
    assert_eq!(parse_registers(nested), [("_Z4mainPi".to_string(), 18)]);
    assert_eq!(parse_registers("ptxas fatal   : Unknown option"), []);
}

#[test]
fn a_newer_target_is_lowered_to_the_gpus_and_others_stay() {
    let ptx = "//\n// Generated\n.version 8.8\n.target sm_80\n.address_size 64\n";
    let t = retarget(ptx, (7, 5));
    assert_eq!(
        t.text,
        "//\n// Generated\n.version 8.8\n.target sm_75\n.address_size 64\n"
    );
    assert_eq!(
        (t.arch.as_str(), t.lowered_from.as_deref()),
        ("sm_75", Some("sm_80"))
    );
    let t = retarget(ptx, (9, 0));
    assert!(matches!(t.text, Cow::Borrowed(_)));
    assert_eq!((t.arch.as_str(), t.lowered_from), ("sm_90", None));
    // Other target words stay; an arch-specific target on its own GPU keeps its suffix.
    let t = retarget(".target sm_90, texmode_independent\n", (8, 6));
    assert_eq!(t.text, ".target sm_86, texmode_independent\n");
    assert_eq!(retarget(".target sm_90a\n", (9, 0)).arch, "sm_90a");
    assert_eq!(retarget("no target\n", (8, 0)).arch, "sm_80");
}

#[test]
fn ptxas_errors_become_one_line_naming_the_ptx() {
    // ptxas 12.9 on a module with an unknown instruction at line 5 (verbatim, the temporary
    // path `/tmp/x/bad.ptx`).
    let log = "\
ptxas /tmp/x/bad.ptx, line 5; error   : Unknown modifier '.op'
ptxas /tmp/x/bad.ptx, line 5; error   : Not a name of any known instruction: 'bogus'
ptxas /tmp/x/bad.ptx, line 5; error   : Unknown symbol '%r1'
ptxas fatal   : Ptx assembly aborted due to errors
";
    let e = errors(log, Path::new("/tmp/x/bad.ptx"), "bad.ptx");
    assert_eq!(
        e,
        "ptxas bad.ptx, line 5; error   : Unknown modifier '.op'; ptxas bad.ptx, line 5; error   : \
         Not a name of any known instruction: 'bogus'; ptxas bad.ptx, line 5; error   : Unknown \
         symbol '%r1'"
    );
}

#[test]
fn module_names_become_file_names() {
    assert_eq!(file_name("kernels/ptx/transpose.ptx"), "transpose.ptx");
    assert_eq!(
        file_name("histogram.cu (PTX by NVRTC 12.9 for sm_90)"),
        "histogram.cu.ptx"
    );
    assert_eq!(file_name(""), "kernel.ptx");
    assert_eq!(file_name("../.hidden"), "kernel.hidden.ptx");
}

#[test]
fn a_command_that_hangs_is_stopped_at_its_timeout() {
    let start = Instant::now();
    let e = run_bounded(Command::new("sleep").arg("30"), Duration::from_millis(200)).unwrap_err();
    assert!(e.contains("no answer after"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(10));
    let out = run_bounded(
        Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
        Duration::from_secs(20),
    )
    .unwrap();
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str(), out.status.code()),
        ("out\n", "err\n", Some(3))
    );
    assert!(run_bounded(
        &mut Command::new("/nonexistent/ptxas"),
        Duration::from_secs(1)
    )
    .is_err());
}
