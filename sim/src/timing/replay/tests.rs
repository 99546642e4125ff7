//! The replay's rules, case by case.

use super::super::sched::tests::rng;
use super::*;
use crate::config::GpuConfig;
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::Overlap;
use crate::ptx::inst::{CacheOp, MemOp};
use crate::ptx::Type;

/// `mov` (one SASS instruction, one ALU step) into `dst` from `src`, or from nothing.
fn mov(dst: u16, src: Option<u16>) -> DInst {
    let mut s = [Src::Imm(0); 4];
    if let Some(r) = src {
        s[0] = Src::Reg(r);
    }
    DInst {
        op: Op::Mov(Type::U32),
        guard: NO_REG,
        guard_negated: false,
        dst: [dst, NO_REG, NO_REG, NO_REG],
        src: s,
        nsrc: u8::from(src.is_some()),
        addr: None,
        target: 0,
    }
}

/// A global load into `dst`.
fn load(dst: u16) -> DInst {
    DInst {
        op: Op::Ld(MemOp {
            space: StateSpace::Global,
            cache: CacheOp::Default,
            vec: 1,
            ty: Type::U32,
            volatile: false,
            nc: false,
        }),
        ..mov(dst, None)
    }
}

/// The program `insts` on an H200 whose warps and blocks all start at cycle 0, with
/// `schedulers` warp schedulers (ALU latency 4).
fn setup(insts: Vec<DInst>, schedulers: u32) -> (Program, Costs) {
    let cfg = GpuConfig::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/h200.toml"
    )))
    .unwrap();
    let mut costs = Costs::new(&cfg);
    costs.warp_launch = 0.0;
    costs.dispatch = 0.0;
    costs.schedulers = schedulers;
    assert_eq!(costs.alu, 4);
    let n = insts.len();
    let program = Program {
        name: "t".into(),
        insts,
        lines: vec![0; n],
        locs: vec![None; n],
        files: vec![],
        texts: vec![String::new(); n],
        num_regs: 8,
        reg_slots: vec![1; 8],
        notes: vec![],
        operands: vec![],
        shared_widths: vec![],
        loop_overlap: vec![],
        local: Default::default(),
    };
    (program, costs)
}

/// A block whose warps run `streams` (entries: pc, latency).
fn block(streams: &[&[(u32, u32)]]) -> BlockLog {
    BlockLog {
        warps: streams
            .iter()
            .map(|s| s.iter().map(|&(pc, lat)| Entry { pc, lat }).collect())
            .collect(),
        ..Default::default()
    }
}

/// `blocks` blocks of `warps` warps in `wave`, each warp a random stream of up to 29 entries
/// (pcs below `pcs`; latencies under 30 cycles, one in five up to 600).
fn random_logs(
    r: &mut impl FnMut(u64) -> u64,
    wave: usize,
    blocks: usize,
    warps: usize,
    pcs: u64,
) -> Vec<BlockLog> {
    (0..blocks)
        .map(|_| {
            let streams: Vec<Vec<(u32, u32)>> = (0..warps)
                .map(|_| {
                    (0..r(30))
                        .map(|_| {
                            let lat = if r(5) == 0 { 1 + r(600) } else { r(30) };
                            (r(pcs) as u32, lat as u32)
                        })
                        .collect()
                })
                .collect();
            let streams: Vec<&[(u32, u32)]> = streams.iter().map(Vec::as_slice).collect();
            BlockLog {
                wave,
                ..block(&streams)
            }
        })
        .collect()
}

fn replay(program: &Program, costs: &Costs, logs: &[BlockLog]) -> Vec<u64> {
    let plans = Plans::new(costs, program);
    let cx = Ctx {
        program,
        costs,
        shared_latency: 23,
        plans: &plans,
    };
    Replay::default().wave(cx, logs, &mut SmWork::default())
}

