//! What the replay knows of each instruction before it runs (`Plan`, [`Plans`]): the
//! registers it waits for and writes, how it is treated once issued, its issue slots and unit.

use super::*;
use crate::ptx::decode::Overlap;
use crate::ptx::inst::WmmaOp;

/// The registers one instruction waits for and writes, read once from its [`DInst`] so the
/// replay's inner loop touches a few bytes instead of the decoded instruction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Deps {
    /// Source registers (operands, address base, guard); `n_src` of them.
    pub(super) src: [u16; 7],
    pub(super) n_src: u8,
    /// Destination registers; `n_dst` of them.
    pub(super) dst: [u16; 4],
    pub(super) n_dst: u8,
    /// For a load, the spaces whose earlier stores in its basic block it issues after
    /// ([`crate::timing::order`]; 0: none).
    pub(super) order: u8,
}

impl Deps {
    pub(super) fn of(inst: &DInst) -> Self {
        let mut d = Deps::default();
        let add = |s: &Src, d: &mut Deps| {
            if let Src::Reg(r) | Src::NotPred(r) = s {
                d.src[usize::from(d.n_src)] = *r;
                d.n_src += 1;
            }
        };
        for s in &inst.src[..usize::from(inst.nsrc)] {
            add(s, &mut d);
        }
        if let Some(a) = &inst.addr {
            add(&a.base, &mut d);
        }
        if inst.guard != NO_REG {
            add(&Src::Reg(inst.guard), &mut d);
        }
        for &r in inst.dst.iter().filter(|&&r| r != NO_REG) {
            d.dst[usize::from(d.n_dst)] = r;
            d.n_dst += 1;
        }
        d
    }
}

impl Deps {
    /// The registers a tensor instruction's plan waits for and writes, from its operands (D, A,
    /// B, C in order from `inst.target` in `operands`; `inst.dst` holds D's first four). Its
    /// sources are more than [`Deps`] holds (m16n8k16: 4 + 2 + 4, wmma.mma: 8 + 8 + 8), so it
    /// waits for every distinct one where they fit, else for the first and last register of each
    /// of A, B and C: a fragment is written by one instruction (`ldmatrix`, `wmma.load`, the
    /// previous `mma` on the accumulator) or by several in order. It writes D's first four, and
    /// of a longer D its first three (the ones a `wmma.store`'s plan waits for) and last (one a
    /// dependent `wmma.mma` waits for).
    pub(super) fn of_tensor(inst: &DInst, operands: &[u16]) -> Self {
        let (nd, na, nb, nc) = match inst.op {
            Op::Mma(m) => m.regs(),
            Op::Wmma(w) => w.regs(),
            _ => return Deps::of(inst),
        };
        let Some(all) =
            operands.get(inst.target as usize..inst.target as usize + nd + na + nb + nc)
        else {
            return Deps::of(inst);
        };
        let (dr, rest) = all.split_at(nd);
        let (ar, rest) = rest.split_at(na);
        let (br, cr) = rest.split_at(nb);
        let mut src: Vec<u16> = vec![];
        let mut add = |r: u16| {
            if !src.contains(&r) {
                src.push(r);
            }
        };
        let guard = (inst.guard != NO_REG).then_some(inst.guard);
        let room = 7 - usize::from(guard.is_some());
        let mut distinct = ar.iter().chain(br).chain(cr).copied().collect::<Vec<_>>();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() <= room {
            ar.iter().chain(br).chain(cr).for_each(|&r| add(r));
        } else {
            for f in [ar, br, cr] {
                if let (Some(&a), Some(&b)) = (f.first(), f.last()) {
                    add(a);
                    add(b);
                }
            }
        }
        guard.into_iter().for_each(&mut add);
        let mut d = Deps::default();
        for (k, &r) in src.iter().take(7).enumerate() {
            d.src[k] = r;
        }
        d.n_src = src.len().min(7) as u8;
        let dst: Vec<u16> = if nd <= 4 {
            dr.to_vec()
        } else {
            vec![dr[0], dr[1], dr[2], dr[nd - 1]]
        };
        for (k, &r) in dst.iter().enumerate() {
            d.dst[k] = r;
        }
        d.n_dst = dst.len() as u8;
        d
    }
}

