//! The tensor pipe: what `mma.sync` and `wmma.mma` cost, from the config's `[[tensor.form]]`
//! table ([`crate::config::TensorForm`]).
//!
//! Each SM sub-partition (SMSP, one per warp scheduler) has one tensor pipe. A warp's `mma`
//! occupies its sub-partition's pipe for the form's `issue_cycles`, so independent `mma`s of one
//! or several warps of the sub-partition start that far apart, and its D is ready the form's
//! `latency_cycles` after its issue, so a dependent `mma` on the same accumulator waits that long
//! (the replay, [`super::replay`], keeps each pipe's busy-until cycle). The SASS (ptxas 12.9,
//! sm_90, `tests/fixtures/tensor/pipe/pipe.cu`): every `mma.sync` form is one instruction
//! (m16n8k16 f16 `HMMA.16816.F32`, f16 accumulator `HMMA.16816.F16`, bf16
//! `HMMA.16816.F32.BF16`, m16n8k8 f16 `HMMA.1688.F32`, tf32 `HMMA.1688.F32.TF32`, m16n8k32 s8
//! `IMMA.16832.S8.S8`, m16n8k16 s8 `IMMA.16816.S8.S8`), and none sets a scoreboard (write
//! barrier 7 in its control bits): its result is a fixed-latency one, and a wait for it is ncu's
//! `wait`. A `wmma.mma` m16n16k16 is two `HMMA.16816` on independent halves of the accumulator
//! (`tests/fixtures/tensor/h200/sass/wmma.sass`): without an `m16n16k16` entry of its own it
//! takes its config's `m16n8k16` form twice over on the pipe, with the first half's latency (a
//! dependent `wmma.mma`'s first HMMA needs only that half; the second half's readers see it
//! `issue_cycles` early).

use crate::config::{GpuConfig, TensorForm};
use crate::ptx::decode::Program;
use crate::ptx::inst::{MmaType, Op, WmmaOp};

/// What one tensor instruction costs on the tensor pipe, in SM cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PipeCost {
    /// Cycles it occupies its sub-partition's pipe.
    pub issue: u32,
    /// Cycles from its issue until D is ready.
    pub latency: u32,
}

/// The config's name of a tensor instruction's form: (shape, A/B type, C/D type), as
/// `[[tensor.form]]` writes them; `None` for any other instruction.
pub fn form_of(op: &Op) -> Option<(&'static str, &'static str, &'static str)> {
    let ty = |t: MmaType| match t {
        MmaType::F16 => "f16",
        MmaType::BF16 => "bf16",
        MmaType::TF32 => "tf32",
        MmaType::F32 => "f32",
        // The 8-bit integer forms share one entry: IMMA has one rate for either signedness.
        MmaType::S8 | MmaType::U8 => "s8",
        MmaType::S32 => "s32",
    };
    match op {
        Op::Mma(m) => {
            let shape = match m.k {
                8 => "m16n8k8",
                16 => "m16n8k16",
                _ => "m16n8k32",
            };
            Some((shape, ty(m.a), ty(m.d)))
        }
        Op::Wmma(WmmaOp::Mma { d_f32, .. }) => {
            Some(("m16n16k16", "f16", if *d_f32 { "f32" } else { "f16" }))
        }
        _ => None,
    }
}

/// The entry of `forms` for (shape, A/B type, C/D type).
fn find<'f>(
    forms: &'f [TensorForm],
    (shape, ab, cd): (&str, &str, &str),
) -> Option<&'f TensorForm> {
    forms
        .iter()
        .find(|f| f.shape == shape && f.ab_type == ab && f.cd_type == cd)
}

/// The pipe cost of tensor instruction `op` under `forms`: `None` for an instruction that is
/// not one, `Some(Err(form))` naming the form `forms` lacks.
pub fn cost(
    forms: &[TensorForm],
    op: &Op,
) -> Option<Result<PipeCost, (&'static str, &'static str, &'static str)>> {
    let form = form_of(op)?;
    if let Some(f) = find(forms, form) {
        return Some(Ok(PipeCost {
            issue: f.issue_cycles,
            latency: f.latency_cycles,
        }));
    }
    // A wmma.mma m16n16k16 is two HMMA.16816 (sm_80 and later).
    if form.0 == "m16n16k16" {
        if let Some(f) = find(forms, ("m16n8k16", form.1, form.2)) {
            return Some(Ok(PipeCost {
                issue: 2 * f.issue_cycles,
                latency: f.latency_cycles,
            }));
        }
    }
    Some(Err(form))
}

