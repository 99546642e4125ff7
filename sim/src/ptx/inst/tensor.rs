//! The asynchronous-copy and tensor-core instructions (PTX ISA §9.7.9.25 "Data Movement and
//! Conversion Instructions: cp.async", §9.7.14.5.15 `ldmatrix`, §9.7.14.5.16 `stmatrix`,
//! §9.7.14.5.14 `mma`), as nvcc and NVRTC emit them for sm_80 to sm_90:
//!
//! ```text
//! cp.async.ca.shared{::cta}.global{.L2::64B|128B|256B} [dst], [src], cp-size{, src-size|ignore-src}
//! cp.async.cg.shared{::cta}.global{.L2::...} [dst], [src], 16{, src-size|ignore-src}
//! cp.async.commit_group;   cp.async.wait_group N;   cp.async.wait_all;
//! ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 r, [p]
//! stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [p], r
//! mma.sync.aligned.m16n8k16.row.col.{f32,f16}.{f16,bf16}.{f16,bf16}.{f32,f16} d, a, b, c
//! mma.sync.aligned.m16n8k8.row.col.{f32,f16}.f16.f16.{f32,f16}        (and .f32.bf16.bf16.f32)
//! mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c
//! mma.sync.aligned.m16n8k32.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32 d, a, b, c
//! mma.sync.aligned.m16n8k16.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32 d, a, b, c
//! wmma.load.{a,b}.sync.aligned.{row,col}.m16n16k16{.global,.shared}.f16 r, [p]{, stride}
//! wmma.load.c.sync.aligned.{row,col}.m16n16k16{.global,.shared}.{f16,f32} r, [p]{, stride}
//! wmma.mma.sync.aligned.{row,col}.{row,col}.m16n16k16.{f16,f32}.{f16,f32} d, a, b, c
//! wmma.store.d.sync.aligned.{row,col}.m16n16k16{.global,.shared}.{f16,f32} [p], r{, stride}
//! ```
//!
//! The `.L2::NB` prefetch sizes and `.L2::cache_hint` are hints and change no result; they are
//! accepted and not modelled (a prefetch moves more L2 sectors than the copy asks for).

use super::decode::{space_word, Mods};
use super::{CacheOp, MbarrierOp, Op};
use crate::ptx::ast::{StateSpace, Type};

/// `cp.async`: a copy of `bytes` from global to shared memory that the thread does not wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpAsync {
    /// `.ca` (through L1) or `.cg` (L2 only, 16 bytes).
    pub cache: CacheOp,
    /// `cp-size`: 4, 8 or 16 bytes (an operand in PTX; filled in by decoding the operands).
    pub bytes: u8,
    /// The fourth operand is `ignore-src`, a predicate (true: the copy writes zeros), not
    /// `src-size`.
    pub ignore_src: bool,
}

/// `ldmatrix`/`stmatrix`: `count` 8x8 matrices of 16-bit elements between shared memory and
/// registers, one register per matrix and thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixOp {
    /// `.x1 .x2 .x4`: 1, 2 or 4 matrices.
    pub count: u8,
    /// `.trans`: the registers hold the transposed matrices.
    pub trans: bool,
}

/// The element type of an `mma` operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaType {
    /// `.f16`.
    F16,
    /// `.bf16`.
    BF16,
    /// `.tf32`: an `.f32` register whose 13 low mantissa bits are ignored.
    TF32,
    /// `.f32`.
    F32,
    /// `.s8`.
    S8,
    /// `.u8`.
    U8,
    /// `.s32`.
    S32,
}

impl MmaType {
    fn from_word(w: &str) -> Option<Self> {
        Some(match w {
            "f16" => Self::F16,
            "bf16" => Self::BF16,
            "tf32" => Self::TF32,
            "f32" => Self::F32,
            "s8" => Self::S8,
            "u8" => Self::U8,
            "s32" => Self::S32,
            _ => return None,
        })
    }

    /// Bits of one element.
    pub fn bits(self) -> u32 {
        match self {
            Self::F16 | Self::BF16 => 16,
            Self::TF32 | Self::F32 | Self::S32 => 32,
            Self::S8 | Self::U8 => 8,
        }
    }
}