#[test]
fn eight_warps_of_four_alu_instructions_share_four_schedulers() {
    let (p, c) = setup((0..4).map(|r| mov(r, None)).collect(), 4);
    let warp: &[(u32, u32)] = &[(0, 0), (1, 0), (2, 0), (3, 0)];
    // Four warps, one per scheduler: issue at cycles 1-4, the last result 4 cycles later.
    assert_eq!(replay(&p, &c, &[block(&[warp; 4])]), vec![8]);
    // Eight warps, two per scheduler: 8 instructions each, issued at cycles 1-8.
    assert_eq!(replay(&p, &c, &[block(&[warp; 8])]), vec![12]);
    // One scheduler: 32 instructions, cycles 1-32.
    let (p, c) = setup((0..4).map(|r| mov(r, None)).collect(), 1);
    assert_eq!(replay(&p, &c, &[block(&[warp; 8])]), vec![36]);
}

#[test]
fn two_warps_on_one_scheduler_interleave() {
    // Blocks of one warp each, both on the one scheduler: the ready warps take turns
    // (cycles 1, 3, 5 and 2, 4, 6), the last results 4 cycles later.
    let (p, c) = setup((0..3).map(|r| mov(r, None)).collect(), 1);
    let warp: &[(u32, u32)] = &[(0, 0), (1, 0), (2, 0)];
    let logs = [block(&[warp]), block(&[warp])];
    assert_eq!(replay(&p, &c, &logs), vec![9, 10]);
    // Two schedulers: warp 1 of the SM has its own; both issue at cycles 1-3.
    let (p, c) = setup((0..3).map(|r| mov(r, None)).collect(), 2);
    assert_eq!(replay(&p, &c, &logs), vec![7, 7]);
}

#[test]
fn a_warp_waiting_for_its_load_lets_another_issue() {
    // Warp 0 loads r0 (100 cycles) and adds to it; warp 1 runs three ALU instructions. On one
    // scheduler warp 1 issues at cycles 2-4 while warp 0 waits; warp 0's add issues at 101.
    let (p, c) = setup(vec![load(0), mov(1, Some(0)), mov(2, None)], 1);
    let logs = [
        block(&[&[(0, 100), (1, 0)]]),
        block(&[&[(2, 0), (2, 0), (2, 0)]]),
    ];
    assert_eq!(replay(&p, &c, &logs), vec![105, 8]);
}

/// Twelve random instructions of 8 registers: loads, `bar.sync`s and moves (some of an
/// immediate), drawn from `r`.
fn random_insts(r: &mut impl FnMut(u64) -> u64) -> Vec<DInst> {
    (0..12)
        .map(|_| match r(8) {
            0 | 1 => load(r(8) as u16),
            2 => DInst {
                op: Op::BarSync,
                dst: [NO_REG; 4],
                ..mov(0, None)
            },
            _ => {
                let src = if r(4) > 0 { Some(r(8) as u16) } else { None };
                mov(r(8) as u16, src)
            }
        })
        .collect()
}

#[test]
fn the_ring_and_the_heap_replay_alike() {
    // Random programs of ALU instructions, loads and barriers, random streams of them, two
    // waves on one SM: the ring's event loop and the heap's (and the two kinds of [`Board`])
    // agree on every block's cycles and
    // on the SM's work.
    for seed in 1..80 {
        let mut r = rng(seed);
        let insts = random_insts(&mut r);
        let (p, c) = setup(insts, 1 + r(4) as u32);
        let plans = Plans::new(&c, &p);
        let cx = Ctx {
            program: &p,
            costs: &c,
            shared_latency: 23,
            plans: &plans,
        };
        let (mut a, mut b) = (Sm::default(), Sm::default());
        let (mut wa, mut wb) = (SmWork::default(), SmWork::default());
        for wave in 0..2 {
            let blocks = 1 + r(4) as usize;
            let warps = 1 + r(16) as usize;
            let logs = random_logs(&mut r, wave, blocks, warps, 12);
            // The ring's replay on small boards (dirty past the program's registers), the
            // heap's on the registers' slices.
            let total = blocks * warps;
            let mut small = vec![small_board(); total];
            small.iter_mut().for_each(|b| b.ready[8..].fill(u32::MAX));
            let mut flat = vec![0; total * 8];
            let mut flat_whys = vec![0; total * 8];
            let mut wides: Vec<Wide> = (flat.chunks_mut(8).zip(flat_whys.chunks_mut(8)))
                .map(|(ready, whys)| Wide { ready, whys })
                .collect();
            let boards = wides.iter_mut().collect();
            let ra = a.wave(
                &mut Ring::default(),
                small.iter_mut().collect(),
                cx,
                &logs,
                &mut wa,
            );
            let rb = b.wave(&mut Heap::default(), boards, cx, &logs, &mut wb);
            assert_eq!(ra, rb, "seed {seed} wave {wave}");
        }
        let json = |w: &SmWork| serde_json::to_string(w).unwrap();
        assert_eq!(json(&wa), json(&wb), "seed {seed}");
        assert_eq!(wa.stalls, wb.stalls, "seed {seed}");
    }
}