impl Deps {
    /// The registers `sust` waits for: its handle, coordinates and guard ([`Deps::of`]) and its
    /// `n` values from the operand table (from `inst.target`), as many as fit.
    pub(super) fn of_surface_store(inst: &DInst, operands: &[u16], n: usize) -> Self {
        let mut d = Deps::of(inst);
        let values = operands
            .get(inst.target as usize..inst.target as usize + n)
            .unwrap_or(&[]);
        for &r in values {
            if usize::from(d.n_src) < d.src.len() {
                d.src[usize::from(d.n_src)] = r;
                d.n_src += 1;
            }
        }
        d
    }
}

/// How the replay treats an instruction once issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Kind {
    /// `bar.sync`, `bar.red`: waits for the warp's results, then for its block.
    Barrier,
    /// A branch.
    Bra,
    /// A load, or an atomic whose result is used: its destinations are ready after its latency.
    Load,
    /// A store, or an atomic whose result is not used: acknowledged after its latency.
    Drain,
    /// A shuffle: the shared-memory latency.
    Shfl,
    /// `exit`, `ret`, `bar.warp.sync`: no result.
    Nothing,
    /// `mma.sync`, `wmma.mma`: waits for its sub-partition's tensor pipe, occupies it for
    /// [`Plan::pipe`] cycles, its D ready [`Plan::result`] after its issue ([`crate::timing::tensor`]).
    Tensor,
    /// Everything else: its SASS steps times the ALU latency.
    #[default]
    Alu,
}

/// What the replay needs of one instruction, read once per launch from the program and its costs
/// so that an issue touches a few bytes: registers, kind, SASS slots, result latency, and what
/// the SM's work accounts for it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Plan {
    pub(super) deps: Deps,
    /// Its instruction's index in the program.
    pub(super) pc: u32,
    pub(super) kind: Kind,
    /// SASS issue slots ([`crate::timing::sass::Sass::slots`]).
    pub(super) slots: u32,
    /// ALU result latency (cycles), [`Costs::result_latency`]; a [`Kind::Tensor`]'s form's latency.
    pub(super) result: u32,
    /// Cycles a [`Kind::Tensor`] occupies its sub-partition's tensor pipe (0 for other kinds).
    pub(super) pipe: u32,
    /// Cycles one execution occupies its sub-partition's FMA-heavy pipe and its ALU
    /// ([`crate::timing::pipes`]; 0: none).
    pub(super) heavy: u8,
    pub(super) alu: u8,
    /// Constant-pipe cycles an issue adds (a pointer parameter's LDC.64), or 0.
    pub(super) const_cycles: f64,
    /// The unit whose first use it may be.
    pub(super) unit: Option<Unit>,
    /// A branch ptxas if-converts (no branch in SASS).
    pub(super) if_converted: bool,
    /// For a backward branch, the PTX iterations of its loop one SASS iteration covers
    /// ([`Program::loop_overlap`], at least 1); 0 for every other instruction.
    pub(super) overlap: u16,
    /// For a backward branch, the waits for loads in one SASS iteration (1 to `overlap`): the
    /// warp waits for its earlier instructions at that many of `overlap` executions of it.
    pub(super) waits: u16,
    /// The rare work its issue does: [`CONST`] (constant-pipe cycles), [`BARRIER`] (a
    /// `bar.sync`'s arrival occupies the barrier unit), [`UNIT`] (it may be a unit's first use);
    /// one test for the three.
    pub(super) rare: u8,
    /// An ALU instruction or a load of one SASS slot or none (folded into another) and one
    /// destination, not a `bar.sync`: most of a stream, issued by [`Warp::fast`] when it is not
    /// a unit's first use ([`FAST_LATER`] and [`FAST_FIRST`]: in waves that note first uses,
    /// [`Env::fast`], and in the others) and a load's entry carries its latency. A pointer
    /// parameter's load (constant-pipe cycles) is one too: every kernel's warps load a few.
    pub(super) fast: u8,
    /// `!0` for a load, whose entry carries its latency, `0` for an ALU instruction: the latency
    /// [`Warp::fast`] adds to `result` is the entry's latency masked with it.
    pub(super) lat_mask: u32,
    /// The warp state a wait for its results counts as ([`stall`]; a global access's level is
    /// found when it is priced).
    pub(super) why: Why,
    /// The spaces it stores to, whose later loads in its basic block may issue only after it
    /// ([`crate::timing::order`]; 0: no store).
    pub(super) stores: u8,
}