/// `mma.sync.aligned.mMnNkK.row.col.dtype.atype.btype.ctype d, a, b, c`: D = A * B + C for one
/// warp, A of M x K (row-major fragments), B of K x N (column-major), C and D of M x N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaOp {
    /// M (16).
    pub m: u8,
    /// N (8).
    pub n: u8,
    /// K (8, 16 or 32).
    pub k: u8,
    /// D's type.
    pub d: MmaType,
    /// A's type.
    pub a: MmaType,
    /// B's type.
    pub b: MmaType,
    /// C's type.
    pub c: MmaType,
    /// `.satfinite` (integer forms): D clamps to the s32 range instead of wrapping.
    pub satfinite: bool,
}

impl MmaOp {
    /// 32-bit registers each thread gives for A, B and C/D: (M·K, K·N, M·N) elements over 32
    /// threads, packed into 32-bit registers.
    pub fn regs(&self) -> (usize, usize, usize, usize) {
        let per = |elems: u32, t: MmaType| (elems * t.bits() / 32 / 32) as usize;
        let (m, n, k) = (u32::from(self.m), u32::from(self.n), u32::from(self.k));
        (
            per(m * n, self.d),
            per(m * k, self.a),
            per(k * n, self.b),
            per(m * n, self.c),
        )
    }
}

/// Which fragment a `wmma.load` fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaFrag {
    /// `.a`: the M x K multiplicand.
    A,
    /// `.b`: the K x N multiplicand.
    B,
    /// `.c`: the accumulator.
    C,
}

/// `wmma` of shape m16n16k16 with `.f16` multiplicands (PTX ISA §9.7.14.4): the forms nvcc and
/// NVRTC emit for `nvcuda::wmma` of `mma.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaOp {
    /// `wmma.load.{a,b,c}.sync.aligned.{row,col}.m16n16k16{.space}.{f16,f32} r, [p]{, stride}`.
    Load {
        /// The fragment.
        frag: WmmaFrag,
        /// `.col`: the matrix is column-major in memory.
        col: bool,
        /// The state space (`Generic` when none).
        space: StateSpace,
        /// `.f16` or `.f32` elements (A and B: `.f16`).
        f32: bool,
    },
    /// `wmma.store.d.sync.aligned.{row,col}.m16n16k16{.space}.{f16,f32} [p], r{, stride}`.
    Store {
        /// `.col`: column-major in memory.
        col: bool,
        /// The state space.
        space: StateSpace,
        /// `.f32` elements (else `.f16`).
        f32: bool,
    },
    /// `wmma.mma.sync.aligned.{row,col}.{row,col}.m16n16k16.dtype.ctype d, a, b, c`.
    Mma {
        /// D is `.f32` (else `.f16`).
        d_f32: bool,
        /// C is `.f32` (else `.f16`).
        c_f32: bool,
    },
}

impl WmmaOp {
    /// Registers of each operand: (D or the loaded or stored fragment, A, B, C); A and B hold
    /// 8 `.f16x2` registers, an f32 accumulator 8 `.f32`, an f16 one 4 `.f16x2`.
    pub fn regs(&self) -> (usize, usize, usize, usize) {
        let acc = |f32: bool| if f32 { 8 } else { 4 };
        match *self {
            WmmaOp::Load {
                frag: WmmaFrag::C,
                f32,
                ..
            }
            | WmmaOp::Store { f32, .. } => (acc(f32), 0, 0, 0),
            WmmaOp::Load { .. } => (8, 0, 0, 0),
            WmmaOp::Mma { d_f32, c_f32 } => (acc(d_f32), 8, 8, acc(c_f32)),
        }
    }
}

