//! The half-rate execution pipes of an SM sub-partition, as the timing replay needs them: which
//! PTX instructions become SASS that occupies the FMA pipe's heavy half (IMAD and IMAD.WIDE) or
//! the ALU (integer compares, min/max, logic, shifts, bit fields), and for how many warp
//! instructions. A pure function of the decoded instruction.
//!
//! \[measured\] ubench T on an H100, the H200's SM (validate/measurements/h200/ubench/README.md,
//! T): with 8 warps per sub-partition, IMAD issues every 2.0 cycles, IMNMX, LOP3 and SHF every
//! 2.26 (2 plus the loop's ALU overhead), FFMA and IADD3 every cycle; IMAD interleaved with FFMA
//! or with IMNMX every cycle (two pipes running together); a loop of 8 IMAD.WIDE and 9 other
//! IMADs takes what 4 cycles per IMAD.WIDE and 2 per IMAD give. \[NV\] CUDA-CC, arithmetic
//! instructions: 64 results per clock per SM (16 per sub-partition) for 32-bit integer
//! multiply-add, shifts, compare/min/max and bitwise logic on compute capability 7.x to 9.0.
//! The SASS each PTX instruction becomes is read from the kernels' SASS (conv7_const: a `mad.lo`
//! per tap is an IMAD, the `mul.wide.s32` + `add.s64` of each address an IMAD.WIDE, the
//! clamps VIMNMX).

use crate::ptx::ast::Type;
use crate::ptx::inst::{AluOp, MulMode, Op};

/// Warp instructions one execution issues to each half-rate pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipeUse {
    /// On the FMA pipe's heavy half: an IMAD counts 1, an IMAD.WIDE 2.
    pub heavy: u8,
    /// On the ALU.
    pub alu: u8,
}

/// The half-rate pipe work of `op` (floating-point arithmetic, integer adds and moves issue at
/// full rate and count nothing; a predicate's logic folds into the compare that makes it).
pub fn pipe_use(op: &Op) -> PipeUse {
    let heavy = |n| PipeUse { heavy: n, alu: 0 };
    let alu = PipeUse { heavy: 0, alu: 1 };
    match *op {
        Op::Alu { op, ty, mode, .. } if ty != Type::Pred && !ty.is_float() => {
            use AluOp::*;
            match op {
                Mul | Mad if mode == MulMode::Wide => heavy(2),
                // A 64-bit multiply is three IMADs (lo x lo wide, two cross products).
                Mul | Mad if ty.bits() == 64 => heavy(4),
                Mul | Mad | Mul24 | Mad24 | Sad => heavy(1),
                Min | Max | And | Or | Xor | Not | CNot | Shl | Shr | Popc | Clz | Brev => alu,
                _ => PipeUse::default(),
            }
        }
        Op::Alu {
            op: AluOp::Min | AluOp::Max,
            ty,
            ..
        } if ty.is_float() => alu,
        Op::Setp { .. } | Op::Selp(_) | Op::Slct { .. } | Op::Bits(_) => alu,
        _ => PipeUse::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alu_op(op: AluOp, ty: Type, mode: MulMode) -> Op {
        Op::Alu {
            op,
            ty,
            mode,
            sat: false,
        }
    }

    #[test]
    fn integer_multiplies_take_the_heavy_pipe_and_logic_the_alu() {
        let mad = alu_op(AluOp::Mad, Type::S32, MulMode::Lo);
        assert_eq!(pipe_use(&mad), PipeUse { heavy: 1, alu: 0 });
        let wide = alu_op(AluOp::Mul, Type::S32, MulMode::Wide);
        assert_eq!(pipe_use(&wide), PipeUse { heavy: 2, alu: 0 });
        let min = alu_op(AluOp::Min, Type::S32, MulMode::None);
        assert_eq!(pipe_use(&min), PipeUse { heavy: 0, alu: 1 });
        // FFMA and IADD3 issue at full rate.
        let fma = alu_op(AluOp::Fma, Type::F32, MulMode::None);
        assert_eq!(pipe_use(&fma), PipeUse::default());
        let add = alu_op(AluOp::Add, Type::S32, MulMode::None);
        assert_eq!(pipe_use(&add), PipeUse::default());
        // Predicate logic folds into the ISETP that makes it.
        let and_pred = alu_op(AluOp::And, Type::Pred, MulMode::None);
        assert_eq!(pipe_use(&and_pred), PipeUse::default());
    }
}