#[test]
fn sms_sharing_a_threads_scratch_replay_as_alone() {
    // Random programs, three SMs of three waves each (up to 96 warps: the ring and the
    // heap, small boards and the registers' slices): replaying the SMs' waves interleaved
    // on this thread (one scratch, left by another SM's wave) gives every SM the cycles and
    // work it gets with its waves alone on a fresh thread (a fresh scratch).
    for seed in 1..40 {
        let mut r = rng(seed);
        let insts = random_insts(&mut r);
        let (mut p, c) = setup(insts, 1 + r(4) as u32);
        // Beyond [`SMALL`] registers: the registers' slices.
        if r(4) == 0 {
            p.num_regs = SMALL + 1;
        }
        let waves: Vec<Vec<Vec<BlockLog>>> = (0..3)
            .map(|_| {
                (0..3)
                    .map(|wave| {
                        let (blocks, warps) = (1 + r(6) as usize, 1 + r(16) as usize);
                        random_logs(&mut r, wave, blocks, warps, 12)
                    })
                    .collect()
            })
            .collect();
        let run = |sms: &[usize]| {
            let plans = Plans::new(&c, &p);
            let cx = Ctx {
                program: &p,
                costs: &c,
                shared_latency: 23,
                plans: &plans,
            };
            let mut replays: Vec<Replay> = (0..3).map(|_| Replay::default()).collect();
            let mut works = vec![SmWork::default(); 3];
            let mut cycles = vec![vec![]; 3];
            for wave in 0..3 {
                for &s in sms {
                    let logs = &waves[s].get(wave).expect("three waves");
                    let out = replays[s].wave(cx, logs, &mut works[s]);
                    cycles[s].push(out);
                }
            }
            let json = |w: &SmWork| serde_json::to_string(w).unwrap();
            (sms.iter())
                .map(|&s| (cycles[s].clone(), json(&works[s])))
                .collect::<Vec<_>>()
        };
        let shared = run(&[0, 1, 2]);
        for (s, shared) in shared.iter().enumerate() {
            let alone = std::thread::scope(|t| t.spawn(|| run(&[s])).join().unwrap());
            assert_eq!(&alone[0], shared, "seed {seed} sm {s}");
        }
    }
}