impl Plan {
    /// The plan of `inst` at `pc` (`operands`: the program's operand table, [`Program::operands`];
    /// `overlap`: its [`Program::loop_overlap`]).
    pub(super) fn of(
        costs: &Costs,
        pc: u32,
        inst: &DInst,
        operands: &[u16],
        overlap: Overlap,
        order: crate::timing::order::Order,
    ) -> Self {
        let backward = inst.op == Op::Bra && inst.target <= pc;
        let s = costs.sass.at(pc);
        let use_ = crate::timing::pipes::pipe_use(&inst.op);
        // A form the config lacks was refused at the launch (`tensor::check`); here (plans made
        // without that check, in tests) it keeps the ALU's cost.
        let tensor = crate::timing::tensor::cost(&costs.tensor, &inst.op).and_then(Result::ok);
        let kind = match inst.op {
            _ if tensor.is_some() => Kind::Tensor,
            Op::BarSync | Op::BarRed(_) => Kind::Barrier,
            Op::Bra => Kind::Bra,
            // `ldmatrix` is priced as a shared load; `cp.async` and `stmatrix` as stores
            // (issued, nothing waits for them: copies land at issue, `exec::mem::tensor`).
            Op::Ld(_) | Op::Ldmatrix(_) | Op::Wmma(WmmaOp::Load { .. }) => Kind::Load,
            Op::Wmma(WmmaOp::Store { .. }) => Kind::Drain,
            Op::St(_) | Op::CpAsync(_) | Op::Stmatrix(_) | Op::Sust(_) => Kind::Drain,
            // A texture fetch is a load whose result comes `texture_extra` after a global
            // load's served at the same level.
            Op::Tex(_) | Op::Suld(_) => Kind::Load,
            Op::Atom(_) | Op::Red(_) if inst.dst[0] == NO_REG => Kind::Drain,
            Op::Atom(_) | Op::Red(_) => Kind::Load,
            Op::Shfl(_) => Kind::Shfl,
            Op::Exit | Op::Ret | Op::WarpSync => Kind::Nothing,
            _ => Kind::Alu,
        };
        let plan = Plan {
            deps: Deps {
                order: order.follows,
                ..match inst.op {
                    Op::Mma(_) | Op::Wmma(WmmaOp::Mma { .. }) => Deps::of_tensor(inst, operands),
                    Op::Sust(s) => Deps::of_surface_store(inst, operands, usize::from(s.vec)),
                    _ => Deps::of(inst),
                }
            },
            pc,
            kind,
            slots: u32::from(s.slots),
            // A load's result waits for its entry's latency alone.
            result: match (kind, tensor) {
                (_, Some(t)) => t.latency,
                (Kind::Load, _) if matches!(inst.op, Op::Tex(_) | Op::Suld(_)) => {
                    costs.texture_extra
                }
                (Kind::Load, _) => 0,
                _ => costs.result_latency(pc),
            },
            pipe: tensor.map_or(0, |t| t.issue),
            heavy: half_rate(use_.heavy, costs.imad_issue),
            alu: half_rate(use_.alu, costs.alu_issue),
            // A pointer parameter is an LDC.64 on the constant pipe, always a hit.
            const_cycles: match inst.op {
                Op::Ld(m) if m.space == StateSpace::Param => f64::from(s.ldc) * costs.const_serial,
                _ => 0.0,
            },
            unit: Unit::of(costs, pc, inst),
            if_converted: costs.sass.skipped(pc).is_some(),
            overlap: if backward {
                overlap.iterations.max(1)
            } else {
                0
            },
            waits: overlap.waits.clamp(1, overlap.iterations.max(1)),
            rare: 0,
            fast: 0,
            lat_mask: if kind == Kind::Load { !0 } else { 0 },
            why: why_of(kind, inst, s.ldc),
            stores: order.stores,
        };
        let flag = |set: bool, f: u8| if set { f } else { 0 };
        let rare = flag(plan.const_cycles != 0.0, CONST)
            | flag(inst.op == Op::BarSync, BARRIER)
            | flag(plan.unit.is_some(), UNIT);
        // A store's issue is recorded for the loads after it (an atomic that returns a value).
        let fast = matches!(kind, Kind::Alu | Kind::Load)
            && plan.stores == 0
            && plan.slots <= 1
            && rare & BARRIER == 0
            && plan.deps.n_dst == 1;
        Plan {
            rare,
            fast: flag(fast, FAST_LATER) | flag(fast && rare & UNIT == 0, FAST_FIRST),
            ..plan
        }
    }
}

