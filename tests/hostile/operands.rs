//! Operands ptxas refuses or reads differently from what they say: a register whose declared
//! type does not fit the instruction ("Arguments mismatch for instruction"), a predicate as a
//! value or a value as a guard; an immediate wider than its operand (ptxas keeps its low bits);
//! a workload argument its `.param` cannot hold.

use super::*;

/// add_one with `from` replaced by `to` in its PTX.
fn edited(tag: &str, from: &'static str, to: &'static str) -> String {
    workload(tag, move |t| t.replacen(from, to, 1), str::to_string)
}

#[test]
fn a_register_of_the_wrong_type_is_an_error_naming_the_line() {
    for (tag, from, to, want) in [
        (
            "wide",
            "add.s32 \t%r7, %r6, 1;",
            "add.s32 \t%r7, %rd6, 1;",
            "add_one.ptx:42:2: `%rd6` is declared .b64, which does not fit the .s32 operand \
(ptxas: \"Arguments mismatch for instruction 'add'\")",
        ),
        (
            "narrow_st",
            "st.global.u32 \t[%rd7], %r7;",
            "st.global.u64 \t[%rd7], %r7;",
            "add_one.ptx:45:2: `%r7` is declared .b32, which does not fit the .u64 operand \
(ptxas: \"Arguments mismatch for instruction 'st'\")",
        ),
        (
            "pred_value",
            "add.s32 \t%r7, %r6, 1;",
            "add.s32 \t%r7, %p1, 1;",
            "add_one.ptx:42:2: `%p1` is a .pred register, not a .s32 value",
        ),
        (
            "setp_dst",
            "setp.ge.s32 \t%p1, %r1, %r2;",
            "setp.ge.s32 \t%r6, %r1, %r2;",
            "add_one.ptx:35:2: `%r6` is a .b32 register, not a predicate (ptxas: \"Arguments \
mismatch for instruction 'setp'\")",
        ),
        (
            "guard",
            "@%p1 bra",
            "@%r1 bra",
            "add_one.ptx:36:2: the guard `%r1` is not a .pred register",
        ),
    ] {
        let p = edited(tag, from, to);
        run(&p).fails_with(&[want]);
    }
    // What the relaxed rules of ld, st and cvt allow runs: a narrow load into a wide register.
    let p = edited(
        "relaxed",
        "st.global.u32 \t[%rd7], %r7;",
        "cvt.u64.u32 \t%rd5, %r7;\n\tst.global.u32 \t[%rd7], %rd5;",
    );
    run(&p).succeeds();
}

#[test]
fn an_immediate_wider_than_its_operand_keeps_its_low_bits_with_a_note() {
    // ptxas assembles `add.u32 %r1, %r2, 0x1200000005` to the cubin of `add.u32 %r1, %r2, 5`.
    let p = edited(
        "imm",
        "add.s32 \t%r7, %r6, 1;",
        "add.s32 \t%r7, %r6, 0x10000000001;",
    );
    let out = sim(&["run", "configs/h200.toml", &p, "--format", "json"]);
    out.succeeds();
    assert!(
        out.stdout.contains(
            "add_one.ptx:42: the immediate 1099511627777 does not fit the .s32 operand of \
`add.s32 %r7, %r6, 0x10000000001;`: ptxas keeps its low 32 bits (1), and so does the simulator"
        ),
        "{out}"
    );
}

#[test]
fn an_argument_its_parameter_cannot_hold_is_an_error_naming_the_key() {
    // `n` is the .u32 add_one_param_2: 2^40 was passed as 0.
    let p = workload("arg", str::to_string, |t| {
        t.replace(
            "args = [\"dst\", \"src\", \"n\"]",
            "args = [\"dst\", \"src\", 1099511627776]",
        )
    });
    run(&p).fails_with(&[
        "launch[0].args[2]",
        "1099511627776 does not fit the .u32 parameter `add_one_param_2`",
        "-2147483648 to 4294967295",
    ]);
}
