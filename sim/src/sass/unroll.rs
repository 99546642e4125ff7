//! How far ptxas unrolled each PTX loop and how often a warp waits for loads in it: for every
//! PTX backward branch, how many PTX iterations one iteration of its SASS loop covers and how
//! many times the warp waits for that iteration's loads (the loop's [`Overlap`]), from the SASS's
//! line info and register operands.
//!
//! ptxas unrolls loops further than the PTX does: suite38's `gemm_naive`, whose NVRTC PTX loop
//! already holds four k steps (8 `ld.global.f32`), is a SASS loop of 32 LDGs (16 k steps, 4 PTX
//! iterations) with a 2x block and a 1x loop for the remainder (ptxas 12.9, sm_90). Inside one
//! SASS iteration ptxas hoists loads above their uses, so the loads of several PTX iterations are
//! in flight together; a warp issues in order, so it waits where an instruction needs a load
//! still in flight, and at the latest where the SASS branches back. The replay, which walks the
//! PTX-level trace, makes a warp's instructions after a branch issue after every instruction
//! before it (and so after the loads' uses); with the overlap it does so at `waits` of every
//! `iterations` executions of the loop's backward branch only ([`crate::timing::replay`]).
//!
//! **Iterations**, per PTX loop (a `bra` whose target is at or before it; its body the
//! instructions from the target to the branch):
//!
//! - its **own accesses** are the global, shared, local and generic loads, stores and atomics of
//!   its body that no loop nested in it holds (constant and parameter loads are not counted:
//!   ptxas makes most of them operands; local ones not where ptxas keeps local memory in
//!   registers). ptxas emits exactly one SASS access per PTX access it keeps, each attributed
//!   to its PTX line, and a merged vector (two `ld.global.f32` of consecutive iterations as one
//!   `LDG.E.64`) carries their bytes: so the iterations are the bytes per lane of the own
//!   accesses' SASS copies in one SASS loop over the bytes per lane of the own accesses in the
//!   PTX body;
//! - the SASS loops (a branch to an instruction at or before it) that hold them, each copy
//!   counted in its innermost SASS loop only (an inner loop's copies are not its outer loop's),
//!   and holding no access from outside the PTX loop's body: the largest ratio among them (the
//!   main unrolled loop, not the remainder loops). Where none is such a loop (ptxas unrolled the
//!   PTX loop completely, into straight code or into an enclosing SASS loop), the ratio of the
//!   region that holds the copies: the whole trip count, so the warp waits only on leaving;
//! - rounded to the nearest whole number, at least 1 (a merged remainder or a load ptxas
//!   hoisted out of the loop leave a fraction).
//!
//! **Waits**: the SASS loop's body issued in order, three iterations ([`waves`]): an instruction
//! issues no earlier than the one before it and than its source registers, and a global, local
//! or generic load's result is one wait later than its issue; the third iteration's waits, at
//! least 1 and at most the iterations. ptxas does not always put every load above the first use:
//! `gemm_naive` waits twice per SASS iteration of 4 PTX iterations, `matvec_cols`, short of
//! registers, issues its 32 LDGs in three groups between FFMAs and waits three times (its
//! measured time per SASS iteration on the H200, `tests/fixtures/suite38`: 2,680 cycles with A
//! from DRAM, 1,040 from L2 (`--warm`), three times a load's latency under load; one wait per
//! iteration was predicted 42% and 60% short). Where the PTX loop has no SASS loop, or its SASS
//! loop holds another loop, 1.
//!
//! **Loops without accesses** (a chain of arithmetic, suite38's `spin`): their iterations come
//! from the integer immediates of their arithmetic instead of bytes. ptxas keeps an operand
//! such as `mad.lo.s32 %r27, %r27, 158984081, -1426500812`'s in every SASS copy of the
//! instruction (`IMAD R3, R3, R4, -0x5506accc`, the other hoisted into a register), so the
//! copies of each distinctive immediate (at least 256 in magnitude as a 32-bit integer: small
//! ones such as steps and masks are shared, and ptxas folds unrolled steps into them) in the
//! SASS loop over their PTX copies in the body are the iterations: `spin`'s PTX loop of 4
//! multiply-adds of one LCG step each (NVVM unrolled it 4x) is a SASS loop of 16 (ptxas 12.9,
//! sm_90), 4 PTX iterations, one wait at its branch; measured on the H200, 10.30 µs for 10,000
//! steps of one warp, where every PTX iteration waiting gave 15.65 µs. Only a SASS loop counts
//! here (no region outside every loop).
//!
//! Every loop where there is no SASS (ptxas absent), or neither accesses nor such immediates to
//! count, has [`Overlap::NONE`]: every execution of its backward branch waits, as before.

