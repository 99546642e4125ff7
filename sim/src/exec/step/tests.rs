//! Guards: the straight-line path against the general one, entry by entry.

use super::*;

/// Loads and stores of converged warps through [`Ctx::mem_step`] give what the general
/// path gives: the same outputs, counters, per-PC statistics and timing, on workloads with
/// global and shared loads and stores, guards, divergence and barriers.
#[test]
fn memory_entries_match_the_general_path() {
    let cases: [(&str, &[(&str, i64)]); 4] = [
        ("transpose_smem", &[("n", 64)]),
        ("read_stride", &[("n", 3000)]),
        ("reduce", &[("n", 65536)]),
        ("stencil_1d", &[("n", 65536)]),
    ];
    for (name, sets) in cases {
        crate::testing::same_both_ways("rtx3090", name, sets, |p, on| p.mem_general = on);
    }
}

/// Full warps' segments ([`Ctx::segment`]) give what running their entries one at a time
/// gives (plain runs, loads and stores through the memory path): the same outputs,
/// counters, per-PC statistics and timing, on workloads with parameters, invariant and
/// f32 forms, global and shared word accesses, branches, barriers and partial warps.
#[test]
fn segments_match_entry_by_entry() {
    let cases: [(&str, &[(&str, i64)]); 7] = [
        ("transpose_smem", &[("n", 64)]),
        ("read_stride", &[("n", 3000)]),
        ("reduce", &[("n", 8192)]),
        ("stencil_1d", &[("n", 4096)]),
        ("smem_stride", &[]),
        ("conv2d", &[("n", 256)]),
        ("pseudo_random", &[("n", 20000)]),
    ];
    // Both GPUs (82 and 132 SMs, other latencies), each case on one of them in turn.
    for (i, (name, sets)) in cases.into_iter().enumerate() {
        let gpu = ["rtx3090", "h200"][i % 2];
        crate::testing::same_both_ways(gpu, name, sets, |p, on| p.segments_off = on);
    }
}