fn wmma(m: &mut Mods) -> Result<Op, String> {
    let what = if m.take("load") {
        0
    } else if m.take("store") {
        1
    } else if m.take("mma") {
        2
    } else {
        return Err("`wmma` needs .load, .store or .mma".into());
    };
    if !(m.take("sync") && m.take("aligned")) {
        return Err("`wmma` needs .sync.aligned".into());
    }
    if !m.take("m16n16k16") {
        return Err("`wmma` of shape other than .m16n16k16 is not supported".into());
    }
    let layout = |m: &mut Mods| -> Result<bool, String> {
        if m.take("row") {
            Ok(false)
        } else if m.take("col") {
            Ok(true)
        } else {
            Err("`wmma` needs a layout .row or .col".into())
        }
    };
    let elem = |m: &mut Mods| -> Result<bool, String> {
        if m.take("f32") {
            Ok(true)
        } else if m.take("f16") {
            Ok(false)
        } else {
            Err("`wmma` of elements other than .f16 and .f32 is not supported".into())
        }
    };
    let op = match what {
        0 => {
            let frag = if m.take("a") {
                WmmaFrag::A
            } else if m.take("b") {
                WmmaFrag::B
            } else if m.take("c") {
                WmmaFrag::C
            } else {
                return Err("`wmma.load` needs .a, .b or .c".into());
            };
            let col = layout(m)?;
            let space = m.take_map(space_word).unwrap_or(StateSpace::Generic);
            let f32 = elem(m)?;
            if frag != WmmaFrag::C && f32 {
                return Err("`wmma.load.a`/`.b` of .f32 is not supported (only .f16)".into());
            }
            WmmaOp::Load {
                frag,
                col,
                space,
                f32,
            }
        }
        1 => {
            if !m.take("d") {
                return Err("`wmma.store` needs .d".into());
            }
            let col = layout(m)?;
            let space = m.take_map(space_word).unwrap_or(StateSpace::Generic);
            WmmaOp::Store {
                col,
                space,
                f32: elem(m)?,
            }
        }
        _ => {
            layout(m)?;
            layout(m)?;
            let d_f32 = elem(m)?;
            let c_f32 = elem(m)?;
            WmmaOp::Mma { d_f32, c_f32 }
        }
    };
    Ok(Op::Wmma(op))
}

/// The tensor and asynchronous-copy form of `opcode`, or `None` when it is not one.
pub(super) fn decode_tensor(opcode: &str, m: &mut Mods) -> Option<Result<Op, String>> {
    Some(match opcode {
        "cp" if m.has("async") && m.has("bulk") => cp_async_bulk(m),
        "cp" if m.has("async") => cp_async(m),
        "mbarrier" => mbarrier(m),
        "ldmatrix" | "stmatrix" => matrix(opcode, m),
        "mma" => mma(m),
        "wmma" => wmma(m),
        _ => return None,
    })
}

/// `cp.async.bulk` in its 1-D forms (the tensor forms, `.tensor`, are not supported yet).
fn cp_async_bulk(m: &mut Mods) -> Result<Op, String> {
    m.take("async");
    m.take("bulk");
    if m.take("commit_group") {
        return Ok(Op::CpAsyncBulkGroup);
    }
    if m.take("wait_group") {
        m.take("read");
        return Ok(Op::CpAsyncBulkGroup);
    }
    if m.has("tensor") || m.has("prefetch") {
        return Err("unsupported form of `cp.async.bulk`: `.tensor` (TMA tiles through a tensor map) and `.prefetch` are not modelled yet; the 1-D global<->shared copies are".into());
    }
    let shared = |m: &mut Mods| m.take("shared::cluster") || m.take("shared::cta");
    let to_shared = if m.take("mbarrier::complete_tx::bytes") {
        if !shared(m) || !m.take("global") {
            return Err("`cp.async.bulk...mbarrier::complete_tx::bytes` copies .shared::cluster from .global".into());
        }
        true
    } else if m.take("bulk_group") {
        if !m.take("global") || !shared(m) {
            return Err("`cp.async.bulk...bulk_group` copies .global from .shared::cta".into());
        }
        false
    } else {
        return Err("`cp.async.bulk` needs .mbarrier::complete_tx::bytes or .bulk_group".into());
    };
    m.take("L2::cache_hint");
    if m.has("multicast::cluster") {
        return Err(
            "`cp.async.bulk` .multicast::cluster is not supported (clusters of one CTA only)"
                .into(),
        );
    }
    Ok(Op::CpAsyncBulk { to_shared })
}