use super::listing::{Function, Inst};
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{Overlap, Program, Src};
use crate::ptx::inst::Op;
use std::collections::HashSet;

/// Bytes per lane of a SASS load, store or atomic from its opcode's modifiers (`LDG.E.128` 16,
/// `STS.64` 8, `LDG.E.U16` 2, `LDS.U8` 1, plain 4), `None` for any other instruction (LDC
/// included: constants are not counted).
fn sass_bytes(i: &Inst) -> Option<u32> {
    let access = i.is_memory_access();
    access.then(|| {
        let mut bytes = 4;
        for m in i.opcode.split('.').skip(1) {
            bytes = match m {
                "128" => 16,
                "64" => 8,
                "U16" | "S16" => 2,
                "U8" | "S8" => 1,
                _ => continue,
            };
        }
        bytes
    })
}

/// Bytes per lane of PTX instruction `pc` of `program` when it is an access the SASS keeps as a
/// load, store or atomic (module docs), else `None`.
fn ptx_bytes(program: &Program, pc: usize) -> Option<u32> {
    let kept = |s: StateSpace| match s {
        StateSpace::Global | StateSpace::Shared | StateSpace::Generic => true,
        StateSpace::Local => !program.local.in_registers(),
        _ => false,
    };
    match program.insts[pc].op {
        Op::Ld(m) | Op::St(m) if kept(m.space) => Some(m.bytes_per_thread()),
        Op::Atom(a) | Op::Red(a) if kept(a.space) => Some(a.ty.bytes()),
        _ => None,
    }
}

/// The overlap of every instruction of `program` from the SASS function `f` of the same kernel:
/// for a backward branch its loop's (module docs), [`Overlap::NONE`] for every other
/// instruction; empty when every loop's is (nothing unrolled beyond the PTX, or no loop).
pub fn overlaps(f: &Function, program: &Program) -> Vec<Overlap> {
    let n = program.insts.len();
    // PTX loops: (first, branch) of each backward branch.
    let loops: Vec<(usize, usize)> = (0..n)
        .filter(|&b| program.insts[b].op == Op::Bra)
        .map(|b| (program.insts[b].target as usize, b))
        .filter(|&(t, b)| t <= b)
        .collect();
    if loops.is_empty() {
        return vec![];
    }
    let inner = innermost(f);
    let mut out = vec![Overlap::NONE; n];
    let mut any = false;
    for &(t, b) in &loops {
        // Nested loops' bodies: their accesses are not this loop's own.
        let nested: Vec<(usize, usize)> = (loops.iter().copied())
            .filter(|&(t2, b2)| (t2, b2) != (t, b) && t <= t2 && b2 <= b)
            .collect();
        let mut own: HashSet<u32> = HashSet::new();
        let mut body: HashSet<u32> = HashSet::new();
        let mut ptx = 0u64;
        for pc in t..=b {
            let line = program.lines[pc];
            body.insert(line);
            let Some(bytes) = ptx_bytes(program, pc) else {
                continue;
            };
            if nested.iter().all(|&(t2, b2)| pc < t2 || pc > b2) {
                own.insert(line);
                ptx += u64::from(bytes);
            }
        }
        if ptx == 0 {
            if let Some(k) = immediate_ratio(f, &inner, program, (t, b), &body) {
                any = true;
                out[b] = Overlap {
                    iterations: k,
                    waits: 1,
                };
            }
            continue;
        }
        let (sass, region) = ratio(f, &inner, &own, &body);
        let k = (sass as f64 / ptx as f64)
            .round()
            .clamp(1.0, f64::from(u16::MAX)) as u16;
        let waits = match region {
            Some(i) => waves(f, i).clamp(1, k),
            None => 1,
        };
        any |= waits < k;
        out[b] = Overlap {
            iterations: k,
            waits,
        };
    }
    if any {
        out
    } else {
        vec![]
    }
}

