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
mod tests {
    use super::*;
    use crate::ptx::decode;
    use crate::sass::listing::parse;
    use std::collections::HashMap;

    /// PTX `text` decoded (entry `k`, one `.u64` parameter `k_p`).
    fn decoded(text: &str) -> Program {
        let m = crate::ptx::parse(text, "t.ptx").unwrap();
        let symbols = HashMap::from([("k_p".to_string(), decode::SymbolAddr::Param(0))]);
        decode::decode(m.entry("k").unwrap(), &symbols, text, "t.ptx").unwrap()
    }

    /// A sum over 64 floats: the loop's load at PTX line 10, its backward branch at line 15
    /// (program index 7), the store after it at line 16.
    fn program() -> Program {
        decoded(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n\
             .reg .b64 %rd<2>; .reg .f32 %f<3>; .reg .b32 %r<2>; .reg .pred %p<2>;\n\
             ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, 0;\n$L1:\n\
             ld.global.f32 %f1, [%rd1];\nadd.f32 %f2, %f2, %f1;\nadd.s64 %rd1, %rd1, 4;\n\
             add.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 64;\n@%p1 bra $L1;\n\
             st.global.f32 [%rd1], %f2;\nret;\n}\n",
        )
    }

    /// The SASS text `body` of function `k` (`//## line N` stands for nvdisasm's line comment).
    fn function(body: &str) -> Function {
        let text = body.replace("//## line ", "//## File \".nv_debug_ptx_txt\", line ");
        parse(&format!(".text.k:\n{text}"))
            .unwrap()
            .functions
            .remove(0)
    }

    /// The (iterations, waits) of the program's backward branch (the other instructions' are
    /// [`Overlap::NONE`]).
    fn branch(p: &Program, o: &[Overlap]) -> (u16, u16) {
        let b = (p.insts.iter()).position(|i| i.op == Op::Bra).unwrap();
        assert_eq!((p.lines[b], p.insts[b].target), (15, 2));
        if o.is_empty() {
            return (1, 1);
        }
        let none = |(pc, k): (usize, &Overlap)| pc == b || *k == Overlap::NONE;
        assert!(o.iter().enumerate().all(none), "{o:?}");
        (o[b].iterations, o[b].waits)
    }

    /// ptxas's shape for a loop it unrolls 4x: the 4x loop, then a 1x remainder loop.
    const UNROLLED4: &str = "\
//## line 8
/*0000*/ ISETP.GT.AND P0, PT, R0, 0x3, PT ;
/*0010*/ @!P0 BRA `(.L_x_1) ;
.L_x_0:
//## line 10
/*0020*/ LDG.E R4, desc[UR4][R2.64] ;
/*0030*/ LDG.E R5, desc[UR4][R2.64+0x4] ;
/*0040*/ LDG.E R6, desc[UR4][R2.64+0x8] ;
/*0050*/ LDG.E R7, desc[UR4][R2.64+0xc] ;
//## line 11
/*0060*/ FADD R8, R8, R4 ;
/*0070*/ FADD R8, R8, R5 ;
/*0080*/ FADD R8, R8, R6 ;
/*0090*/ FADD R8, R8, R7 ;
//## line 13
/*00a0*/ IADD3 R0, R0, -0x4, RZ ;
//## line 14
/*00b0*/ ISETP.GT.AND P0, PT, R0, 0x3, PT ;
//## line 15
/*00c0*/ @P0 BRA `(.L_x_0) ;
.L_x_1:
//## line 10
/*00d0*/ LDG.E R4, desc[UR4][R2.64] ;
//## line 11
/*00e0*/ FADD R8, R8, R4 ;
//## line 14
/*00f0*/ ISETP.NE.AND P0, PT, R0, RZ, PT ;
//## line 15
/*0100*/ @P0 BRA `(.L_x_1) ;
//## line 16
/*0110*/ STG.E desc[UR4][R2.64], R8 ;
/*0120*/ EXIT ;
.L_x_2:
/*0130*/ BRA `(.L_x_2);
";

    #[test]
    fn a_loop_unrolled_4x_with_a_remainder_loop_overlaps_4() {
        let p = program();
        assert_eq!(branch(&p, &overlaps(&function(UNROLLED4), &p)), (4, 1));
    }

    #[test]
    fn a_loop_as_the_ptx_has_it_overlaps_1() {
        let p = program();
        let once = UNROLLED4.replace(
            "/*0030*/ LDG.E R5, desc[UR4][R2.64+0x4] ;\n\
             /*0040*/ LDG.E R6, desc[UR4][R2.64+0x8] ;\n\
             /*0050*/ LDG.E R7, desc[UR4][R2.64+0xc] ;\n",
            "",
        );
        assert!(overlaps(&function(&once), &p).is_empty());
        // No SASS of the loop's load at all (nothing to count): 1.
        let none = "//## line 16\n/*0000*/ STG.E desc[UR4][R2.64], R8 ;\n/*0010*/ EXIT ;\n";
        assert!(overlaps(&function(none), &p).is_empty());
    }

    #[test]
    fn merged_vectors_carry_the_bytes_of_their_iterations() {
        let p = program();
        // 8 iterations per SASS iteration as two LDG.E.128.
        let merged = "\
.L_x_0:
//## line 10
/*0000*/ LDG.E.128 R4, desc[UR4][R2.64] ;
/*0010*/ LDG.E.128 R8, desc[UR4][R2.64+0x10] ;
//## line 15
/*0020*/ @P0 BRA `(.L_x_0) ;
/*0030*/ EXIT ;
";
        assert_eq!(branch(&p, &overlaps(&function(merged), &p)), (8, 1));
    }

    #[test]
    fn a_loop_unrolled_completely_overlaps_its_trip_count() {
        // 64 iterations of straight code: the warp waits only on leaving the loop.
        let p = program();
        let mut sass = String::from("//## line 10\n");
        for k in 0..64 {
            sass += &format!(
                "/*{:04x}*/ LDG.E R4, desc[UR4][R2.64+0x{:x}] ;\n",
                k * 16,
                k * 4
            );
        }
        sass += "//## line 16\n/*0400*/ STG.E desc[UR4][R2.64], R8 ;\n/*0410*/ EXIT ;\n";
        assert_eq!(branch(&p, &overlaps(&function(&sass), &p)), (64, 1));
    }

    #[test]
    fn a_fraction_rounds_to_the_nearest_whole_number() {
        // Two loads a PTX iteration (lines 10, 11, 8 bytes); 4 copies of line 10 and `copies`
        // of line 11 in the SASS loop (ptxas hoisted the others out, say): (4 + 1) x 4 / 8 = 2.5
        // rounds to 3 (half away from zero), 16 / 8 to 2, 32 / 8 to 4.
        let p = decoded(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n\
             .reg .b64 %rd<2>; .reg .f32 %f<4>; .reg .b32 %r<2>; .reg .pred %p<2>;\n\
             ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, 0;\n$L1:\n\
             ld.global.f32 %f1, [%rd1];\nld.global.f32 %f3, [%rd1+8];\nadd.s64 %rd1, %rd1, 4;\n\
             add.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 64;\n@%p1 bra $L1;\n\
             st.global.f32 [%rd1], %f2;\nret;\n}\n",
        );
        let sass = |copies: usize| {
            let mut s = String::from(".L_x_0:\n//## line 10\n");
            for k in 0..4 {
                s += &format!("/*{:04x}*/ LDG.E R4, desc[UR4][R2.64] ;\n", k * 16);
            }
            s += "//## line 11\n";
            for k in 0..copies {
                s += &format!("/*{:04x}*/ LDG.E R5, desc[UR4][R2.64] ;\n", 0x100 + k * 16);
            }
            s + "//## line 15\n/*0200*/ @P0 BRA `(.L_x_0) ;\n/*0210*/ EXIT ;\n"
        };
        assert_eq!(branch(&p, &overlaps(&function(&sass(1)), &p)), (3, 1));
        assert_eq!(branch(&p, &overlaps(&function(&sass(0)), &p)), (2, 1));
        assert_eq!(branch(&p, &overlaps(&function(&sass(4)), &p)), (4, 1));
    }

    /// An outer loop (lines 8 to 17, branch at 17) around an inner one (lines 9 to 13, load at
    /// 10, branch at 13); the outer's own store at line 14.
    fn nested() -> Program {
        decoded(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n\
             .reg .b64 %rd<2>; .reg .f32 %f<3>; .reg .b32 %r<3>; .reg .pred %p<3>;\n\
             ld.param.u64 %rd1, [k_p];\n$L0:\n$L1:\n\
             ld.global.f32 %f1, [%rd1];\nadd.f32 %f2, %f2, %f1;\n\
             setp.lt.s32 %p1, %r1, 64;\n@%p1 bra $L1;\n\
             st.global.f32 [%rd1], %f2;\nadd.s32 %r2, %r2, 1;\nsetp.lt.s32 %p2, %r2, 8;\n\
             @%p2 bra $L0;\nret;\n}\n",
        )
    }

    /// The PTX iterations per SASS iteration of [`nested`]'s (inner, outer) branches.
    fn inner_outer(sass: &str) -> (u16, u16) {
        let p = nested();
        let o = overlaps(&function(sass), &p);
        let at = |line: u32| {
            let pc = p.lines.iter().position(|&l| l == line).unwrap();
            assert_eq!(p.insts[pc].op, Op::Bra);
            o.get(pc).copied().unwrap_or_default().iterations
        };
        (at(13), at(17))
    }

    #[test]
    fn an_inner_loop_unrolled_2x_in_its_outer_loop() {
        let sass = "\
.L_x_0:
.L_x_1:
//## line 10
/*0000*/ LDG.E R4, desc[UR4][R2.64] ;
/*0010*/ LDG.E R5, desc[UR4][R2.64+0x4] ;
//## line 13
/*0020*/ @P0 BRA `(.L_x_1) ;
//## line 14
/*0030*/ STG.E desc[UR4][R2.64], R8 ;
//## line 17
/*0040*/ @P1 BRA `(.L_x_0) ;
/*0050*/ EXIT ;
";
        assert_eq!(inner_outer(sass), (2, 1));
        // The outer loop unrolled 2x around two copies of the inner 1x loop: the inner loop's
        // copies are its own loops', not the outer's.
        let outer2 = "\
.L_x_0:
.L_x_1:
//## line 10
/*0000*/ LDG.E R4, desc[UR4][R2.64] ;
//## line 13
/*0010*/ @P0 BRA `(.L_x_1) ;
//## line 14
/*0020*/ STG.E desc[UR4][R2.64], R8 ;
.L_x_2:
//## line 10
/*0030*/ LDG.E R4, desc[UR4][R2.64] ;
//## line 13
/*0040*/ @P0 BRA `(.L_x_2) ;
//## line 14
/*0050*/ STG.E desc[UR4][R2.64+0x4], R8 ;
//## line 17
/*0060*/ @P1 BRA `(.L_x_0) ;
/*0070*/ EXIT ;
";
        assert_eq!(inner_outer(outer2), (1, 2));
    }

    #[test]
    fn an_inner_loop_unrolled_completely_into_its_outer_loop() {
        let mut sass = String::from(".L_x_0:\n//## line 10\n");
        for k in 0..64 {
            sass += &format!(
                "/*{:04x}*/ LDG.E R4, desc[UR4][R2.64+0x{:x}] ;\n",
                k * 16,
                k * 4
            );
        }
        sass += "//## line 14\n/*0400*/ STG.E desc[UR4][R2.64], R8 ;\n\
                 //## line 17\n/*0410*/ @P1 BRA `(.L_x_0) ;\n/*0420*/ EXIT ;\n";
        assert_eq!(inner_outer(&sass), (64, 1));
    }

    /// [`UNROLLED4`]'s 4x loop with its body as `body`.
    fn loop4(body: &str) -> Function {
        let start = UNROLLED4.find("//## line 10").unwrap();
        let end = UNROLLED4.find("//## line 15").unwrap();
        function(&(UNROLLED4[..start].to_string() + body + &UNROLLED4[end..]))
    }

    /// The index of `f`'s first backward branch.
    fn back(f: &Function) -> usize {
        (0..f.insts.len())
            .find(|&i| f.insts[i].target.is_some_and(|t| t <= i))
            .unwrap()
    }

    #[test]
    fn loads_behind_a_use_wait_again() {
        // Two loads, a use, two more loads (issued once the first use could), their uses: the
        // warp waits twice per SASS iteration of 4 PTX iterations.
        let f = loop4(
            "//## line 10
/*0020*/ LDG.E R4, desc[UR4][R2.64] ;
             /*0030*/ LDG.E R5, desc[UR4][R2.64+0x4] ;
             //## line 11
/*0040*/ FADD R8, R8, R4 ;
             //## line 10
/*0050*/ LDG.E R6, desc[UR4][R2.64+0x8] ;
             /*0060*/ LDG.E R7, desc[UR4][R2.64+0xc] ;
             //## line 11
/*0070*/ FADD R8, R8, R5 ;
/*0080*/ FADD R8, R8, R6 ;
             /*0090*/ FADD R8, R8, R7 ;
",
        );
        let p = program();
        assert_eq!(branch(&p, &overlaps(&f, &p)), (4, 2));
        assert_eq!(waves(&f, back(&f)), 2);
    }

    #[test]
    fn loads_for_the_next_iteration_wait_once() {
        // Software-pipelined: the uses at the top read the previous iteration's loads.
        let f = loop4(
            "//## line 11
/*0020*/ FADD R8, R8, R4 ;
/*0030*/ FADD R8, R8, R5 ;
             /*0040*/ FADD R8, R8, R6 ;
/*0050*/ FADD R8, R8, R7 ;
             //## line 10
/*0060*/ LDG.E.64 R4, desc[UR4][R2.64] ;
             /*0070*/ LDG.E.64 R6, desc[UR4][R2.64+0x8] ;
",
        );
        let p = program();
        assert_eq!(branch(&p, &overlaps(&f, &p)), (4, 1));
    }

    #[test]
    fn a_chain_of_loads_waits_for_each() {
        // A pointer chase unrolled 4x: each load's address is the previous one's result; 4
        // waits in 4 iterations, as the PTX's: nothing overlaps.
        let f = loop4(
            "//## line 10
/*0020*/ LDG.E.64 R4, desc[UR4][R4.64] ;
             /*0030*/ LDG.E.64 R4, desc[UR4][R4.64] ;
             /*0040*/ LDG.E.64 R4, desc[UR4][R4.64] ;
             /*0050*/ LDG.E.64 R4, desc[UR4][R4.64] ;
",
        );
        let p = program();
        // (Line 10's `ld.global.f32` is 4 bytes: 8-byte copies count 8 iterations.)
        assert_eq!(waves(&f, back(&f)), 4);
        assert_eq!(branch(&p, &overlaps(&f, &p)), (8, 4));
    }

    #[test]
    fn registers_of_operands() {
        assert_eq!(registers("R26"), [26]);
        assert_eq!(registers("desc[UR8][R14.64+0x4]"), [14, 15]);
        assert_eq!(registers("R17.reuse"), [17]);
        assert!(registers("RZ").is_empty() && registers("SR_TID.X").is_empty());
        assert!(registers("UR4").is_empty() && registers("P0").is_empty());
        assert_eq!(registers("c[0x0][R3+0x224]"), [3]);
    }

    #[test]
    fn access_widths_from_the_opcode() {
        let f = function(
            "/*0000*/ LDG.E.128 R4, desc[UR4][R2.64] ;\n/*0010*/ STS.64 [R0], R4 ;\n\
             /*0020*/ LDG.E.U16.CONSTANT R4, desc[UR4][R2.64] ;\n/*0030*/ LDS.U8 R4, [R0] ;\n\
             /*0040*/ RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R0 ;\n/*0050*/ LDS R4, [R0] ;\n\
             /*0060*/ LDC R4, c[0x0][R0+0x210] ;\n/*0070*/ FADD R4, R4, R5 ;\n",
        );
        let w: Vec<Option<u32>> = f.insts.iter().map(sass_bytes).collect();
        assert_eq!(
            w,
            [
                Some(16),
                Some(8),
                Some(2),
                Some(1),
                Some(4),
                Some(4),
                None,
                None
            ]
        );
    }

    /// An LCG loop of one multiply-add per iteration (suite38's `spin`): its backward branch at
    /// line 13 (program index 5).
    fn lcg() -> Program {
        decoded(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n\
             .reg .b64 %rd<2>; .reg .b32 %r<3>; .reg .pred %p<2>;\n\
             ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, 64;\n$L1:\n\
             mad.lo.s32 %r2, %r2, 158984081, -1426500812;\nadd.s32 %r1, %r1, -4;\n\
             setp.ne.s32 %p1, %r1, 0;\n@%p1 bra $L1;\n\
             st.global.u32 [%rd1], %r2;\nret;\n}\n",
        )
    }

    /// The LCG loop as ptxas 12.9 unrolls it for sm_90 (`spin`): `copies` multiply-adds per
    /// SASS iteration, the other immediate hoisted into R4; `extra` is put in the loop.
    fn lcg_sass(copies: usize, extra: &str) -> Function {
        let mut s = String::from(
            "//## line 8\n/*0000*/ IMAD.MOV.U32 R4, RZ, RZ, 0x979e791 ;\n.L_x_0:\n//## line 10\n",
        );
        for k in 0..copies {
            s += &format!("/*{:04x}*/ IMAD R2, R2, R4, -0x5506accc ;\n", 16 + 16 * k);
        }
        let at = 16 + 16 * copies;
        s += &format!(
            "{extra}//## line 11\n/*{:04x}*/ IADD3 R0, R0, -0x{:x}, RZ ;\n\
             //## line 12\n/*{:04x}*/ ISETP.NE.AND P0, PT, R0, RZ, PT ;\n\
             //## line 13\n/*{:04x}*/ @P0 BRA `(.L_x_0) ;\n\
             //## line 14\n/*{:04x}*/ STG.E desc[UR4][R6.64], R2 ;\n/*{:04x}*/ EXIT ;\n",
            at,
            4 * copies,
            at + 16,
            at + 32,
            at + 48,
            at + 64
        );
        function(&s)
    }

    #[test]
    fn an_arithmetic_loop_counts_its_iterations_by_its_immediates() {
        let p = lcg();
        let b = (p.insts.iter()).position(|i| i.op == Op::Bra).unwrap();
        assert_eq!((p.lines[b], p.insts[b].target), (13, 2));
        let of = |f: &Function| overlaps(f, &p).get(b).map(|o| (o.iterations, o.waits));
        // 4 copies of `-0x5506accc` for 1 in the PTX: 4 PTX iterations, one wait.
        assert_eq!(of(&lcg_sass(4, "")), Some((4, 1)));
        assert_eq!(of(&lcg_sass(16, "")), Some((16, 1)));
        // As the PTX has it: nothing overlaps.
        assert_eq!(of(&lcg_sass(1, "")), None);
        // A SASS loop holding an instruction of another line is not the PTX loop's.
        let other = "//## line 14\n/*0f00*/ IADD3 R6, R6, 0x4, RZ ;\n";
        assert_eq!(of(&lcg_sass(4, other)), None);
    }

    #[test]
    fn immediates_of_sass_operands() {
        assert_eq!(
            sass_immediates("R3, R7, 0x979e791, -0x5506accc"),
            [0x979e791, 0x5506accc_u32.wrapping_neg()]
        );
        // Addresses and constant-bank offsets are not operands; nor are registers.
        assert!(sass_immediates("R2, c[0x0][0x210], desc[UR4][R2.64+0x400], RZ").is_empty());
    }
}
