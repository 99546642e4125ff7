//! What a PTX instruction becomes on the GPU: the SASS that ptxas emits for it (sm_80 and sm_90),
//! as the issue and constant-pipe models need it. Pure functions of the decoded program:
//!
//! - [`sass`]: per PTX instruction, the SASS warp instructions one execution issues (`slots`), the
//!   dependent SASS steps until its result is ready (`steps`, each an ALU latency), and the LDC
//!   instructions it sends to the constant pipe (`ldc`);
//! - [`Profile::new`]: the program-level rewrites ptxas makes that change those numbers: forward
//!   branches around short straight-line regions are *if-converted* (the region is issued
//!   predicated, by every warp, whether or not a lane takes it), two 4-byte `ld.const` of one base
//!   register at an 8-byte aligned pair of offsets become one `LDC.64`, and a fixed-address
//!   `ld.const` inside an if-converted region stays an LDC instead of becoming a constant operand.
//!
//! Source of every rule: the SASS of each bundled kernel as ptxas 13.0 compiles it for sm_90
//! (`validate/measurements/h200/sass/*.sass`) read next to its PTX (`kernels/ptx/*.ptx`); the kernel
//! a rule was read from is named at the rule. The warp-instruction counts this gives are checked
//! against Nsight Compute's `smsp__inst_executed.sum` of all 84 measured launches
//! (`tests/measured_h200.rs`).

use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::decode::{DInst, LocalMemory, Program, Src, NO_REG};
use crate::ptx::inst::{AluOp, MulMode, Op};

/// The SASS of one PTX instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sass {
    /// SASS warp instructions one execution issues (0: folded into another instruction).
    pub slots: u8,
    /// Dependent SASS steps until the result is ready, each an ALU latency (0: no latency of its
    /// own, the value is ready when its sources are). Loads and shuffles are priced elsewhere.
    pub steps: u8,
    /// LDC instructions sent to the constant pipe (the SM's address divergence unit).
    pub ldc: u8,
}

impl Sass {
    const fn new(slots: u8, steps: u8) -> Self {
        Sass {
            slots,
            steps,
            ldc: 0,
        }
    }
}

/// Default for an instruction outside any profile: one SASS instruction, one ALU step.
pub const ONE: Sass = Sass::new(1, 1);