/// `mbarrier.*`, on shared (`.shared`, `.shared::cta`) barrier objects of `.b64`.
fn mbarrier(m: &mut Mods) -> Result<Op, String> {
    let op = if m.take("init") {
        MbarrierOp::Init
    } else if m.take("arrive") {
        if m.has("noComplete") {
            return Err("`mbarrier.arrive.noComplete` is not supported".into());
        }
        MbarrierOp::Arrive {
            expect_tx: m.take("expect_tx"),
        }
    } else if m.take("expect_tx") {
        MbarrierOp::ExpectTx
    } else if m.take("complete_tx") {
        MbarrierOp::CompleteTx
    } else if m.take("test_wait") || m.take("try_wait") {
        MbarrierOp::Wait {
            parity: m.take("parity"),
        }
    } else if m.take("inval") {
        MbarrierOp::Inval
    } else {
        return Err("unsupported `mbarrier` operation (init, arrive, arrive.expect_tx, expect_tx, complete_tx, test_wait, try_wait and inval are)".into());
    };
    m.ordering();
    // `.shared::cluster`: a cluster of one CTA, the only kind launched here, is the CTA.
    if !(m.take("shared") || m.take("shared::cta") || m.take("shared::cluster")) {
        return Err("`mbarrier` on generic addresses is not supported: use .shared::cta".into());
    }
    if !m.take("b64") {
        return Err("`mbarrier` objects are .b64".into());
    }
    Ok(Op::Mbarrier(op))
}

fn cp_async(m: &mut Mods) -> Result<Op, String> {
    m.take("async");
    if m.take("commit_group") {
        return Ok(Op::CpAsyncCommit);
    }
    if m.take("wait_group") {
        return Ok(Op::CpAsyncWait { all: false });
    }
    if m.take("wait_all") {
        return Ok(Op::CpAsyncWait { all: true });
    }
    if m.has("bulk") || m.has("mbarrier") {
        return Err("unsupported instruction `cp.async.bulk` / `cp.async.mbarrier` (TMA and mbarrier are not modelled yet)".into());
    }
    let cache = if m.take("ca") {
        CacheOp::Ca
    } else if m.take("cg") {
        CacheOp::Cg
    } else {
        return Err("`cp.async` needs .ca or .cg".into());
    };
    // The destination's space comes first, then the source's.
    let dst = m.take_map(space_word);
    let src = m.take_map(space_word);
    if dst != Some(StateSpace::Shared) || src != Some(StateSpace::Global) {
        return Err("`cp.async` copies .shared.global (shared destination, global source)".into());
    }
    for hint in ["L2::64B", "L2::128B", "L2::256B", "L2::cache_hint"] {
        m.take(hint);
    }
    Ok(Op::CpAsync(CpAsync {
        cache,
        bytes: 0,
        ignore_src: false,
    }))
}

fn matrix(opcode: &str, m: &mut Mods) -> Result<Op, String> {
    if !(m.take("sync") && m.take("aligned")) {
        return Err(format!("`{opcode}` needs .sync.aligned"));
    }
    if !m.take("m8n8") {
        return Err(format!(
            "`{opcode}` of shape other than .m8n8 is not supported"
        ));
    }
    let count = m
        .take_map(|w| match w {
            "x1" => Some(1),
            "x2" => Some(2),
            "x4" => Some(4),
            _ => None,
        })
        .ok_or_else(|| format!("`{opcode}` needs .x1, .x2 or .x4"))?;
    let trans = m.take("trans");
    // Without `.shared` the address is generic (PTX ISA); nvcc and NVRTC always write `.shared`.
    if m.take_map(space_word) != Some(StateSpace::Shared) {
        return Err(format!(
            "`{opcode}` is supported on .shared addresses only (not generic or other spaces)"
        ));
    }
    if !m.take("b16") {
        return Err(format!("`{opcode}` needs .b16"));
    }
    let op = MatrixOp { count, trans };
    Ok(if opcode == "ldmatrix" {
        Op::Ldmatrix(op)
    } else {
        Op::Stmatrix(op)
    })
}