/// For each SASS instruction, the innermost SASS loop that holds it (the index of the loop's
/// backward branch), `None` outside every loop. A SASS loop is a branch and the instructions
/// from its target up to it.
fn innermost(f: &Function) -> Vec<Option<usize>> {
    let loops: Vec<(usize, usize)> = (f.insts.iter().enumerate())
        .filter_map(|(i, inst)| inst.target.filter(|&t| t <= i).map(|t| (t, i)))
        .collect();
    (0..f.insts.len())
        .map(|x| {
            (loops.iter())
                .filter(|&&(t, i)| t <= x && x <= i)
                .min_by_key(|&&(t, i)| (i - t, i))
                .map(|&(_, i)| i)
        })
        .collect()
}

/// The SASS bytes per lane of the copies of lines `own` in the region that [`overlaps`] takes,
/// and the region (the SASS loop's branch, `None`: outside every loop): the largest of the SASS
/// loops holding no access from outside `body`, else the largest of any region.
fn ratio(
    f: &Function,
    inner: &[Option<usize>],
    own: &HashSet<u32>,
    body: &HashSet<u32>,
) -> (u64, Option<usize>) {
    // Per region: own bytes, and whether it holds an access of a line outside the body.
    let mut regions: Vec<(Option<usize>, u64, bool)> = vec![];
    for (i, inst) in f.insts.iter().enumerate() {
        let Some(bytes) = sass_bytes(inst) else {
            continue;
        };
        let r = inner[i];
        let k = match regions.iter().position(|e| e.0 == r) {
            Some(k) => k,
            None => {
                regions.push((r, 0, false));
                regions.len() - 1
            }
        };
        if own.contains(&inst.ptx_line) {
            regions[k].1 += u64::from(bytes);
        } else if inst.ptx_line != 0 && !body.contains(&inst.ptx_line) {
            regions[k].2 = true;
        }
    }
    let best = |pure: bool| {
        (regions.iter())
            .filter(|e| e.1 > 0 && (!pure || (e.0.is_some() && !e.2)))
            .max_by_key(|e| e.1)
            .map(|e| (e.1, e.0))
    };
    best(true).or_else(|| best(false)).unwrap_or((0, None))
}

/// The distinctive integer immediates of PTX instruction `pc` (module docs): arithmetic
/// operands of at least 256 in magnitude, as 32-bit words.
fn ptx_immediates(program: &Program, pc: usize) -> Vec<u32> {
    let inst = &program.insts[pc];
    if !matches!(inst.op, Op::Alu { .. }) {
        return vec![];
    }
    (inst.src.iter())
        .filter_map(|s| match *s {
            Src::Imm(v) => Some(v as u32),
            _ => None,
        })
        .filter(|&w| (w as i32).unsigned_abs() >= 256)
        .collect()
}

/// The integer immediates a SASS operand list writes (`0x979e791`, `-0x5506accc`), as 32-bit
/// words; addresses in brackets and constant-bank offsets (`c[0x0][0x210]`) are not operands.
fn sass_immediates(operands: &str) -> Vec<u32> {
    (operands.split(',').map(str::trim))
        .filter(|o| !o.contains('['))
        .filter_map(|o| {
            let (neg, hex) = match o.strip_prefix('-') {
                Some(h) => (true, h),
                None => (false, o),
            };
            let v = i64::from_str_radix(hex.strip_prefix("0x")?, 16).ok()?;
            Some((if neg { -v } else { v }) as u32)
        })
        .collect()
}