/// A kernel whose segments hold guarded word accesses (a guard that lets a whole warp
/// run, part of one, or none, and negated), f32 forms and invariant entries, run on blocks
/// with a partial warp and under budgets that end a launch inside a segment, gives the same
/// results and errors with segments as entry by entry, and faults alike where a word access
/// inside a segment is misaligned.
#[test]
fn segments_match_entry_by_entry_with_guards_and_budgets() {
    const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry seg_mix(.param .u64 p_dst, .param .u32 p_k, .param .u64 p_g)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<20>;
	ld.param.u64 	%rd1, [p_dst];
	ld.param.u32 	%r1, [p_k];
	ld.param.u64 	%rd9, [p_g];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	mul.wide.u32 	%rd3, %r5, 8;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	setp.lt.u32 	%p1, %r2, %r1;
	add.s32 	%r7, %r6, %r5;
	@%p1 st.global.u32 	[%rd4], %r7;
	mov.b32 	%f1, %r6;
	add.f32 	%f2, %f1, %f1;
	@!%p1 ld.global.u32 	%r8, [%rd4+4];
	mul.f32 	%f3, %f2, %f1;
	add.s64 	%rd5, %rd4, %rd9;
	st.global.f32 	[%rd5+4], %f3;
	ld.global.u32 	%r9, [%rd4+4];
	add.s32 	%r10, %r9, %r8;
	st.global.u32 	[%rd4], %r10;
	ret;
}
";
    let dir = std::env::temp_dir().join(format!("sim-seg-mix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("seg_mix.ptx"), PTX).unwrap();
    let launch = |k: u32, g: u64| {
        format!(
            "[[launch]]\nlabel = \"k{k}g{g}\"\nkernel = \"seg_mix\"\ngrid = [3, 1, 1]\n\
             block = [80, 1, 1]\nargs = [\"dst\", {k}, {g}]\n\n"
        )
    };
    let head = "name = \"seg_mix\"\ndescription = \"test\"\nptx = \"seg_mix.ptx\"\n\
                [params]\nn = 1\n\
                [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"600\"\n\
                init = \"random:5\"\noutput = true\n\n";
    // Guards that pass for no lane, part of the first warp, whole warps, every lane.
    let mut text = head.to_string();
    for k in [0, 5, 32, 33, 64, 80] {
        text += &launch(k, 0);
    }
    // A misaligned store inside a segment faults.
    let faults = format!("{head}{}", launch(40, 2));
    segments_vs_entries(&dir, "seg_mix", &[(text, false), (faults, true)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A kernel whose segments hold branches (guarded by a predicate or its negation, taken by
/// no lane, part of a warp or all its lanes; unguarded; a loop's backward branch) and
/// exits, run on blocks with a partial warp and under budgets that end a launch anywhere,
/// gives the same results and errors with segments as entry by entry.
#[test]
fn segments_with_branches_match_entry_by_entry() {
    const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry seg_bra(.param .u64 p_dst, .param .u32 p_k)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<6>;
	ld.param.u64 	%rd1, [p_dst];
	ld.param.u32 	%r1, [p_k];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	mul.wide.u32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	setp.lt.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L_a;
	add.s32 	%r6, %r6, 1;
	st.global.u32 	[%rd4], %r6;
$L_a:
	setp.ge.u32 	%p2, %r2, %r1;
	@!%p2 bra 	$L_b;
	add.s32 	%r6, %r6, 2;
$L_b:
	mov.u32 	%r8, 0;
$L_loop:
	add.s32 	%r8, %r8, 1;
	add.s32 	%r6, %r6, %r8;
	setp.lt.u32 	%p3, %r8, 3;
	@%p3 bra 	$L_loop;
	add.s32 	%r7, %r6, %r5;
	st.global.u32 	[%rd4], %r7;
	bra 	$L_c;
	add.s32 	%r7, %r7, 100;
$L_c:
	setp.eq.u32 	%p3, %r1, 0;
	@%p3 bra 	$L_d;
	st.global.u32 	[%rd4+1200], %r7;
	ret;
$L_d:
	st.global.u32 	[%rd4+2400], %r7;
}
";
    let dir = std::env::temp_dir().join(format!("sim-seg-bra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("seg_bra.ptx"), PTX).unwrap();
    let mut text = "name = \"seg_bra\"\ndescription = \"test\"\nptx = \"seg_bra.ptx\"\n\
                    [params]\nn = 1\n\
                    [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"900\"\n\
                    init = \"random:7\"\noutput = true\n\n"
        .to_string();
    // Guards that pass for no lane, part of the first warp, whole warps, every lane.
    for k in [0, 5, 32, 33, 64, 80] {
        text += &format!(
            "[[launch]]\nlabel = \"k{k}\"\nkernel = \"seg_bra\"\ngrid = [3, 1, 1]\n\
             block = [80, 1, 1]\nargs = [\"dst\", {k}]\n\n"
        );
    }
    segments_vs_entries(&dir, "seg_bra", &[(text, false)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs each workload of `texts` (written into `dir` as `{name}_{k}.toml`, next to its PTX)
/// under budgets that end a launch at many places, with segments and entry by entry
/// ([`super::super::fast::tests::SEGMENTS_OFF`]); asserts the same launches or error, and
/// that the unlimited run fails exactly where the text's flag says so.
fn segments_vs_entries(dir: &std::path::Path, name: &str, texts: &[(String, bool)]) {
    for (k, (text, faults)) in texts.iter().enumerate() {
        let path = dir.join(format!("{name}_{k}.toml"));
        std::fs::write(&path, text).unwrap();
        let cfg = format!("{}/../configs/rtx3090.toml", env!("CARGO_MANIFEST_DIR"));
        let cfg = crate::config::GpuConfig::load(std::path::Path::new(&cfg)).unwrap();
        let w = crate::workload::Workload::resolve(path.to_str().unwrap()).unwrap();
        for budget in [
            u64::MAX,
            1,
            7,
            13,
            17,
            20,
            40,
            101,
            200,
            230,
            240,
            250,
            252,
            254,
            260,
            300,
            333,
            400,
        ] {
            let opts = crate::run::Options {
                keep_outputs: true,
                max_warp_instructions: budget,
                ..Default::default()
            };
            let run = |off: bool| {
                let mut opts = opts.clone();
                opts.paths.segments_off = off;
                let r = crate::run::run_workload(&cfg, &w, &opts);
                match r {
                    Ok(r) => format!("{:?}", r.launches),
                    Err(e) => format!("error: {e}"),
                }
            };
            let (seg, one) = (run(false), run(true));
            if budget == u64::MAX {
                assert_eq!(one.starts_with("error"), *faults, "{k}: {one:.300}");
            }
            assert_eq!(seg, one, "{name} {k} budget {budget}");
        }
    }
}

/// Two overlapping runs and one at the end: each PC counts the runs over it.
#[test]
fn runs_fold_into_per_pc_counts() {
    let mut runs = Runs {
        diff: vec![[0; 2]; 5],
        ..Default::default()
    };
    count_run(&mut runs.diff, 0, 3, 32);
    count_run(&mut runs.diff, 1, 4, 5);
    count_run(&mut runs.diff, 3, 4, 7);
    let mut per_pc = vec![PcStats::default(); 4];
    per_pc[2].executed = 10;
    runs.fold(&mut per_pc);
    let got: Vec<(u64, u64)> = per_pc.iter().map(|p| (p.executed, p.threads)).collect();
    assert_eq!(got, [(1, 32), (2, 37), (12, 37), (2, 12)]);
    assert!(runs.diff.iter().all(|d| *d == [0, 0]));
}