/// Refuses `program` (from PTX file `ptx_name`) when one of its tensor instructions has a form
/// that `cfg` does not list (a GPU without it: the V100 has no `mma.m16n8k16`, the PTX ISA's
/// forms of which need sm_80; GPUs before compute capability 7.0 have no tensor cores): the
/// message names the instruction, its line, the form and the config.
pub fn check(cfg: &GpuConfig, program: &Program, ptx_name: &str) -> Result<(), String> {
    for (pc, inst) in program.insts.iter().enumerate() {
        let Some(Err((shape, ab, cd))) = cost(&cfg.tensor.form, &inst.op) else {
            continue;
        };
        let line = program.lines.get(pc).copied().unwrap_or(0);
        let text = program.texts.get(pc).map_or("", String::as_str);
        // Without its trailing comment (`// end inline asm`).
        let text = text.split("//").next().unwrap_or("").trim();
        let wmma = if shape == "m16n16k16" {
            " (nor shape = \"m16n8k16\" with these types, of which a wmma.mma is two)".to_string()
        } else {
            String::new()
        };
        return Err(format!(
            "`{text}` ({ptx_name}:{line}) runs on the tensor pipe, and {} ({}, compute capability \
             {}) has no [[tensor.form]] with shape = \"{shape}\", ab_type = \"{ab}\", cd_type = \
             \"{cd}\"{wmma}: the GPU lacks this form, or the config does not give its timing (add \
             the entry with its latency_cycles and issue_cycles)",
            cfg.path, cfg.gpu.name, cfg.gpu.compute_capability
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::inst::MmaOp;

    fn entry(shape: &str, ab: &str, cd: &str, latency: u32, issue: u32) -> TensorForm {
        TensorForm {
            shape: shape.into(),
            ab_type: ab.into(),
            cd_type: cd.into(),
            latency_cycles: latency,
            issue_cycles: issue,
        }
    }

    fn mma(k: u8, a: MmaType, d: MmaType) -> Op {
        Op::Mma(MmaOp {
            m: 16,
            n: 8,
            k,
            d,
            a,
            b: a,
            c: d,
            satfinite: false,
        })
    }

    #[test]
    fn forms_are_found_by_shape_and_types() {
        let forms = [
            entry("m16n8k16", "f16", "f32", 33, 16),
            entry("m16n8k32", "s8", "s32", 30, 9),
        ];
        let f16 = mma(16, MmaType::F16, MmaType::F32);
        assert_eq!(
            cost(&forms, &f16),
            Some(Ok(PipeCost {
                issue: 16,
                latency: 33
            }))
        );
        // u8 operands take the s8 entry.
        let u8 = mma(32, MmaType::U8, MmaType::S32);
        assert_eq!(cost(&forms, &u8).unwrap().unwrap().issue, 9);
        // An f16 accumulator is another form.
        let h = mma(16, MmaType::F16, MmaType::F16);
        assert_eq!(cost(&forms, &h), Some(Err(("m16n8k16", "f16", "f16"))));
        assert_eq!(cost(&forms, &Op::Bra), None);
    }

    #[test]
    fn a_wmma_mma_is_two_m16n8k16_unless_listed() {
        let w = Op::Wmma(WmmaOp::Mma {
            d_f32: true,
            c_f32: true,
        });
        let mut forms = vec![entry("m16n8k16", "f16", "f32", 33, 16)];
        assert_eq!(
            cost(&forms, &w),
            Some(Ok(PipeCost {
                issue: 32,
                latency: 33
            }))
        );
        forms.push(entry("m16n16k16", "f16", "f32", 60, 40));
        assert_eq!(
            cost(&forms, &w),
            Some(Ok(PipeCost {
                issue: 40,
                latency: 60
            }))
        );
        assert_eq!(cost(&[], &w), Some(Err(("m16n16k16", "f16", "f32"))));
    }
}