/// PTX iterations per SASS iteration of the PTX loop `(t, b)` (lines `body`) from its
/// distinctive immediates (module docs): per SASS loop that holds only instructions of the
/// body's lines, the most SASS copies of one immediate over its PTX copies; the largest, rounded,
/// if more than 1.
fn immediate_ratio(
    f: &Function,
    inner: &[Option<usize>],
    program: &Program,
    (t, b): (usize, usize),
    body: &HashSet<u32>,
) -> Option<u16> {
    let mut ptx: std::collections::HashMap<u32, u64> = Default::default();
    for pc in t..=b {
        for w in ptx_immediates(program, pc) {
            *ptx.entry(w).or_default() += 1;
        }
    }
    if ptx.is_empty() {
        return None;
    }
    // Per SASS loop (its branch): copies per immediate, and whether it holds another line.
    let mut loops: std::collections::HashMap<usize, (std::collections::HashMap<u32, u64>, bool)> =
        Default::default();
    for (i, inst) in f.insts.iter().enumerate() {
        let Some(r) = inner[i] else {
            continue;
        };
        let e = loops.entry(r).or_default();
        if inst.ptx_line != 0 && !body.contains(&inst.ptx_line) {
            e.1 = true;
        }
        for w in sass_immediates(&inst.operands) {
            if ptx.contains_key(&w) {
                *e.0.entry(w).or_default() += 1;
            }
        }
    }
    let best = (loops.values())
        .filter(|(_, other)| !other)
        .flat_map(|(copies, _)| copies.iter().map(|(w, &n)| n as f64 / ptx[w] as f64))
        .fold(0.0, f64::max);
    let k = best.round().min(f64::from(u16::MAX)) as u16;
    (k > 1).then_some(k)
}

/// Registers (`R0` to `R254`) an operand names: `R14.64` and a 64-bit access's `[R2.64]` name a
/// pair; `RZ`, uniform (`UR4`), special (`SR_TID.X`) and predicate registers are not counted.
fn registers(operand: &str) -> Vec<u16> {
    let b = operand.as_bytes();
    let mut out = vec![];
    let mut k = 0;
    while k < b.len() {
        let boundary = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
        if b[k] == b'R' && boundary && b.get(k + 1).is_some_and(u8::is_ascii_digit) {
            let digits = b[k + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            let r: u16 = operand[k + 1..k + 1 + digits].parse().unwrap_or(0);
            out.push(r);
            k += 1 + digits;
            if operand[k..].starts_with(".64") {
                out.push(r + 1);
            }
        } else {
            k += 1;
        }
    }
    out
}

/// How many times a warp waits for loads in one iteration of the SASS loop whose backward
/// branch is instruction `i` of `f`, as it issues in order: an instruction issues no earlier
/// than the one before it and than its sources, and a global, local or generic load's (or a
/// returning atomic's) result comes one wait later than its issue (shared loads and ALU
/// results, tens of cycles, count none). Three iterations are walked, so that values carried
/// from one to the next (a load issued for the next iteration) count; the waits are the third's.
/// 0 for a loop that holds another.
fn waves(f: &Function, i: usize) -> u16 {
    let Some(t) = f.insts[i].target else {
        return 0;
    };
    let body = &f.insts[t..=i];
    if (t..i).any(|x| f.insts[x].target.is_some_and(|to| t <= to && to <= x)) {
        return 0;
    }
    let mut ready = [0u32; 256];
    let mut now = 0u32;
    let mut ends = [0u32; 3];
    for end in ends.iter_mut() {
        for x in body {
            let mut ops = x.operands.split(',').map(str::trim);
            let first = ops.next().unwrap_or("");
            let dst =
                first.starts_with('R') && first[1..].starts_with(|c: char| c.is_ascii_digit());
            let srcs = (if dst { None } else { Some(first) })
                .into_iter()
                .chain(ops);
            for r in srcs.flat_map(registers) {
                now = now.max(ready[usize::from(r as u8)]);
            }
            if !dst {
                continue;
            }
            let long = matches!(x.base(), "LDG" | "LD" | "LDL" | "ATOM" | "ATOMG");
            let width = match sass_bytes(x) {
                Some(b) => b.div_ceil(4),
                None if x.opcode.contains(".WIDE") || x.base().starts_with('D') => 2,
                None => 1,
            };
            let r0 = registers(first).first().copied().unwrap_or(0);
            for r in r0..r0 + width as u16 {
                ready[usize::from(r as u8)] = now + u32::from(long);
            }
        }
        *end = now;
    }
    (ends[2] - ends[1]).min(u32::from(u16::MAX)) as u16
}

#[cfg(test)]
mod tests;
