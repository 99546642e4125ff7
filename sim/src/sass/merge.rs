//! Which PTX shared loads and stores ptxas merged into wider SASS ones (four neighbouring
//! `ld.shared.f32` into one `LDS.128`, two into an `LDS.64`; likewise `STS`), from the PTX line
//! of each SASS instruction (line info), so that the shared-memory model counts wavefronts for
//! the access the GPU makes rather than for the PTX's.
//!
//! The rule per PTX shared access (a [`Program`] instruction), as [`Program::shared_widths`]
//! carries it to the execution ([`Merge`]):
//!
//! - every SASS `LDS`/`STS` of its line is `W` bytes wide, wider than the PTX access: merged.
//!   Where PTX accesses of the same base register have no SASS access of their own (four lines
//!   `[%rd3]`, `[%rd3+4]`, `[%rd3+8]`, `[%rd3+12]`; ptxas attributes the wide access to one of
//!   them, not always the first: `STS.64` of four `st.shared.u16` goes to the last), they are
//!   one group: [`Merge::Group`], one `W`-byte access from the group's first address. Else it is
//!   one line of a loop whose consecutive iterations ptxas unrolled and merged:
//!   [`Merge::Aligned`]; an `LDS.128` needs a 16-byte aligned address, so the iteration whose
//!   lanes are all `W`-aligned stands for the group, the others take no wavefront.
//! - no SASS `LDS`/`STS` at its line while the function has merged ones: [`Merge::Absorbed`],
//!   its data came with another line's wide access; no wavefront.
//! - otherwise [`Merge::AsPtx`].
//!
//! A line with SASS accesses of mixed widths (an unrolled loop's merged body and its scalar
//! remainder) stays as the PTX says: which copy ran is not known per execution.

use super::listing::Function;
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::Program;
/// The decoded program carries each access's merge; this module finds them.
pub use crate::ptx::decode::{LocalMemory, Merge};
use crate::ptx::inst::Op;
use std::collections::HashMap;

/// Bytes per lane of a SASS shared access from its opcode (`LDS.128` 16, `STS.64` 8, `LDS.U8`
/// and plain `LDS` at most 4: returned as 4).
fn sass_bytes(opcode: &str) -> u32 {
    match opcode
        .split('.')
        .skip(1)
        .find(|m| *m == "128" || *m == "64")
    {
        Some("128") => 16,
        Some("64") => 8,
        _ => 4,
    }
}

/// The [`Merge`] of each instruction of `program` from the SASS function `f` of the same kernel;
/// empty when ptxas merged nothing.
pub fn shared_widths(f: &Function, program: &Program) -> Vec<Merge> {
    // Per (PTX line, store?): the widths of the SASS shared accesses attributed to it.
    let mut at: HashMap<(u32, bool), Vec<u32>> = HashMap::new();
    for i in &f.insts {
        let store = match i.base() {
            "LDS" => false,
            "STS" => true,
            _ => continue,
        };
        at.entry((i.ptx_line, store))
            .or_default()
            .push(sass_bytes(&i.opcode));
    }
    let mut out = vec![Merge::AsPtx; program.insts.len()];
    // Per kind (load, store): whether any merged, and the accesses with no SASS of their own.
    let mut merged = [false; 2];
    let mut plain: Vec<(usize, bool)> = vec![];
    let mut wide: Vec<(usize, bool, u32)> = vec![];
    for (pc, (inst, &line)) in program.insts.iter().zip(&program.lines).enumerate() {
        let Some((_, store)) = shared_access(program, pc) else {
            continue;
        };
        let bytes = match inst.op {
            Op::Ld(m) | Op::St(m) => m.bytes_per_thread(),
            _ => continue,
        };
        match at.get(&(line, store)) {
            Some(ws) => {
                let w = ws[0];
                if w > bytes && ws.iter().all(|&x| x == w) {
                    wide.push((pc, store, w));
                    merged[usize::from(store)] = true;
                }
            }
            None => plain.push((pc, store)),
        }
    }
    if merged == [false; 2] {
        return vec![];
    }
    let absorbed: Vec<(usize, bool)> = (plain.into_iter())
        .filter(|&(_, store)| merged[usize::from(store)])
        .collect();
    for &(pc, _) in &absorbed {
        out[pc] = Merge::Absorbed;
    }
    for &(pc, store, w) in &wide {
        let (base, off) = shared_access(program, pc)
            .map(|(a, _)| a)
            .unwrap_or_default();
        // The absorbed accesses and the wide ones of the same base register and kind: one
        // group per `w`-byte window, the windows counted from their lowest offset.
        let same = |&(q, st): &(usize, bool)| {
            st == store && shared_access(program, q).is_some_and(|((b, _), _)| b == base)
        };
        if base.is_none() || !absorbed.iter().any(same) {
            out[pc] = Merge::Aligned { bytes: w as u8 };
            continue;
        }
        let lowest = (absorbed.iter().copied())
            .chain(wide.iter().map(|&(q, st, _)| (q, st)))
            .filter(same)
            .filter_map(|(q, _)| shared_access(program, q).map(|((_, o), _)| o))
            .min()
            .unwrap_or(off);
        let back = (off - lowest).rem_euclid(i64::from(w));
        out[pc] = Merge::Group {
            bytes: w as u8,
            back: back as u8,
        };
    }
    out
}