/// The SASS of `inst` (PTX text `text`, for modifiers the decoder drops such as `.approx`),
/// before the program-level rewrites of [`Profile::new`].
pub fn sass(inst: &DInst, text: &str) -> Sass {
    let approx = text.contains(".approx") || text.contains(".full");
    match inst.op {
        Op::Ld(m) | Op::St(m) => match m.space {
            // Kernel parameters: LDC/ULDC (pointers, sizes), or folded into an operand (ULDC
            // feeding an ISETP, copy_float). One SASS instruction each on average; a 64-bit one is
            // an LDC.64 on the constant pipe (reduce, global_access: `LDC.64 R2, c[0x0][0x210]`).
            // One indexed by a register (a `__grid_constant__` table) is an LDC of each lane's
            // address (suite37 param_table: `LDC R0, c[0x0][R0+0x224]`).
            StateSpace::Param => Sass {
                slots: 1,
                steps: 0,
                ldc: u8::from(
                    matches!(inst.op, Op::Ld(_)) && (m.ty.bytes() == 8 || !fixed_address(inst)),
                ),
            },
            // A fixed-address constant becomes an operand (stencil_1d: `FFMA R0, R3, UR9, R0`
            // after one ULDC.64 per pair of taps): half a slot per tap on average; an indexed one
            // is an LDC (ray: `LDC R3, c[0x3][R8+0xc]`). [`Profile::new`] adjusts both.
            StateSpace::Const if fixed_address(inst) => Sass::new(0, 0),
            StateSpace::Const => Sass {
                slots: 1,
                steps: 0,
                ldc: 1,
            },
            // LDG/STG/LDS/STS/LDL/STL, vectors included (copy_float4: one LDG.E.128).
            _ => Sass::new(1, 0),
        },
        // Register moves: MOV/CS2R/HFMA2.MMA of constants, S2R/S2UR of %tid/%ctaid, LDC of %ntid
        // (global_access copy_float: `S2R R0, SR_TID.X`, `S2UR UR4, SR_CTAID.X`, `LDC R7, c[0x0][RZ]`).
        Op::Mov(_) => ONE,
        // cvta is an address-window no-op on sm_80+: no SASS (every kernel).
        Op::Cvta { .. } => Sass::new(0, 0),
        Op::Cvt { dst, src, .. } => {
            if !dst.is_float() && !src.is_float() {
                // Integer widening/narrowing folds into IMAD.WIDE.U32 or the consumer (transpose).
                Sass::new(0, 0)
            } else {
                // I2FP / F2I / F2F (ray: `I2FP.F32.S32 R10, R10`).
                ONE
            }
        }
        Op::Alu { op, ty, mode, .. } => alu(op, ty, mode, inst, approx),
        // ISETP/FSETP; `or.pred`/`and.pred` parse as Alu on predicates and fold into the
        // combining ISETP (conv2d: `ISETP.GE.OR P6, PT, R17, R4, P6`).
        Op::Setp { .. } | Op::Selp(_) => ONE,
        // BRA (a forward one around a divergent region also gets BSSY/BSYNC: see Profile::new).
        Op::Bra => Sass::new(1, 0),
        Op::Ret | Op::Exit | Op::BarSync | Op::WarpSync => Sass::new(1, 0),
        Op::Shfl(_) => Sass::new(1, 0),
        Op::Vote(_) | Op::ActiveMask => ONE,
        // ATOM/RED/ATOMS, BAR.RED: one SASS instruction each.
        Op::Atom(_) | Op::Red(_) | Op::BarRed(_) => Sass::new(1, 0),
        // Everything else (bit, carry, conversion, warp-level ops): one instruction, one ALU
        // step, the default until a kernel's SASS says otherwise.
        _ => ONE,
    }
}

/// Whether `inst`'s address is an immediate (a named parameter or constant), not a register.
pub(crate) fn fixed_address(inst: &DInst) -> bool {
    matches!(inst.addr.map(|a| a.base), Some(Src::Imm(_)))
}

fn alu(op: AluOp, ty: Type, mode: MulMode, inst: &DInst, approx: bool) -> Sass {
    use AluOp::*;
    if ty == Type::Pred {
        // Predicate logic folds into the ISETP that produces it (conv2d).
        return Sass::new(0, 0);
    }
    let wide64 = ty.bits() == 64;
    match op {
        // mul.wide fuses with the add.s64 that uses it into one IMAD.WIDE (copy_float:
        // `mul.wide.s32` + `add.s64` -> `IMAD.WIDE R2, R7, 0x4, R2`); the add carries the slot.
        Mul if mode == MulMode::Wide => Sass::new(0, 0),
        // 64-bit shifts feed a LEA with the following add (smem kernels).
        Shl if wide64 => Sass::new(0, 0),
        // IEEE division and square root of f32: a MUFU.RCP/MUFU.RSQ seed refined by FFMAs, a
        // range check (FCHK or an IADD3/ISETP pair) and a branch to a slow path, inside a
        // BSSY/BSYNC pair. ray: `div.rn.f32` -> BSSY, MUFU.RCP, FCHK, 5 FFMA, BRA, BSYNC (10 issued
        // on the fast path, 7 dependent); `sqrt.rn.f32` -> BSSY, MUFU.RSQ, IADD3, ISETP, BRA,
        // 2 FMUL.FTZ, 2 FFMA, BSYNC (10 issued, 5 dependent). `rcp.rn` is the division's tail.
        Div | Sqrt | Rcp if ty.is_float() && !approx => match op {
            Div => Sass::new(10, 7),
            Sqrt => Sass::new(10, 5),
            _ => Sass::new(8, 5),
        },
        // MUFU alone (`.approx`), plus an FMUL for the division.
        Div if ty.is_float() => Sass::new(2, 2),
        Sqrt | Rcp | Rsqrt => Sass::new(1, 2),
        // Unsigned integer division by a register: I2F.U32.RP, MUFU.RCP, F2I, IMAD.HI and a
        // correction sequence (smem_rectangle setRowReadCol: 18 SASS, 12 dependent); by an
        // immediate, a multiply-high and a shift.
        Div | Rem if matches!(inst.src[1], Src::Imm(_)) => Sass::new(2, 2),
        Div | Rem => Sass::new(18, 12),
        _ => ONE,
    }
}

