//! The warp loop's one step: pick the lanes at the smallest PC, execute their instruction.
//! A converged warp runs its pre-decoded instructions ([`super::fast`]) in one straight-line
//! loop; the other instructions take the general path, whose arms forward to plain functions
//! ([`super::alu`]) or to the memory path ([`super::mem`]).

use super::alu;
use super::decode::{DInst, Src, NO_REG};
use super::fast::{AluForm, EntryOp, FlopKind, LoopEntry};
use super::sm::Pass1;
use super::trace::{BlockLog, Entry, Outcome, Served};
use super::turns::{FENCE, LOADS, MEMORY, WAITS};
use super::warp::Warp;
use crate::error::{Error, Result};
use crate::memory::system::SmCaches;
use crate::metrics::{Counters, Flop, PcStats};
use crate::ptx::ast::{Special, Type};
use crate::ptx::inst::{AluOp, Op, ShflMode, VoteMode};
use crate::timing::SmWork;

mod ext;
mod general;
mod runs;
mod straight;
#[cfg(test)]
mod tests;

pub use runs::Runs;
use runs::{count_flop, count_run, count_uniform, uncount_threads};

/// Runs `$body` for each lane `$l` of `$exec`: a plain `0..32` loop for a full warp (the common
/// case, which the compiler can unroll and vectorize), else over the set bits.
macro_rules! for_lanes {
    ($exec:expr, |$l:ident| $body:block) => {{
        let exec: u32 = $exec;
        if exec == u32::MAX {
            #[allow(clippy::needless_range_loop)] // the body indexes several arrays by lane
            for $l in 0..32usize $body
        } else {
            let mut m = exec;
            while m != 0 {
                let $l = m.trailing_zeros() as usize;
                m &= m - 1;
                $body
            }
        }
    }};
}
pub(crate) use for_lanes;

/// What one block's warps share while they run on their SM's thread.
pub struct Ctx<'a> {
    /// What every SM reads of the launch: the GPU, the launch, its pre-decoded entries, global
    /// memory and the constant bank, cache geometry, latencies, where turns end.
    pub pass: &'a Pass1<'a>,
    /// The SM's L1 and constant caches.
    pub caches: &'a mut SmCaches,
    /// The block's shared memory.
    pub shared: &'a mut [u8],
    /// The SM's counters.
    pub counters: &'a mut Counters,
    /// The SM's per-instruction statistics.
    pub per_pc: &'a mut [PcStats],
    /// The per-PC counts and stream entries of the straight-line path, added to `per_pc` when
    /// the SM's batch ends ([`Runs::fold`]).
    pub runs: &'a mut Runs,
    /// The SM's work for the throughput bounds.
    pub work: &'a mut SmWork,
    /// The SM the block runs on.
    pub sm: usize,
    /// `%ctaid` of the block.
    pub ctaid: [u32; 3],
    /// Warp instructions this SM may still execute before the launch is stopped.
    pub budget: &'a mut u64,
    /// The allocation the last global access lane by lane fell in (a lookup cache).
    pub last_alloc: Option<usize>,
    /// Per PC, the allocation the instruction's last whole-warp global access fell in (a
    /// lookup cache kept over the SM's blocks; `u32::MAX` for none yet).
    pub alloc_hints: &'a mut [u32],
    /// Per PC, the first address of the instruction's last whole-warp global run (`0` for none
    /// yet): the next run is prefetched into the host's cache one step further
    /// ([`Ctx::prefetch_next_run`]).
    pub last_runs: &'a mut [u64],
    /// What the block leaves for the L2 and timing passes.
    pub log: &'a mut BlockLog,
    /// The SM's memory errors so far ([`crate::exec::faults`]).
    pub faults: &'a mut crate::exec::faults::Faults,
    /// With racecheck ([`super::barrier::Checks::racecheck`]): the block's shared-memory
    /// shadow and the SM's hazards so far.
    pub race: Option<(
        &'a mut super::race::Shadow,
        &'a mut Vec<super::race::Hazard>,
    )>,
    /// The SM's `printf` calls so far ([`crate::exec::printf`]).
    pub prints: &'a mut Vec<crate::exec::printf::Print>,
    /// The block's pending `bar.red`.
    pub sync: super::sync::BlockSync,
    /// A warp's turn ends where it stalls on a load it issued ([`super::turns`],
    /// [`Ctx::run_warp`]): the SM's co-resident warps take turns, so that their accesses reach
    /// the caches interleaved.
    pub turns: bool,
    /// The running warp's turn has ended.
    pub turn_over: bool,
    /// The running warp has issued a load in this turn or a turn it yielded (with `turns`): its
    /// turn ends at its next stall.
    pub loaded: bool,
    /// Instructions the turn may issue before it yields at a memory instruction: the cycles
    /// until another warp is ready to issue ([`crate::timing::Pace::deadline`]; `usize::MAX`:
    /// none), so that warps that issue at the same time have their accesses interleaved.
    pub deadline: usize,
    /// The running warp's scheduler (SMSP) and the cycle its turn began, by the pace of the
    /// turns ([`crate::timing::Pace::slot`]); `None` in the orders that keep no pace. LDCs of
    /// warps of different SMSPs issued close together share line fills in the IDC
    /// ([`crate::memory::constant::merge`]).
    pub slot: Option<(u32, u64)>,
    /// Entries of the running warp's stream when its turn began.
    pub turn_start: usize,
    /// The turn ended by yielding, not by a stall: the warp's loads are still in flight.
    pub yielded: bool,
    /// The global access being modelled is a `cp.async`'s read (`Ca`/`Cg`; `Default`
    /// otherwise): its outcome is counted as LDGSTS ([`crate::trace::Outcome::Global`]).
    pub async_copy: crate::ptx::inst::CacheOp,
    /// The access being modelled is a texture fetch's or a surface access's: its outcome is
    /// [`crate::trace::Outcome::Texture`] (`None` otherwise).
    pub texture: Option<crate::trace::TexKind>,
}