fn mma(m: &mut Mods) -> Result<Op, String> {
    if !(m.take("sync") && m.take("aligned")) {
        return Err("`mma` needs .sync.aligned".into());
    }
    let (mm, n, k) = m
        .take_map(|w| match w {
            "m16n8k8" => Some((16, 8, 8)),
            "m16n8k16" => Some((16, 8, 16)),
            "m16n8k32" => Some((16, 8, 32)),
            _ => None,
        })
        .ok_or("`mma` of this shape is not supported (m16n8k8, m16n8k16 and m16n8k32 are)")?;
    if !(m.take("row") && m.take("col")) {
        return Err("`mma` needs .row.col".into());
    }
    let satfinite = m.take("satfinite");
    let mut tys = [MmaType::F32; 4];
    for t in &mut tys {
        *t = m
            .take_map(MmaType::from_word)
            .ok_or("`mma` needs four types: .dtype.atype.btype.ctype")?;
    }
    let [d, a, b, c] = tys;
    use MmaType::*;
    let ok = match (mm, n, k) {
        (16, 8, 16) => {
            (matches!((a, b), (F16, F16) | (BF16, BF16))
                && matches!((d, c), (F32, F32) | (F16, F16))
                && !(a == BF16 && d == F16))
                || (matches!(a, S8 | U8) && matches!(b, S8 | U8) && (d, c) == (S32, S32))
        }
        (16, 8, 8) => {
            (matches!((a, b), (F16, F16)) && matches!((d, c), (F32, F32) | (F16, F16)))
                || (matches!((a, b), (BF16, BF16) | (TF32, TF32)) && (d, c) == (F32, F32))
        }
        _ => matches!(a, S8 | U8) && matches!(b, S8 | U8) && (d, c) == (S32, S32),
    };
    if !ok {
        return Err(format!(
            "unsupported `mma` form .m{mm}n{n}k{k}.{}.{}.{}.{}",
            name(d),
            name(a),
            name(b),
            name(c)
        ));
    }
    if satfinite && d != S32 {
        return Err("`mma` .satfinite applies to the integer forms".into());
    }
    Ok(Op::Mma(MmaOp {
        m: mm,
        n,
        k,
        d,
        a,
        b,
        c,
        satfinite,
    }))
}

fn name(t: MmaType) -> &'static str {
    match t {
        MmaType::F16 => "f16",
        MmaType::BF16 => "bf16",
        MmaType::TF32 => "tf32",
        MmaType::F32 => "f32",
        MmaType::S8 => "s8",
        MmaType::U8 => "u8",
        MmaType::S32 => "s32",
    }
}