/// The skipped region of an if-converted branch: what a warp issues when every lane jumps over it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skip {
    /// Issue slots of the region.
    pub slots: u32,
    /// LDC instructions of the region (predicated off, they still occupy the constant pipe:
    /// \[microbenchmark\] `validate/measurements/h200/ubench`, B2).
    pub ldc: u32,
    /// Global, local and shared memory instructions of the region (predicated off, they still
    /// pass the LSU: ray's global launch keeps it 74% busy, ncu_pipes.txt, though its executed
    /// loads and stores would fill 43%).
    pub mem: u32,
}

/// SASS slots of a region above which ptxas keeps a branch. The committed SASS shows regions of
/// 1 (stencil_1d), 3 (conv2d), 4 (reduce) and 7 (ray) PTX instructions predicated and a
/// 24-instruction one (reduce's warp tail) branched around; the threshold lies between.
pub const IF_CONVERT_MAX_SLOTS: u32 = 16;

/// The per-instruction SASS of a program, after ptxas's program-level rewrites.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Per instruction.
    pub per_pc: Vec<Sass>,
    /// For an if-converted forward branch, its region's cost.
    pub skip: Vec<Option<Skip>>,
    /// A fixed-address `ld.const` that becomes a constant operand (IMC) rather than an LDC.
    pub const_operand: Vec<bool>,
    /// Where the program's local memory is ([`Program::local`]).
    pub local: LocalMemory,
}