#[test]
fn the_fast_path_issues_as_the_general_path() {
    // Random programs of ALU instructions (folded ones too), loads (global, shared and
    // parameter ones, a pointer's on the constant pipe) and barriers, random streams of
    // them (plain latencies), two waves on one SM (the first notes units' first uses): the
    // fast path and the general one agree on every block's cycles and on the SM's work.
    let param = |dst: u16, ty: Type| DInst {
        op: Op::Ld(MemOp {
            space: StateSpace::Param,
            cache: CacheOp::Default,
            vec: 1,
            ty,
            volatile: false,
            nc: false,
        }),
        ..mov(dst, None)
    };
    for seed in 1..120 {
        let mut r = rng(seed);
        let reg = |r: &mut dyn FnMut(u64) -> u64| r(8) as u16;
        let insts = (0..14)
            .map(|_| match r(10) {
                0 => load(reg(&mut r)),
                1 => {
                    let mut l = load(reg(&mut r));
                    if let Op::Ld(m) = &mut l.op {
                        m.space = StateSpace::Shared;
                    }
                    l
                }
                2 => param(reg(&mut r), Type::U32),
                3 => param(reg(&mut r), Type::U64),
                4 => DInst {
                    op: Op::BarSync,
                    dst: [NO_REG; 4],
                    ..mov(0, None)
                },
                5 => {
                    let src = reg(&mut r);
                    DInst {
                        op: Op::Cvta {
                            to_space: true,
                            space: StateSpace::Global,
                        },
                        ..mov(reg(&mut r), Some(src))
                    }
                }
                _ => {
                    let src = if r(4) > 0 { Some(reg(&mut r)) } else { None };
                    mov(reg(&mut r), src)
                }
            })
            .collect();
        let (p, c) = setup(insts, 1 + r(4) as u32);
        let plans = Plans::new(&c, &p);
        let cx = Ctx {
            program: &p,
            costs: &c,
            shared_latency: 23,
            plans: &plans,
        };
        let (mut a, mut b) = (Sm::default(), Sm::default());
        let (mut wa, mut wb) = (SmWork::default(), SmWork::default());
        for wave in 0..2 {
            let blocks = 1 + r(4) as usize;
            let warps = 1 + r(16) as usize;
            let logs = random_logs(&mut r, wave, blocks, warps, 14);
            let total = blocks * warps;
            let (mut sa, mut sb) = (vec![small_board(); total], vec![small_board(); total]);
            let ra = a.wave_with(
                &mut Ring::default(),
                sa.iter_mut().collect(),
                cx,
                &logs,
                &mut wa,
                true,
            );
            let rb = b.wave_with(
                &mut Ring::default(),
                sb.iter_mut().collect(),
                cx,
                &logs,
                &mut wb,
                false,
            );
            assert_eq!(ra, rb, "seed {seed} wave {wave}");
            assert_eq!(sa, sb, "seed {seed} wave {wave}");
        }
        let json = |w: &SmWork| serde_json::to_string(w).unwrap();
        // `now` is the last memory access's issue cycle: the fast path leaves it alone.
        wa.now = wb.now;
        assert_eq!(json(&wa), json(&wb), "seed {seed}");
        assert_eq!(wa.stalls, wb.stalls, "seed {seed}");
    }
}

#[test]
fn a_dependent_chain_issues_when_its_operands_are_ready() {
    // r1 <- r0 <- load: 1 + 100, then the mov's 4: ready at 105, the second mov at 109.
    let (p, c) = setup(vec![load(0), mov(1, Some(0)), mov(2, Some(1))], 4);
    let logs = [block(&[&[(0, 100), (1, 0), (2, 0)]])];
    assert_eq!(replay(&p, &c, &logs), vec![109]);
}

/// A zeroed [`Small`] board.
fn small_board() -> Small {
    Small {
        ready: [0; BOARD],
        whys: [0; SMALL],
    }
}

/// The SM's work after replaying `logs` (one wave) of `program`.
fn replay_work(program: &Program, costs: &Costs, logs: &[BlockLog]) -> SmWork {
    let plans = Plans::new(costs, program);
    let cx = Ctx {
        program,
        costs,
        shared_latency: 23,
        plans: &plans,
    };
    let mut work = SmWork::default();
    Replay::default().wave(cx, logs, &mut work);
    work
}

/// A load of `space` into `dst` whose address is register `src`.
fn load_from(space: StateSpace, dst: u16, src: u16) -> DInst {
    let mut i = load(dst);
    if let Op::Ld(m) = &mut i.op {
        m.space = space;
    }
    i.src[0] = Src::Reg(src);
    i.nsrc = 1;
    i
}

/// The warp-cycles of state `why` at instruction `pc`.
fn cycles(w: &SmWork, pc: usize, why: Why) -> u64 {
    w.stalls[pc].0[usize::from(why)]
}

#[test]
fn a_dependent_global_load_chain_stalls_its_latency_less_one_on_the_long_scoreboard() {
    // One warp: r0 <- [..], r1 <- [r0], r2 <- [r1], each load 100 cycles. Issues at cycles 1,
    // 101, 201: each dependent load waits 99 cycles (from the cycle after the previous issue),
    // the last result arrives 100 cycles after its issue (the warp's drain).
    let g = StateSpace::Global;
    let (p, c) = setup(vec![load(0), load_from(g, 1, 0), load_from(g, 2, 1)], 4);
    let w = replay_work(&p, &c, &[block(&[&[(0, 100), (1, 100), (2, 100)]])]);
    for pc in 0..3 {
        assert_eq!(cycles(&w, pc, stall::SELECTED), 1);
        assert_eq!(cycles(&w, pc, stall::NOT_SELECTED), 0);
    }
    assert_eq!(cycles(&w, 0, stall::LONG_L2), 0);
    assert_eq!(cycles(&w, 1, stall::LONG_L2), 99);
    assert_eq!(cycles(&w, 2, stall::LONG_L2), 99);
    assert_eq!(cycles(&w, 2, stall::DRAIN), 100);
    // Every cycle of the warp's 301 counted once.
    let total: u64 = w.stalls.iter().map(Stalls::total).sum();
    assert_eq!(total, 301);
}

