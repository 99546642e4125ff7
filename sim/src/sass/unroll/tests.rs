//! Tests of `sass::unroll`: iterations and waits of PTX loops from hand-written SASS.
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
