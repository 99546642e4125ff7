//! Which PTX shared loads and stores ptxas merged into wider SASS ones (four neighbouring
//! `ld.shared.f32` into one `LDS.128`, two into an `LDS.64`; likewise `STS`), from the PTX line
//! of each SASS instruction (line info), so that the shared-memory model counts wavefronts for
//! the access the GPU makes rather than for the PTX's.
//!
//! The rule per PTX shared access (a [`Program`] instruction), as [`Program::shared_widths`]
//! carries it to the execution:
//!
//! - every SASS `LDS`/`STS` of its line is `W` bytes wide, wider than the PTX access: merged,
//!   [`WIDE_8`] or [`WIDE_16`]. An `LDS.128` needs a 16-byte aligned address, so of the accesses
//!   it stands for, the one whose lanes are all at `W`-aligned addresses is the group's first:
//!   that execution is modelled as one `W`-byte access from its addresses, the others of the
//!   group (lanes not aligned) take no wavefront. This covers both shapes ptxas makes: four PTX
//!   lines `[%rd3]`, `[%rd3+4]`, `[%rd3+8]`, `[%rd3+12]` merged (attributed to the first), and
//!   one line of a loop whose four consecutive iterations ptxas unrolled and merged.
//! - no SASS `LDS`/`STS` at its line while the function has merged ones: [`ABSORBED`], its data
//!   came with another line's wide access; no wavefront.
//! - otherwise [`AS_PTX`].
//!
//! A line with SASS accesses of mixed widths (an unrolled loop's merged body and its scalar
//! remainder) stays as the PTX says: which copy ran is not known per execution.

use super::listing::Function;
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::Program;
use crate::ptx::inst::Op;
use std::collections::HashMap;

/// [`Program::shared_widths`]: the access is modelled as the PTX says.
pub const AS_PTX: u8 = 0;
/// Merged into an 8-byte `LDS.64`/`STS.64`.
pub const WIDE_8: u8 = 8;
/// Merged into a 16-byte `LDS.128`/`STS.128`.
pub const WIDE_16: u8 = 16;
/// No SASS access of its own: another line's wide access carried its data.
pub const ABSORBED: u8 = u8::MAX;

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

/// The per-instruction merge code of `program` (one of [`AS_PTX`], [`WIDE_8`], [`WIDE_16`],
/// [`ABSORBED`] per PTX instruction) from the SASS function `f` of the same kernel; empty when
/// ptxas merged nothing.
pub fn shared_widths(f: &Function, program: &Program) -> Vec<u8> {
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
    let mut out = vec![AS_PTX; program.insts.len()];
    // Per kind (load, store): whether any merged, and the accesses with no SASS of their own.
    let mut merged = [false; 2];
    let mut plain: Vec<(usize, bool)> = vec![];
    for (pc, (inst, &line)) in program.insts.iter().zip(&program.lines).enumerate() {
        let (m, store) = match inst.op {
            Op::Ld(m) => (m, false),
            Op::St(m) => (m, true),
            _ => continue,
        };
        if m.space != StateSpace::Shared {
            continue;
        }
        match at.get(&(line, store)) {
            Some(ws) => {
                let w = ws[0];
                if w > m.bytes_per_thread() && ws.iter().all(|&x| x == w) {
                    out[pc] = w as u8;
                    merged[usize::from(store)] = true;
                }
            }
            None => plain.push((pc, store)),
        }
    }
    if merged == [false; 2] {
        return vec![];
    }
    for (pc, store) in plain {
        if merged[usize::from(store)] {
            out[pc] = ABSORBED;
        }
    }
    out
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
        let by_line: Vec<(u32, u8)> = p.lines.iter().copied().zip(w).take(6).collect();
        assert_eq!(
            by_line,
            [
                (7, AS_PTX),
                (8, WIDE_16),
                (9, ABSORBED),
                (10, ABSORBED),
                (11, ABSORBED),
                (12, AS_PTX)
            ]
        );
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
}