impl Ctx<'_> {
    /// Runs `w` until it exits, waits at a barrier or, with [`Ctx::turns`], stalls on a load it
    /// issued ([`super::turns`]) ([`Ctx::step`] after step), in one call so that the
    /// straight-line path's set-up is the warp's, not each step's. A turn executes at least one
    /// instruction.
    pub fn run_warp(&mut self, w: &mut Warp) -> Result<()> {
        self.turn_over = false;
        self.yielded = false;
        self.loaded = w.loads_in_flight;
        self.turn_start = self.log.warps[w.index as usize].len();
        while w.live != 0 && !w.at_barrier && !self.turn_over {
            self.step(w)?;
        }
        w.loads_in_flight = self.yielded && self.loaded;
        Ok(())
    }

    /// Whether the turn yields before a memory instruction (`flags`, [`super::turns::MEMORY`])
    /// that would be the stream's entry `entries`: it issued at least one instruction and has
    /// reached its [`Ctx::deadline`]. Sets [`Ctx::yielded`] and ends the turn when it does.
    #[inline(always)]
    pub(super) fn yields(&mut self, flags: u8, entries: usize) -> bool {
        let issued = entries.wrapping_sub(self.turn_start);
        let y = flags & MEMORY != 0 && issued != 0 && issued >= self.deadline;
        if y {
            self.yielded = true;
            self.turn_over = true;
        }
        y
    }

    /// Executes warp instructions of `w`: a converged warp's run of pre-decoded instructions
    /// ([`Ctx::run_straight`]), then one instruction on the general path, which stops at any
    /// instruction that can fault, wait or diverge.
    #[inline(always)]
    pub fn step(&mut self, w: &mut Warp) -> Result<()> {
        // A converged warp at an instruction of the general path goes there directly.
        let general = |p: &LoopEntry| matches!(p.op, EntryOp::General);
        if w.converged
            && !self
                .pass
                .forms
                .get(w.common_pc as usize)
                .is_some_and(general)
        {
            // Loads and stores between the runs go to the memory path from here.
            while let Some(exec) = self.run_straight(w) {
                self.mem_step(w, exec)?;
                if self.turn_over {
                    return Ok(());
                }
            }
            if w.live == 0 || self.turn_over {
                return Ok(());
            }
        }
        self.step_one(w)
    }

    /// Executes one warp instruction of `w`.
    ///
    /// The bookkeeping every instruction needs and the pre-decoded integer forms run here,
    /// inlined into the warp loop; the other instructions go to [`Ctx::step_general`], out of
    /// line, so that the common path does not pay for the registers and stack the memory and
    /// control-flow arms need.
    #[inline]
    fn step_one(&mut self, w: &mut Warp) -> Result<()> {
        let (pc, mask) = w.next();
        let prog = self.pass.launch.program;
        let Some(inst) = prog.insts.get(pc as usize) else {
            // Unreachable for decoded programs (they end in exit); treat as exit.
            w.live &= !mask;
            return Ok(());
        };
        if w.parked != 0 && warp_wide(&inst.op) {
            // On the GPU it waits for the lanes set aside: they run again first.
            w.progress();
            return Ok(());
        }
        let turn = self.pass.turn_flags[pc as usize];
        if self.loaded && turn & WAITS != 0 {
            // It needs a value the warp's turn loaded: the warp stalls before it.
            self.turn_over = true;
            return Ok(());
        }
        if self.yields(turn, self.log.warps[w.index as usize].len()) {
            return Ok(());
        }
        if *self.budget == 0 {
            return Err(self.over_budget());
        }
        *self.budget -= 1;
        let exec = mask & guard_mask(w, inst);
        let ps = &mut self.per_pc[pc as usize];
        ps.executed += 1;
        ps.threads += u64::from(exec.count_ones());
        // `%clock` reads the warp's issue count: cycles are only known after the timing pass.
        w.clock += 1;
        if let EntryOp::AluForm(f) = &self.pass.forms[pc as usize].op {
            // The common integer and f32 forms, decided once per launch: no branch, no latency.
            f.run(&mut w.regs, exec);
            if let Some(k) = f.kernel.flops() {
                count_flop(self.counters, k, u64::from(exec.count_ones()));
            }
            w.advance(pc, mask, 0, inst.target);
            self.log.warps[w.index as usize].push(Entry { pc, lat: 0 });
            return Ok(());
        }
        self.step_general(w, inst, pc, mask, exec)
    }

    /// The error of a launch that ran out of its instruction budget.
    #[cold]
    #[inline(never)]
    fn over_budget(&self) -> Error {
        Error::Budget {
            launch: self.pass.launch.label.into(),
            budget: self.pass.launch.max_warp_instructions,
        }
    }

    /// Executes instruction `inst` at `pc` of `w` for the lanes of `exec` (of those at `pc`,
    /// `mask`) when it has no pre-decoded form: control flow, memory, and the general ALU path.
    #[inline(never)]
    fn step_general(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        mask: u32,
        exec: u32,
    ) -> Result<()> {
        // `matches!`, not `==`: the derived comparison of `Op` is a call.
        let taken = if matches!(inst.op, Op::Bra) { exec } else { 0 };
        w.advance(pc, mask, taken, inst.target);
        // A branch after a load: the warp stalls ([`super::turns`]).
        self.turn_over |= self.loaded && self.pass.turn_flags[pc as usize] & FENCE != 0;
        let lat = match inst.op {
            // A branch every active lane takes: the timing pass needs to know (if-conversion).
            Op::Bra => {
                if exec != 0 && inst.target <= pc && mask != w.live {
                    // Part of the warp goes round a loop: perhaps waiting for the rest.
                    w.spin(pc, mask);
                }
                u32::from(exec == mask)
            }
            Op::WarpSync => {
                w.warp_syncs = w.warp_syncs.wrapping_add(1);
                0
            }
            Op::Exit | Op::Ret => {
                w.live &= !exec;
                w.progress();
                0
            }
            Op::BarSync => {
                self.arrive(w, inst, pc, mask)?;
                w.at_barrier = true;
                0
            }
            Op::St(_) => {
                w.progress();
                self.load_or_store(w, inst, pc, exec)?
            }
            Op::Ld(_) => {
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.load_or_store(w, inst, pc, exec)?
            }
            Op::Atom(a) | Op::Red(a) => {
                w.progress();
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.atomic(w, inst, pc, a, exec)?
            }
            Op::BarRed(op) => {
                self.bar_red_arrive(w, inst, op, exec);
                w.at_barrier = true;
                0
            }
            Op::Shfl(mode) => {
                self.shfl(w, inst, mode, exec);
                0
            }
            Op::CpAsync(c) => self.cp_async(w, inst, pc, c, exec)?,
            Op::Mbarrier(op) => self.mbarrier(w, inst, pc, op, exec)?,
            Op::CpAsyncBulk { to_shared } => self.cp_async_bulk(w, inst, pc, to_shared, exec)?,
            Op::CpAsyncBulkGroup => 0,
            Op::Vprintf => {
                self.vprintf(w, inst, pc, exec);
                0
            }
            // Copies land at issue (`exec::mem::tensor`): nothing is left to wait for.
            Op::CpAsyncCommit | Op::CpAsyncWait { .. } => 0,
            Op::Ldmatrix(m) => {
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.ldmatrix(w, inst, pc, m, exec)?
            }
            Op::Stmatrix(m) => self.stmatrix(w, inst, pc, m, exec)?,
            Op::Tex(t) => {
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.tex(w, inst, pc, t, exec)?
            }
            Op::Suld(s) => {
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.suld(w, inst, pc, s, exec)?
            }
            Op::Sust(s) => {
                w.progress();
                self.sust(w, inst, pc, s, exec)?
            }
            Op::Mma(m) => {
                self.mma(w, inst, pc, m, exec)?;
                0
            }
            Op::Wmma(op @ crate::ptx::inst::WmmaOp::Load { .. }) => {
                self.loaded |= self.turns && self.pass.turn_flags[pc as usize] & LOADS != 0;
                self.wmma_load(w, inst, pc, op, exec)?
            }
            Op::Wmma(op @ crate::ptx::inst::WmmaOp::Store { .. }) => {
                self.wmma_store(w, inst, pc, op, exec)?
            }
            Op::Wmma(crate::ptx::inst::WmmaOp::Mma { d_f32, c_f32 }) => {
                self.wmma_mma(w, inst, pc, d_f32, c_f32, exec)?;
                0
            }
            _ => {
                if let Op::Alu { op, ty, .. } = inst.op {
                    if ty.is_float() {
                        self.count_flops(op, ty, exec);
                    }
                }
                self.alu(w, inst, exec);
                0
            }
        };
        self.log.warps[w.index as usize].push(Entry { pc, lat });
        Ok(())
    }

    /// Reads a source operand for `lane`.
    #[inline(always)]
    pub fn read(&self, w: &Warp, s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => w.regs[r as usize * 32 + lane],
            Src::NotPred(r) => (w.regs[r as usize * 32 + lane] & 1) ^ 1,
            Src::Imm(v) => v,
            Src::Special(sp) => self.special(w, sp, lane),
        }
    }
}