impl Profile {
    /// Analyses `p`.
    pub fn new(p: &Program) -> Self {
        let n = p.insts.len();
        let mut per_pc: Vec<Sass> = p
            .insts
            .iter()
            .zip(&p.texts)
            .map(|(i, t)| sass(i, t))
            .collect();
        let mut const_operand: Vec<bool> = p
            .insts
            .iter()
            .map(|i| matches!(i.op, Op::Ld(m) if m.space == StateSpace::Const) && fixed_address(i))
            .collect();
        let leader = p.leaders();
        pair_constant_loads(p, &leader, &mut per_pc);
        if p.local.in_registers() {
            // A local store ptxas kept in registers is gone; a load is a select among the values
            // stored, of predicated LDCs where they are kernel parameters.
            let ldc = u8::from(matches!(p.local, LocalMemory::ParameterSelect { .. }));
            for (i, s) in p.insts.iter().zip(&mut per_pc) {
                match i.op {
                    Op::St(m) if m.space == StateSpace::Local => *s = Sass::new(0, 0),
                    Op::Ld(m) if m.space == StateSpace::Local => {
                        *s = Sass {
                            slots: 1,
                            steps: 1 - ldc,
                            ldc,
                        }
                    }
                    _ => {}
                }
            }
        }
        // Every kernel starts with `LDC R1, c[0x0][0x28]` (the stack pointer) and, when it
        // touches global or local memory, `ULDC.64 UR4, c[0x0][0x208]` (the memory descriptor
        // every LDG/STG names): one or two SASS instructions no PTX instruction stands for.
        let touches_memory = p.insts.iter().any(|i| {
            matches!(i.op, Op::Ld(m) | Op::St(m)
                if matches!(m.space, StateSpace::Global | StateSpace::Local | StateSpace::Generic))
        });
        if let Some(first) = per_pc.first_mut() {
            first.slots += 1 + u8::from(touches_memory);
        }
        // Fixed-address taps become constant operands at half a slot each on average (one ULDC.64
        // per two taps, stencil_1d); charge the ULDC on every other one.
        let mut fixed_seen = 0u32;
        for (pc, s) in per_pc.iter_mut().enumerate() {
            if const_operand[pc] {
                s.slots = (fixed_seen % 2) as u8;
                fixed_seen += 1;
            }
        }
        // Forward conditional branches: if-converted, an early exit, or a divergent region with
        // BSSY/BSYNC (+2 slots). A branch inside a region kept as a branch is not if-converted
        // (stencil_1d's bounds check inside its halo branch keeps its BRA).
        let mut skip = vec![None; n];
        let mut kept_until = 0usize; // end of the innermost enclosing kept region
        for pc in 0..n {
            let i = &p.insts[pc];
            if i.op != Op::Bra || i.guard == NO_REG || (i.target as usize) <= pc {
                continue;
            }
            let t = (i.target as usize).min(n);
            if t < n && matches!(p.insts[t].op, Op::Ret | Op::Exit) {
                continue; // `@p EXIT`
            }
            let region = pc + 1..t;
            let straight = p.insts[region.clone()].iter().all(|r| {
                !matches!(
                    r.op,
                    Op::Bra | Op::Ret | Op::Exit | Op::BarSync | Op::Shfl(_) | Op::Vote(_)
                )
            });
            let slots: u32 = per_pc[region.clone()]
                .iter()
                .map(|s| u32::from(s.slots))
                .sum();
            let expands = per_pc[region.clone()].iter().any(|s| s.slots > 2);
            if pc >= kept_until && straight && !expands && slots <= IF_CONVERT_MAX_SLOTS {
                // Predicated region: no BRA; fixed-address constants in it are loaded with LDC
                // (conv2d: `@!P6 LDC R25, c[0x3][RZ]`).
                per_pc[pc].slots = 0;
                for r in region.clone() {
                    if const_operand[r] {
                        const_operand[r] = false;
                        per_pc[r] = Sass {
                            slots: 1,
                            steps: 0,
                            ldc: 1,
                        };
                    }
                }
                skip[pc] = Some(Skip {
                    slots: per_pc[region.clone()]
                        .iter()
                        .map(|s| u32::from(s.slots))
                        .sum(),
                    ldc: per_pc[region.clone()].iter().map(|s| u32::from(s.ldc)).sum(),
                    mem: p.insts[region]
                        .iter()
                        .filter(|r| {
                            matches!(r.op, Op::Ld(m) | Op::St(m)
                                if !matches!(m.space, StateSpace::Const | StateSpace::Param | StateSpace::Reg))
                        })
                        .count() as u32,
                });
            } else {
                per_pc[pc].slots += 2; // BSSY before, BSYNC at the join (ray, stencil_1d)
                kept_until = kept_until.max(t);
            }
        }
        Profile {
            per_pc,
            skip,
            const_operand,
            local: p.local,
        }
    }

    /// The SASS of instruction `pc` ([`ONE`] outside the profile).
    #[inline]
    pub fn at(&self, pc: u32) -> Sass {
        self.per_pc.get(pc as usize).copied().unwrap_or(ONE)
    }

    /// The region an if-converted branch at `pc` skips, if it is one.
    #[inline]
    pub fn skipped(&self, pc: u32) -> Option<Skip> {
        self.skip.get(pc as usize).copied().flatten()
    }

    /// Whether the fixed-address `ld.const` at `pc` is a constant operand (no LDC).
    #[inline]
    pub fn is_const_operand(&self, pc: u32) -> bool {
        self.const_operand.get(pc as usize).copied().unwrap_or(true)
    }
}