/// Where the local memory of `program` is on the GPU ([`Program::local`]), from the SASS
/// function `f` of the same kernel: in registers where the PTX loads or stores local memory and
/// `f` has no `LDL`/`STL`, nor a generic `LD`/`ST` that could reach local memory; holding
/// parameters where `f` also has predicated LDCs of fixed addresses (the select chain over a
/// by-value array parameter: tests/fixtures/suite37's `param_table_local`, no local request and
/// 16 `@P0 LDC R0, c[0x0][0x224..0x260]` per lookup on the H200).
pub fn local_memory(f: &Function, program: &Program) -> LocalMemory {
    let local = program.insts.iter().any(|i| match i.op {
        Op::Ld(m) | Op::St(m) => m.space == StateSpace::Local,
        _ => false,
    });
    let memory = (f.insts.iter()).any(|i| matches!(i.base(), "LDL" | "STL" | "LD" | "ST"));
    if !local || memory {
        return LocalMemory::Memory;
    }
    let selects = (f.insts.iter())
        .filter(|i| i.base() == "LDC" && !i.guard.is_empty() && !i.constant_indexed())
        .count();
    let loads = (program.insts.iter())
        .filter(|i| matches!(i.op, Op::Ld(m) if m.space == StateSpace::Local))
        .count();
    match selects.checked_div(loads) {
        Some(ldcs) if ldcs > 0 => LocalMemory::ParameterSelect {
            ldcs: ldcs.min(usize::from(u16::MAX)) as u16,
        },
        _ => LocalMemory::Registers,
    }
}