/// An instruction that the whole warp (or the lanes of its member mask) executes together:
/// a warp's lanes set aside ([`Warp::parked`]) must reach it too.
fn warp_wide(op: &Op) -> bool {
    matches!(
        op,
        Op::BarSync
            | Op::BarRed(_)
            | Op::WarpSync
            | Op::Shfl(_)
            | Op::Vote(_)
            | Op::Mma(_)
            | Op::Wmma(_)
            | Op::Ldmatrix(_)
            | Op::Stmatrix(_)
    )
}

/// 32 lanes of zeros: the value of a source an instruction does not have.
static ZEROS: [u64; 32] = [0; 32];

/// The lanes of `mask`, ascending.
#[inline]
pub fn lanes(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let l = mask.trailing_zeros();
            mask &= mask - 1;
            Some(l as usize)
        }
    })
}

/// Lanes whose guard predicate lets the instruction run (all when unguarded).
#[inline]
fn guard_mask(w: &Warp, inst: &DInst) -> u32 {
    if inst.guard == NO_REG {
        return u32::MAX;
    }
    guard_bits(&w.regs, inst.guard, inst.guard_negated)
}

/// The lanes whose predicate register `p` (of register file `regs`) is set, or clear when
/// `negated`.
#[inline]
fn guard_bits(regs: &[u64], p: u16, negated: bool) -> u32 {
    let row = super::warp::row(regs, p);
    let mut m = 0u32;
    for (l, v) in row.iter().enumerate() {
        m |= (*v as u32 & 1) << l;
    }
    if negated {
        !m
    } else {
        m
    }
}

/// Sets the lanes of `exec` of `row` to `v` (the others keep what they hold: a later warp in
/// the same register file may read them before writing).
#[inline(always)]
fn fill(row: &mut [u64; 32], exec: u32, v: u64) {
    for_lanes!(exec, |l| {
        row[l] = v;
    });
}

use super::warp::row_mut;