/// Two 4-byte `ld.const` of one base register in one basic block at offsets `o` and `o + 4`, `o` a
/// multiple of 8, become one LDC.64 (ray: `[%rd9+16]` and `[%rd9+20]` -> `LDC.64 R16,
/// c[0x3][R8+0x10]`, `[%rd9+40]`, `[%rd9+44]` -> `LDC.64 R18, c[0x3][R8+0x28]`). ptxas lays out the
/// constant bank itself, so it knows a symbol-based register's alignment; we take the base as
/// 8-byte aligned. The second load of a pair issues nothing.
fn pair_constant_loads(p: &Program, leader: &[bool], per_pc: &mut [Sass]) {
    let mut start = 0;
    let n = p.insts.len();
    while start < n {
        let mut end = start + 1;
        while end < n && !leader[end] {
            end += 1;
        }
        let loads: Vec<(usize, u16, i64)> = (start..end)
            .filter_map(|pc| {
                let i = &p.insts[pc];
                match (i.op, i.addr) {
                    (Op::Ld(m), Some(a))
                        if m.space == StateSpace::Const && m.vec == 1 && m.ty.bytes() == 4 =>
                    {
                        match a.base {
                            Src::Reg(r) => Some((pc, r, a.offset)),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            })
            .collect();
        for &(pc, r, o) in &loads {
            if o.rem_euclid(8) != 0 {
                continue;
            }
            if let Some(&(hi, _, _)) = loads.iter().find(|&&(_, r2, o2)| r2 == r && o2 == o + 4) {
                // The later of the two carries the pair's one LDC.64.
                let (first, second) = if pc < hi { (pc, hi) } else { (hi, pc) };
                per_pc[first].slots = 0;
                per_pc[first].ldc = 0;
                per_pc[second].slots = 1;
                per_pc[second].ldc = 1;
            }
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;
    use crate::run::{plan, Options};
    use crate::workload::Workload;

    fn program(workload: &str, label: &str) -> Program {
        let cfg = GpuConfig::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/h200.toml"
        )))
        .unwrap();
        let p = plan(
            &cfg,
            &Workload::resolve(workload).unwrap(),
            &Options::default(),
        )
        .unwrap();
        p.launches
            .into_iter()
            .find(|l| l.label == label)
            .unwrap()
            .program
    }

    #[test]
    fn ray_loads_sphere_pairs_with_ldc64_and_predicates_the_colour_loads() {
        let p = program("ray", "constant");
        let prof = Profile::new(&p);
        let ldc = |pc: usize| prof.per_pc[pc].ldc;
        let consts: Vec<usize> = (0..p.insts.len())
            .filter(|&pc| matches!(p.insts[pc].op, Op::Ld(m) if m.space == StateSpace::Const))
            .collect();
        // Sphere 0: x and y (offsets 16, 20) are one LDC.64; r (12) one LDC; z (24) one LDC in the
        // hit branch; r, g, b (0, 8, 4): an LDC.64 and an LDC in an if-converted region.
        let first_sphere: u8 = consts[..7].iter().map(|&pc| ldc(pc)).sum();
        assert_eq!(first_sphere, 5);
        let converted = (0..p.insts.len())
            .filter(|&pc| prof.skipped(pc as u32).is_some())
            .count();
        // The PTX loop is unrolled four times: four colour regions, each if-converted.
        assert_eq!(converted, 4);
        // The hit regions (two sqrt.rn and a div.rn) keep their branch.
        assert!(prof
            .skip
            .iter()
            .zip(&p.insts)
            .any(|(s, i)| s.is_none() && i.op == Op::Bra && i.guard != NO_REG));
    }

    #[test]
    fn conv2d_taps_in_bounds_checks_are_ldc_and_stencil_taps_are_operands() {
        let conv = program("conv2d", "constant");
        let prof = Profile::new(&conv);
        let taps: Vec<usize> = (0..conv.insts.len())
            .filter(|&pc| matches!(conv.insts[pc].op, Op::Ld(m) if m.space == StateSpace::Const))
            .collect();
        assert_eq!(taps.len(), 25);
        assert!(taps.iter().all(|&pc| !prof.is_const_operand(pc as u32)));
        let st = program("stencil_1d", "constant");
        let prof = Profile::new(&st);
        let taps: Vec<usize> = (0..st.insts.len())
            .filter(|&pc| matches!(st.insts[pc].op, Op::Ld(m) if m.space == StateSpace::Const))
            .collect();
        assert_eq!(taps.len(), 9);
        assert!(taps.iter().all(|&pc| prof.is_const_operand(pc as u32)));
    }
}