#[test]
fn a_bank_conflicted_shared_load_stalls_its_user_on_the_short_scoreboard() {
    // A shared load of 4 wavefronts (the config's latency plus 3), a mov of its value.
    // The warp retires when the mov's result is ready, 4 cycles after its issue (`drain`).
    let sh = StateSpace::Shared;
    let (p, c) = setup(vec![load_from(sh, 1, 0), mov(2, Some(1))], 4);
    let lat = c.shared_access(4);
    assert_eq!(lat, c.shared + 3);
    let w = replay_work(&p, &c, &[block(&[&[(0, lat), (1, 0)]])]);
    assert_eq!(cycles(&w, 1, stall::SHORT), u64::from(lat) - 1);
    let short = u64::from(lat) - 1;
    assert_eq!(
        w.stalls[1].top(),
        vec![("short_scoreboard", short), ("drain", 4)]
    );
}

#[test]
fn alu_dependencies_wait_and_a_busy_scheduler_is_not_selected() {
    // Two warps on one scheduler, each mov r0; mov r1 <- r0 (ALU latency 4). Warp 0 issues at
    // 1 and 5 (3 cycles of `wait`), warp 1 at 2 (1 cycle not selected) and 6 (the cycles
    // 3..5 `wait`, then none: its r0 is ready at 6).
    let (p, c) = setup(vec![mov(0, None), mov(1, Some(0))], 1);
    let warp: &[(u32, u32)] = &[(0, 0), (1, 0)];
    let w = replay_work(&p, &c, &[block(&[warp, warp])]);
    assert_eq!(cycles(&w, 0, stall::SELECTED), 2);
    assert_eq!(cycles(&w, 0, stall::NOT_SELECTED), 1);
    assert_eq!(cycles(&w, 1, stall::WAIT), 3 + 3);
    assert_eq!(cycles(&w, 1, stall::NOT_SELECTED), 0);
}

#[test]
fn warps_waiting_at_bar_sync_stall_on_the_barrier_until_the_release() {
    // Warp 0: a 50-cycle load, then bar.sync (which waits for the load); warp 1: bar.sync. Two
    // schedulers: warp 0 issues at 1 and 2, warp 1 at 1. The release: the last arrival (51)
    // plus the barrier unit's time for two warps; each warp waits from its bar.sync's issue.
    let bar = DInst {
        op: Op::BarSync,
        ..mov(NO_REG, None)
    };
    let (p, c) = setup(vec![load(0), bar], 2);
    let w = replay_work(&p, &c, &[block(&[&[(0, 50), (1, 0)], &[(1, 0)]])]);
    let t = 51 + c.barrier(2);
    assert_eq!(
        cycles(&w, 1, stall::BARRIER),
        u64::from(t - 2) + u64::from(t - 1)
    );
    assert_eq!(cycles(&w, 1, stall::SELECTED), 2);
}