/// The 32-bit register type each `mma` operand register has (`.f32` registers for f32 and tf32
/// values, `.b32` for packed ones).
pub fn mma_reg_type(t: MmaType) -> Type {
    match t {
        MmaType::F32 | MmaType::TF32 => Type::F32,
        MmaType::S32 => Type::S32,
        _ => Type::B32,
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode;
    use super::*;

    #[test]
    fn mbarrier_and_bulk_copy_forms_decode() {
        use crate::ptx::inst::MbarrierOp as M;
        let mb = |m: &[&str]| decode("mbarrier", m);
        assert_eq!(
            mb(&["init", "shared::cta", "b64"]),
            Ok(Op::Mbarrier(M::Init))
        );
        assert_eq!(
            mb(&[
                "arrive",
                "expect_tx",
                "release",
                "cta",
                "shared::cta",
                "b64"
            ]),
            Ok(Op::Mbarrier(M::Arrive { expect_tx: true }))
        );
        assert_eq!(
            mb(&["try_wait", "parity", "shared::cta", "b64"]),
            Ok(Op::Mbarrier(M::Wait { parity: true }))
        );
        assert_eq!(
            mb(&["test_wait", "shared", "b64"]),
            Ok(Op::Mbarrier(M::Wait { parity: false }))
        );
        assert!(mb(&["arrive", "b64"])
            .unwrap_err()
            .contains("generic addresses"));
        assert!(mb(&["arrive", "noComplete", "shared", "b64"]).is_err());
        assert_eq!(
            decode(
                "cp",
                &[
                    "async",
                    "bulk",
                    "shared::cluster",
                    "global",
                    "mbarrier::complete_tx::bytes"
                ]
            ),
            Ok(Op::CpAsyncBulk { to_shared: true })
        );
        assert_eq!(
            decode(
                "cp",
                &["async", "bulk", "global", "shared::cta", "bulk_group"]
            ),
            Ok(Op::CpAsyncBulk { to_shared: false })
        );
        assert_eq!(
            decode("cp", &["async", "bulk", "wait_group", "read"]),
            Ok(Op::CpAsyncBulkGroup)
        );
        let e = decode(
            "cp",
            &[
                "async",
                "bulk",
                "tensor",
                "2d",
                "shared::cluster",
                "global",
                "tile",
                "mbarrier::complete_tx::bytes",
            ],
        )
        .unwrap_err();
        assert!(e.contains("`.tensor`"), "{e}");
        assert_eq!(
            decode("fence", &["mbarrier_init", "release", "cluster"]),
            Ok(Op::Nop)
        );
    }

    #[test]
    fn the_forms_nvcc_emits_decode() {
        assert_eq!(
            decode("cp", &["async", "ca", "shared", "global"]),
            Ok(Op::CpAsync(CpAsync {
                cache: CacheOp::Ca,
                bytes: 0,
                ignore_src: false
            }))
        );
        assert!(decode("cp", &["async", "cg", "shared", "global", "L2::128B"]).is_ok());
        assert!(decode("cp", &["async", "cg", "shared::cta", "global"]).is_ok());
        assert_eq!(
            decode("cp", &["async", "wait_group"]),
            Ok(Op::CpAsyncWait { all: false })
        );
        assert_eq!(
            decode("cp", &["async", "commit_group"]),
            Ok(Op::CpAsyncCommit)
        );
        assert!(decode("cp", &["async", "global", "shared", "ca"]).is_err());
        let e = decode("ldmatrix", &["sync", "aligned", "m8n8", "x1", "b16"]).unwrap_err();
        assert!(e.contains(".shared addresses only"), "{e}");
        assert_eq!(
            decode(
                "ldmatrix",
                &["sync", "aligned", "m8n8", "x4", "trans", "shared", "b16"]
            ),
            Ok(Op::Ldmatrix(MatrixOp {
                count: 4,
                trans: true
            }))
        );
        let m = decode(
            "mma",
            &[
                "sync", "aligned", "m16n8k16", "row", "col", "f32", "bf16", "bf16", "f32",
            ],
        );
        let Ok(Op::Mma(m)) = m else { panic!("{m:?}") };
        assert_eq!(
            (m.d, m.a, m.b, m.c),
            (MmaType::F32, MmaType::BF16, MmaType::BF16, MmaType::F32)
        );
        // Registers per thread: the PTX ISA's fragments (m16n8k16 f16: 4, 2, 4).
        assert_eq!(m.regs(), (4, 4, 2, 4));
        let Ok(Op::Mma(i8)) = decode(
            "mma",
            &[
                "sync",
                "aligned",
                "m16n8k32",
                "row",
                "col",
                "satfinite",
                "s32",
                "s8",
                "u8",
                "s32",
            ],
        ) else {
            panic!()
        };
        assert_eq!(i8.regs(), (4, 4, 2, 4));
        let Ok(Op::Mma(tf)) = decode(
            "mma",
            &[
                "sync", "aligned", "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32",
            ],
        ) else {
            panic!()
        };
        assert_eq!(tf.regs(), (4, 4, 2, 4));
        let Ok(Op::Mma(h)) = decode(
            "mma",
            &[
                "sync", "aligned", "m16n8k8", "row", "col", "f16", "f16", "f16", "f16",
            ],
        ) else {
            panic!()
        };
        assert_eq!(h.regs(), (2, 2, 1, 2));
        let e = decode(
            "mma",
            &[
                "sync", "aligned", "m8n8k4", "row", "col", "f32", "f16", "f16", "f32",
            ],
        )
        .unwrap_err();
        assert!(e.contains("shape is not supported"), "{e}");
    }
}