/// The plan a warp holds before it is queued (no instruction).
pub(super) const IDLE: Plan = Plan {
    deps: Deps {
        src: [0; 7],
        n_src: 0,
        dst: [0; 4],
        n_dst: 0,
        order: 0,
    },
    pc: 0,
    kind: Kind::Nothing,
    slots: 0,
    result: 0,
    pipe: 0,
    heavy: 0,
    alu: 0,
    const_cycles: 0.0,
    unit: None,
    if_converted: false,
    overlap: 0,
    waits: 1,
    rare: 0,
    fast: 0,
    lat_mask: 0,
    why: stall::WAIT,
    stores: 0,
};

/// Cycles `n` warp instructions occupy a pipe that takes `cycles` for each; 0 when the pipe keeps
/// up with issue (`cycles` 1: one instruction per cycle is the scheduler's own limit).
fn half_rate(n: u8, cycles: u32) -> u8 {
    if cycles <= 1 {
        0
    } else {
        u8::try_from(u32::from(n) * cycles).unwrap_or(u8::MAX)
    }
}

/// The warp state a wait for the results of `inst` (of kind `kind`, `ldc` LDCs in SASS) counts
/// as: memory by its space (a constant load or parameter is an LDC through the MIO when ptxas
/// made one, else an operand of the immediate constant cache), a shuffle through the MIO, an ALU
/// result a fixed-latency dependency.
fn why_of(kind: Kind, inst: &DInst, ldc: u8) -> Why {
    let space = |s: StateSpace| match s {
        StateSpace::Shared => stall::SHORT,
        StateSpace::Const | StateSpace::Param if ldc > 0 => stall::SHORT,
        StateSpace::Const | StateSpace::Param => stall::IMC,
        _ => stall::LONG_L2,
    };
    match (kind, inst.op) {
        (Kind::Shfl, _) | (_, Op::Ldmatrix(_)) => stall::SHORT,
        (Kind::Load, Op::Ld(m)) => space(m.space),
        (Kind::Load, Op::Atom(a) | Op::Red(a)) => space(a.space),
        (Kind::Load, Op::Wmma(WmmaOp::Load { space: sp, .. })) => space(sp),
        (Kind::Load, _) => stall::LONG_L2,
        _ => stall::WAIT,
    }
}

/// [`Plan::rare`]: constant-pipe cycles.
pub(super) const CONST: u8 = 1;
/// [`Plan::rare`]: a `bar.sync`.
pub(super) const BARRIER: u8 = 2;
/// [`Plan::rare`]: a unit's first use, maybe.
pub(super) const UNIT: u8 = 4;

/// Warp schedulers an SM may have (`sm.schedulers`, 1 to 8: [`crate::config`]).
pub(super) const MAX_SCHEDULERS: usize = 8;

/// [`Plan::fast`]: issued by [`Warp::fast`] in waves that do not note first uses.
pub(super) const FAST_LATER: u8 = 1;
/// [`Plan::fast`]: issued by [`Warp::fast`] in waves that note first uses ([`UNIT`]).
pub(super) const FAST_FIRST: u8 = 2;

/// The `Plan` of each instruction of a launch's program, made once per launch and shared by
/// every SM's replay.
#[derive(Debug, Default)]
pub struct Plans(pub(super) Vec<Plan>);

impl Plans {
    /// The plans of `program`'s instructions under `costs` (with the program's SASS profile).
    pub fn new(costs: &Costs, program: &Program) -> Self {
        let order = crate::timing::order::of(program);
        Plans(
            (program.insts.iter().enumerate())
                .map(|(pc, i)| {
                    let overlap = program.loop_overlap.get(pc).copied().unwrap_or_default();
                    Plan::of(costs, pc as u32, i, &program.operands, overlap, order[pc])
                })
                .collect(),
        )
    }
}