/// The tensor pipe's test form: m16n8k16 f16 -> f32, latency 30, issue interval 8.
fn tensor_costs(schedulers: u32) -> Costs {
    let (_, mut c) = setup(vec![], schedulers);
    c.tensor = vec![crate::config::TensorForm {
        shape: "m16n8k16".into(),
        ab_type: "f16".into(),
        cd_type: "f32".into(),
        latency_cycles: 30,
        issue_cycles: 8,
    }];
    c
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` with D = C = registers `acc..acc + 4`,
/// A = 16..20, B = 20..22 (operands from `target` in the program's table).
fn mma_acc(acc: u16, target: u32) -> (DInst, Vec<u16>) {
    use crate::ptx::inst::{MmaOp, MmaType};
    let op = MmaOp {
        m: 16,
        n: 8,
        k: 16,
        d: MmaType::F32,
        a: MmaType::F16,
        b: MmaType::F16,
        c: MmaType::F32,
        satfinite: false,
    };
    let d = [acc, acc + 1, acc + 2, acc + 3];
    let operands: Vec<u16> = d.iter().copied().chain(16..22).chain(d).collect();
    let inst = DInst {
        op: Op::Mma(op),
        dst: d,
        src: [Src::Reg(16), Src::Reg(17), Src::Reg(18), Src::Reg(19)],
        nsrc: 4,
        target,
        ..mov(0, None)
    };
    (inst, operands)
}

/// A program of `mma_acc` instructions on the accumulators `accs`, in order.
fn mma_program(accs: &[u16]) -> Program {
    let (mut insts, mut operands) = (vec![], vec![]);
    for &a in accs {
        let (i, o) = mma_acc(a, operands.len() as u32);
        insts.push(i);
        operands.extend(o);
    }
    let n = insts.len();
    Program {
        name: "t".into(),
        insts,
        lines: vec![0; n],
        locs: vec![None; n],
        files: vec![],
        texts: vec![String::new(); n],
        num_regs: 24,
        reg_slots: vec![1; 24],
        notes: vec![],
        operands,
        shared_widths: vec![],
        loop_overlap: vec![],
        local: Default::default(),
    }
}

#[test]
fn a_dependent_chain_of_mmas_takes_their_latency_each() {
    // Five mma on one accumulator (D = C): each waits for the previous one's D, 30 cycles; the
    // first issues at cycle 1 (the floor's next cycle), the last D is ready at 1 + 5 x 30.
    let c = tensor_costs(4);
    let p = mma_program(&[0; 5]);
    let warp: Vec<(u32, u32)> = (0..5).map(|pc| (pc, 0)).collect();
    assert_eq!(replay(&p, &c, &[block(&[&warp])]), vec![1 + 5 * 30]);
    // The plan waits for C (not only A), so the chain is one: each wait is `wait`, the
    // fixed-latency dependency.
    let w = replay_work(&p, &c, &[block(&[&warp])]);
    assert_eq!(w.stalls[4].0[usize::from(stall::WAIT)], 29);
    assert_eq!(w.stalls[4].0[usize::from(stall::MATH_PIPE_THROTTLE)], 0);
}

#[test]
fn independent_mmas_of_one_warp_are_an_issue_interval_apart() {
    // Four accumulators: the pipe takes one mma every 8 cycles (issues at 1, 9, 17, 25), the
    // last D ready 30 later; the warp waits for the busy pipe 8 cycles before each of the last
    // three (math_pipe_throttle).
    let c = tensor_costs(4);
    let p = mma_program(&[0, 4, 8, 12]);
    let warp: Vec<(u32, u32)> = (0..4).map(|pc| (pc, 0)).collect();
    assert_eq!(replay(&p, &c, &[block(&[&warp])]), vec![25 + 30]);
    let w = replay_work(&p, &c, &[block(&[&warp])]);
    let throttle: Vec<u64> = (0..4)
        .map(|pc| w.stalls[pc].0[usize::from(stall::MATH_PIPE_THROTTLE)])
        .collect();
    assert_eq!(throttle, vec![0, 7, 7, 7]);
    assert_eq!(w.stalls[3].reason("math_pipe_throttle"), 7);
}

#[test]
fn warps_of_one_sub_partition_share_its_tensor_pipe_and_others_do_not() {
    let p = mma_program(&[0]);
    let warp: &[(u32, u32)] = &[(0, 0)];
    // One scheduler: four warps' mma issue at 1, 9, 17, 25 on its one pipe.
    let c = tensor_costs(1);
    assert_eq!(replay(&p, &c, &[block(&[warp; 4])]), vec![25 + 30]);
    let w = replay_work(&p, &c, &[block(&[warp; 4])]);
    // Warps 1 to 3 wait 8, 16 and 24 cycles for the pipe, from cycle 1 on.
    assert_eq!(
        w.stalls[0].0[usize::from(stall::MATH_PIPE_THROTTLE)],
        8 + 16 + 24
    );
    // Four schedulers: a warp each, four pipes, all issue at cycle 1.
    let c = tensor_costs(4);
    assert_eq!(replay(&p, &c, &[block(&[warp; 4])]), vec![1 + 30]);
    // Eight warps on four: two per pipe, the second 8 cycles later.
    assert_eq!(replay(&p, &c, &[block(&[warp; 8])]), vec![9 + 30]);
}

#[test]
fn an_mma_form_the_config_lacks_keeps_the_alu_cost_in_plans() {
    // (A launch refuses it first: `tensor::check`.) No form: one ALU step of 4 cycles, still
    // waiting for C.
    let (_, mut c) = setup(vec![], 4);
    c.tensor.clear();
    let p = mma_program(&[0; 2]);
    assert_eq!(
        replay(&p, &c, &[block(&[&[(0, 0), (1, 0)]])]),
        vec![1 + 4 + 4]
    );
}

/// One warp's 8 iterations of `ld r0; mov r1, r0; bra` (the load 100 cycles; the branch taken
/// by every lane but the last time), replayed with the branch's overlap of `k` PTX iterations
/// per SASS iteration and `waits` waits in one: the block's cycles.
fn loop_of_8(k: u16, waits: u16) -> u64 {
    let bra = DInst {
        op: Op::Bra,
        dst: [NO_REG; 4],
        target: 0,
        ..mov(0, None)
    };
    let (mut p, c) = setup(vec![load(0), mov(1, Some(0)), bra], 1);
    let overlap = Overlap {
        iterations: k,
        waits,
    };
    p.loop_overlap = vec![Overlap::NONE, Overlap::NONE, overlap];
    let stream: Vec<(u32, u32)> = (0..8)
        .flat_map(|i| [(0, 100), (1, 0), (2, u32::from(i < 7))])
        .collect();
    replay(&p, &c, &[block(&[&stream])])[0]
}

#[test]
fn a_loop_unrolled_4x_waits_for_its_loads_a_quarter_as_often() {
    // Overlap 1 (as without SASS): each iteration's load issues after the previous iteration's
    // use (the branch waits for it): 102 cycles an iteration (load, 100, the use; the branch
    // and the next load the two cycles after it), the last use's result 4 cycles after 7 x
    // 102 + 101.
    assert_eq!(loop_of_8(1, 1), 7 * 102 + 101 + 4);
    // 4 PTX iterations a SASS iteration, one wait in it (ptxas unrolled the loop 4x and hoisted
    // the loads): the loads of 4 iterations issue 3 cycles apart and the warp waits at every
    // fourth branch only, 2 waits instead of 8: the fourth use at 10 + 100, the fifth load 2
    // cycles later; the eighth 9 cycles after that, its use 101.
    assert_eq!(loop_of_8(4, 1), (100 + 9 + 2) + (9 + 101) + 4);
    // Two waits in it: at every second branch, 4 waits, each pair of loads 3 cycles apart.
    assert_eq!(loop_of_8(4, 2), 3 * (100 + 3 + 2) + (3 + 101) + 4);
    assert_eq!(loop_of_8(4, 2), loop_of_8(2, 1));
    // Three: at the second, third and fourth branch of each 4 (the first iteration's load
    // overlaps the second's), and at the end: pairs take 105 cycles, single iterations 102.
    assert_eq!(loop_of_8(4, 3), 2 * 105 + 3 * 102 + 101 + 4);
    // 8 iterations: one wait, at the loop's end (the branch not taken).
    assert_eq!(loop_of_8(8, 1), 7 * 3 + 101 + 4);
}

#[test]
fn a_backward_branch_between_two_of_its_sass_loops_takes_no_slot() {
    // One warp's 8 iterations of `mov r0, 0; bra` (taken by every lane but the last time):
    // as the PTX has it, 8 movs and 8 branches issue; unrolled 4x by ptxas, the SASS loop
    // branches back once per 4 PTX iterations (and leaves once): 8 movs and 2 branches.
    let bra = DInst {
        op: Op::Bra,
        dst: [NO_REG; 4],
        target: 0,
        ..mov(0, None)
    };
    let slots = |k: u16| {
        let (mut p, c) = setup(vec![mov(0, None), bra], 1);
        p.loop_overlap = vec![
            Overlap::NONE,
            Overlap {
                iterations: k,
                waits: 1,
            },
        ];
        let stream: Vec<(u32, u32)> = (0..8)
            .flat_map(|i| [(0, 0), (1, u32::from(i < 7))])
            .collect();
        replay_work(&p, &c, &[block(&[&stream])]).issue_slots
    };
    assert_eq!(slots(1), 16);
    assert_eq!(slots(4), 10);
}