/// The (base register, offset) and kind (store?) of instruction `pc` when it is a shared load
/// or store (base `None`: an immediate address).
fn shared_access(program: &Program, pc: usize) -> Option<((Option<u16>, i64), bool)> {
    let inst = &program.insts[pc];
    let (m, store) = match inst.op {
        Op::Ld(m) => (m, false),
        Op::St(m) => (m, true),
        _ => return None,
    };
    if m.space != StateSpace::Shared {
        return None;
    }
    let a = inst.addr?;
    let base = match a.base {
        crate::ptx::decode::Src::Reg(r) => Some(r),
        _ => None,
    };
    Some(((base, a.offset), store))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::decode;
    use crate::sass::listing::parse;

    /// Four `ld.shared.f32` of `[%rd1]` .. `[%rd1+12]` (PTX lines 8 to 11), a store (line 12).
    fn program() -> Program {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n.reg .b64 %rd<2>; .reg .f32 %f<5>;\n\
             ld.param.u64 %rd1, [k_p];\nld.shared.f32 %f1, [%rd1];\n\
             ld.shared.f32 %f2, [%rd1+4];\nld.shared.f32 %f3, [%rd1+8];\n\
             ld.shared.f32 %f4, [%rd1+12];\nst.shared.f32 [%rd1], %f1;\nret;\n}\n";
        let m = crate::ptx::parse(text, "t.ptx").unwrap();
        let symbols = HashMap::from([("k_p".to_string(), decode::SymbolAddr::Param(0))]);
        decode::decode(m.entry("k").unwrap(), &symbols, text, "t.ptx").unwrap()
    }

    fn function(sass: &str) -> Function {
        parse(&format!(".text.k:\n{sass}/*0f00*/ EXIT ;\n"))
            .unwrap()
            .functions
            .remove(0)
    }

    #[test]
    fn four_loads_merged_into_one_lds128() {
        let p = program();
        let f = function(
            "//## File \"p\", line 8\n/*0000*/ LDS.128 R4, [UR4] ;\n\
             //## File \"p\", line 12\n/*0010*/ STS [UR4], R4 ;\n",
        );
        let w = shared_widths(&f, &p);
        // (The decoder's closing instructions after line 12 are not shared accesses.)
        let by_line: Vec<(u32, Merge)> = p.lines.iter().copied().zip(w).take(6).collect();
        assert_eq!(
            by_line,
            [
                (7, Merge::AsPtx),
                (8, Merge::Group { bytes: 16, back: 0 }),
                (9, Merge::Absorbed),
                (10, Merge::Absorbed),
                (11, Merge::Absorbed),
                (12, Merge::AsPtx)
            ]
        );
    }

    #[test]
    fn a_group_attributed_to_its_last_line_starts_at_the_first() {
        // Four st.shared.u16 (lines 8 to 11) that ptxas makes one STS.64 of line 11, as in
        // tests/fixtures/tensor/mma.ptx.
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n.reg .b64 %rd<2>; .reg .b16 %rs<2>;\n\
             ld.param.u64 %rd1, [k_p];\nst.shared.u16 [%rd1], %rs1;\n\
             st.shared.u16 [%rd1+2], %rs1;\nst.shared.u16 [%rd1+4], %rs1;\n\
             st.shared.u16 [%rd1+6], %rs1;\nret;\n}\n";
        let m = crate::ptx::parse(text, "t.ptx").unwrap();
        let symbols = HashMap::from([("k_p".to_string(), decode::SymbolAddr::Param(0))]);
        let p = decode::decode(m.entry("k").unwrap(), &symbols, text, "t.ptx").unwrap();
        let f = function("//## File \"p\", line 11\n/*0000*/ STS.64 [R2], R4 ;\n");
        let w = shared_widths(&f, &p);
        assert_eq!(
            &w[1..5],
            [
                Merge::Absorbed,
                Merge::Absorbed,
                Merge::Absorbed,
                Merge::Group { bytes: 8, back: 6 }
            ]
        );
    }

    #[test]
    fn a_loop_line_merged_across_iterations_is_aligned() {
        let p = program();
        // Only line 8 has an LDS.128 (ptxas merged its iterations), lines 9-11 their own LDS.
        let f = function(
            "//## File \"p\", line 8\n/*0000*/ LDS.128 R4, [R2] ;\n\
             //## File \"p\", line 9\n/*0010*/ LDS R5, [R2+0x4] ;\n\
             //## File \"p\", line 10\n/*0020*/ LDS R5, [R2+0x8] ;\n\
             //## File \"p\", line 11\n/*0030*/ LDS R5, [R2+0xc] ;\n\
             //## File \"p\", line 12\n/*0040*/ STS [R2], R5 ;\n",
        );
        assert_eq!(shared_widths(&f, &p)[1], Merge::Aligned { bytes: 16 });
    }

    #[test]
    fn unmerged_or_mixed_widths_stay_as_the_ptx() {
        let p = program();
        let scalar = "//## File \"p\", line 8\n/*0000*/ LDS R4, [UR4] ;\n\
             //## File \"p\", line 9\n/*0010*/ LDS R5, [UR4+0x4] ;\n";
        assert!(shared_widths(&function(scalar), &p).is_empty());
        // An unrolled loop's merged copy and its scalar remainder: which one ran is not known.
        let mixed = "//## File \"p\", line 8\n/*0000*/ LDS.128 R4, [UR4] ;\n\
             /*0010*/ LDS R5, [UR4] ;\n";
        assert!(shared_widths(&function(mixed), &p).is_empty());
    }

    #[test]
    fn widths_from_the_opcode() {
        assert_eq!(sass_bytes("LDS.128"), 16);
        assert_eq!(sass_bytes("STS.64"), 8);
        assert_eq!(sass_bytes("LDS.U8"), 4);
        assert_eq!(sass_bytes("LDS"), 4);
    }

    #[test]
    fn local_memory_is_in_registers_only_where_the_sass_has_no_local_access() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{\n\
             .reg .b64 %rd<2>; .reg .f32 %f<2>;\nld.param.u64 %rd1, [k_p];\n\
             st.local.f32 [%rd1], %f1;\nld.local.f32 %f1, [%rd1];\nret;\n}\n";
        let m = crate::ptx::parse(text, "t.ptx").unwrap();
        let symbols = HashMap::from([("k_p".to_string(), decode::SymbolAddr::Param(0))]);
        let p = decode::decode(m.entry("k").unwrap(), &symbols, text, "t.ptx").unwrap();
        let selects = function("/*0000*/ @P0 LDC R0, c[0x0][0x224] ;\n/*0010*/ MOV R1, R0 ;\n");
        assert_eq!(
            local_memory(&selects, &p),
            LocalMemory::ParameterSelect { ldcs: 1 }
        );
        let moves = function("/*0000*/ @P0 MOV R0, R2 ;\n/*0010*/ LDC R1, c[0x0][R3+0x224] ;\n");
        assert_eq!(local_memory(&moves, &p), LocalMemory::Registers);
        for sass in [
            "/*0000*/ STL [R1], R0 ;\n",
            "/*0000*/ LDL.64 R2, [R1] ;\n",
            "/*0000*/ LD.E R2, [R4.64] ;\n",
        ] {
            assert_eq!(
                local_memory(&function(sass), &p),
                LocalMemory::Memory,
                "{sass}"
            );
        }
        // A kernel without local accesses keeps nothing in registers.
        assert_eq!(local_memory(&selects, &program()), LocalMemory::Memory);
    }
}
