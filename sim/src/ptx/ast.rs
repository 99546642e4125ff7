//! The PTX module IR: what the parser produces and the executor decodes.
//!
//! Names follow the PTX ISA manual: state spaces (`.param .global .const .shared .local`),
//! fundamental types (`.b32 .u64 .f32 .pred`), guard predicates, operands. Instructions are typed
//! by [`crate::ptx::inst::Op`], their modifiers already checked, so the executor never sees text.

use crate::ptx::inst::Op;
use std::ops::Range;

/// A parsed PTX module.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// `.version MAJOR.MINOR`.
    pub version: (u32, u32),
    /// `.target` (e.g. `sm_80`).
    pub target: String,
    /// 1-based line of the `.target` directive (0 when there is none).
    pub target_line: u32,
    /// `.address_size` in bits (64 or 32).
    pub address_size: u32,
    /// Module-scope variables (`.const`, `.global`, `.shared`).
    pub globals: Vec<Variable>,
    /// Kernels (`.entry`) and device functions (`.func`).
    pub functions: Vec<Function>,
    /// The `.file` table of the line info: (file index, file name as written, e.g. NVRTC's
    /// `"/matmul.cu"`), in the order of the directives. [`Instruction::loc`] refers to it.
    pub files: Vec<(u32, String)>,
}

impl Module {
    /// The name the `.file` directive gives file index `index`, if any (the last one for an
    /// index given twice).
    pub fn file_name(&self, index: u32) -> Option<&str> {
        self.files
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, n)| n.as_str())
    }

    /// The `.entry` called `name`.
    pub fn entry(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.is_entry && f.name == name)
    }

    /// The architecture the `.target` names (`sm_90a`: 9.0, arch-specific), `None` for a name
    /// that is not `sm_NN` or `compute_NN` with an optional `a` or `f`.
    pub fn arch(&self) -> Option<Arch> {
        let t = &self.target;
        let n = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))?;
        let (n, variant) = match (n.strip_suffix('a'), n.strip_suffix('f')) {
            (Some(n), _) => (n, ArchVariant::Specific),
            (_, Some(n)) => (n, ArchVariant::Family),
            _ => (n, ArchVariant::Portable),
        };
        if n.len() < 2 || n.len() > 4 || !n.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let n: u32 = n.parse().ok()?;
        Some(Arch {
            cc: (n / 10, n % 10),
            variant,
        })
    }
}

/// The architecture of a `.target`: a compute capability and how far the PTX runs beyond it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// `(10, 0)` for `sm_100`.
    pub cc: (u32, u32),
    /// Plain, `a` or `f`.
    pub variant: ArchVariant,
}

/// The suffix of a `.target` (PTX ISA, "Target ISA notes"; CUDA C++ Programming Guide,
/// "Feature Availability").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchVariant {
    /// `sm_90`: runs on this compute capability and every later one (the driver JIT-compiles it).
    Portable,
    /// `sm_90a`: arch-specific features; runs on exactly this compute capability.
    Specific,
    /// `sm_100f`: family-specific features; runs on this compute capability and the later minor
    /// versions of its major one (`sm_100f` on 10.0 and 10.3, not on 12.0).
    Family,
}

impl Arch {
    /// Whether the CUDA driver loads PTX of this target on a GPU of compute capability `cc`
    /// (ptxas 12.9 agrees: `-arch=sm_90` refuses `sm_90a` and `sm_100a`, `-arch=sm_100` refuses
    /// `sm_103f`, `-arch=sm_103` takes `sm_100f`).
    pub fn runs_on(&self, cc: (u32, u32)) -> bool {
        match self.variant {
            ArchVariant::Portable => self.cc <= cc,
            ArchVariant::Specific => self.cc == cc,
            ArchVariant::Family => self.cc.0 == cc.0 && self.cc.1 <= cc.1,
        }
    }
}

/// A PTX state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StateSpace {
    /// `.reg`
    Reg,
    /// `.param`
    Param,
    /// `.global`
    Global,
    /// `.const`
    Const,
    /// `.shared`
    Shared,
    /// `.local`
    Local,
    /// No space given: a generic address.
    Generic,
}

impl StateSpace {
    /// The space named by a dot-word (`global` for `.global`).
    pub fn from_word(w: &str) -> Option<Self> {
        Some(match w {
            "reg" => Self::Reg,
            "param" => Self::Param,
            "global" => Self::Global,
            "const" => Self::Const,
            "shared" => Self::Shared,
            "local" => Self::Local,
            _ => return None,
        })
    }

    /// The PTX spelling without the dot.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reg => "reg",
            Self::Param => "param",
            Self::Global => "global",
            Self::Const => "const",
            Self::Shared => "shared",
            Self::Local => "local",
            Self::Generic => "generic",
        }
    }
}

/// A PTX fundamental type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F32,
    F64,
    Pred,
    /// `.bf16`: bfloat16 (8 exponent bits, 7 mantissa bits; the upper half of an f32).
    BF16,
    /// `.f16x2`: two `.f16` in 32 bits, element 0 in the low half.
    F16x2,
    /// `.bf16x2`: two `.bf16` in 32 bits, element 0 in the low half.
    BF16x2,
}

impl Type {
    /// The type named by a dot-word (`u32` for `.u32`).
    pub fn from_word(w: &str) -> Option<Self> {
        use Type::*;
        Some(match w {
            "b8" => B8,
            "b16" => B16,
            "b32" => B32,
            "b64" => B64,
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "u64" => U64,
            "s8" => S8,
            "s16" => S16,
            "s32" => S32,
            "s64" => S64,
            "f16" => F16,
            "bf16" => BF16,
            "f16x2" => F16x2,
            "bf16x2" => BF16x2,
            "f32" => F32,
            "f64" => F64,
            "pred" => Pred,
            _ => return None,
        })
    }

    /// Width in bits (a predicate counts as 1).
    pub fn bits(self) -> u32 {
        use Type::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 | BF16 => 16,
            B32 | U32 | S32 | F32 | F16x2 | BF16x2 => 32,
            B64 | U64 | S64 | F64 => 64,
        }
    }

    /// Width in bytes (at least 1).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }

    /// Floating-point type (the half-precision ones and their pairs included).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Type::F16 | Type::F32 | Type::F64 | Type::BF16 | Type::F16x2 | Type::BF16x2
        )
    }

    /// A half-precision type or pair: `.f16 .bf16 .f16x2 .bf16x2` (PTX ISA §9.7.4).
    pub fn is_half(self) -> bool {
        matches!(self, Type::F16 | Type::BF16 | Type::F16x2 | Type::BF16x2)
    }

    /// Bit-size type (`.b8` to `.b64`).
    pub fn is_bits(self) -> bool {
        matches!(self, Type::B8 | Type::B16 | Type::B32 | Type::B64)
    }

    /// The integers a value of this width holds: from the signed minimum to the unsigned maximum
    /// (a negative one as two's complement), `[-2^31, 2^32 - 1]` for 32 bits; every `i64` for 64.
    pub fn int_range(self) -> (i128, i128) {
        let bits = self.bits().clamp(1, 64);
        (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
    }

    /// `v` is in [`Type::int_range`].
    pub fn holds_int(self, v: i64) -> bool {
        let (lo, hi) = self.int_range();
        (lo..=hi).contains(&i128::from(v))
    }

    /// The type of twice the width and the same kind (`.u32` → `.u64`), for `mul.wide`; a
    /// 64-bit type stays itself.
    pub fn widened(self) -> Self {
        use Type::*;
        match self {
            B8 => B16,
            B16 => B32,
            B32 => B64,
            U8 => U16,
            U16 => U32,
            U32 => U64,
            S8 => S16,
            S16 => S32,
            S32 => S64,
            F16 => F32,
            F32 => F64,
            t => t,
        }
    }

    /// The PTX spelling without the dot.
    pub fn name(self) -> &'static str {
        use Type::*;
        match self {
            B8 => "b8",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            BF16 => "bf16",
            F16x2 => "f16x2",
            BF16x2 => "bf16x2",
            F32 => "f32",
            F64 => "f64",
            Pred => "pred",
        }
    }
}

/// A variable in a memory state space (`.const .align 4 .b8 const_values[65536];`).
#[derive(Debug, Clone)]
pub struct Variable {
    /// State space.
    pub space: StateSpace,
    /// Name.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Alignment in bytes (the `.align` value, else the element size).
    pub align: u32,
    /// Number of elements (1 for a scalar; 0 for an unsized `extern` array).
    pub count: u64,
    /// Initial value bytes (little-endian), empty when uninitialised.
    pub init: Vec<u8>,
    /// Declared `.extern` (dynamic shared memory).
    pub is_extern: bool,
    /// Byte range of the declaration in the source.
    pub span: Range<usize>,
}

impl Variable {
    /// Size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.count * u64::from(self.ty.bytes())
    }
}

/// A kernel parameter (`.param .u64 name`).
#[derive(Debug, Clone)]
pub struct Param {
    /// Name.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// Alignment in bytes.
    pub align: u32,
    /// Number of elements (1 for a scalar, N for `.b8 name[N]` structs).
    pub count: u64,
}

impl Param {
    /// Size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.count * u64::from(self.ty.bytes())
    }
}

/// A register declaration: `.reg .b32 %r<10>;` declares `%r0`..`%r9`; `.reg .f32 %f;` one.
#[derive(Debug, Clone)]
pub struct RegDecl {
    /// Name, or the prefix of a parameterized declaration.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// `Some(n)` for `%name<n>`.
    pub count: Option<u32>,
}

/// A kernel (`.entry`) or device function (`.func`).
#[derive(Debug, Clone)]
pub struct Function {
    /// Name as in the PTX (possibly mangled).
    pub name: String,
    /// `.entry` (a kernel) rather than `.func`.
    pub is_entry: bool,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Return parameters of a `.func` (`.func (.param .b32 retval) name(...)`), empty for kernels.
    pub rets: Vec<Param>,
    /// Register declarations.
    pub regs: Vec<RegDecl>,
    /// Function-scope `.local` and `.shared` variables.
    pub locals: Vec<Variable>,
    /// Labels and instructions in order.
    pub body: Vec<Statement>,
    /// Byte range of the header in the source.
    pub span: Range<usize>,
    /// The performance-tuning directives of the header (`.maxntid`, `.reqntid`, ...).
    pub tuning: Tuning,
}

/// The performance-tuning directives of a function header (PTX ISA, "Performance-Tuning
/// Directives"), as ptxas reads them: each value a positive 32-bit integer ("Positive non-zero
/// value expected"), a directive given twice keeps its last value, and `.maxntid` with `.reqntid`
/// on one kernel is an error ("Conflicting directives").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuning {
    /// `.maxntid X[, Y[, Z]]`: the most threads a block of a launch may have (the product).
    pub maxntid: Option<ThreadBound>,
    /// `.reqntid X[, Y[, Z]]`: the block every launch must have, dimension by dimension.
    pub reqntid: Option<ThreadBound>,
    /// `.minnctapersm N`: the blocks per SM ptxas budgets registers for (no effect on a launch).
    pub minnctapersm: Option<u32>,
    /// `.maxnreg N`: the most registers per thread ptxas may allocate.
    pub maxnreg: Option<u32>,
}

/// The block dimensions of a `.maxntid` or `.reqntid` (missing ones are 1) and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadBound {
    /// `[x, y, z]`.
    pub dims: [u32; 3],
    /// 1-based PTX line of the directive.
    pub line: u32,
}

impl ThreadBound {
    /// Threads of a block of these dimensions.
    pub fn threads(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }
}

impl std::fmt::Display for ThreadBound {
    /// The dimensions as PTX writes them: `256, 1, 1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.dims;
        write!(f, "{x}, {y}, {z}")
    }
}

/// A statement of a function body.
#[derive(Debug, Clone)]
pub enum Statement {
    /// `name:`
    Label(String),
    /// An instruction.
    Inst(Instruction),
}

/// A guard predicate: `@%p1` or `@!%p1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The predicate register.
    pub reg: String,
    /// `@!`: execute where the predicate is false.
    pub negated: bool,
}

/// A special register (`%tid.x` and friends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
    Clock,
    Clock64,
    GlobalTimer,
}

impl Special {
    /// Parses `%tid` + optional component (`x`, `y`, `z`).
    pub fn from_parts(name: &str, comp: Option<&str>) -> Option<Self> {
        let c = match comp {
            Some("x") => Some(0),
            Some("y") => Some(1),
            Some("z") => Some(2),
            Some(_) => return None,
            None => None,
        };
        use Special::*;
        Some(match (name, c) {
            ("%tid", Some(c)) => Tid(c),
            ("%ntid", Some(c)) => Ntid(c),
            ("%ctaid", Some(c)) => Ctaid(c),
            ("%nctaid", Some(c)) => Nctaid(c),
            ("%laneid", None) => LaneId,
            ("%warpid", None) => WarpId,
            ("%nwarpid", None) => NWarpId,
            ("%smid", None) => SmId,
            ("%nsmid", None) => NSmId,
            ("%lanemask_eq", None) => LaneMaskEq,
            ("%lanemask_lt", None) => LaneMaskLt,
            ("%lanemask_le", None) => LaneMaskLe,
            ("%lanemask_gt", None) => LaneMaskGt,
            ("%lanemask_ge", None) => LaneMaskGe,
            ("%clock", None) => Clock,
            ("%clock64", None) => Clock64,
            ("%globaltimer", None) => GlobalTimer,
            _ => return None,
        })
    }

    /// Whether `name` (with `%`) starts a special register.
    pub fn is_special_name(name: &str) -> bool {
        matches!(
            name,
            "%tid"
                | "%ntid"
                | "%ctaid"
                | "%nctaid"
                | "%laneid"
                | "%warpid"
                | "%nwarpid"
                | "%smid"
                | "%nsmid"
                | "%lanemask_eq"
                | "%lanemask_lt"
                | "%lanemask_le"
                | "%lanemask_gt"
                | "%lanemask_ge"
                | "%clock"
                | "%clock64"
                | "%globaltimer"
        )
    }
}

/// An instruction operand as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register (`%r1`).
    Reg(String),
    /// A negated predicate register (`!%p1`, in `vote` and `setp`'s third operand).
    NotPred(String),
    /// A special register (`%tid.x`).
    Special(Special),
    /// An integer immediate (two's complement bits).
    Int(i64),
    /// A float immediate, as f64 (`0f3F800000` is widened exactly).
    Float(f64),
    /// A name: a variable, parameter, or label.
    Symbol(String),
    /// A memory operand `[base+offset]`.
    Address {
        /// Register or symbol; `None` for an absolute `[imm]`.
        base: Option<Box<Operand>>,
        /// Byte offset.
        offset: i64,
    },
    /// A vector `{%r1, %r2}`, or two destination predicates `%p|%q`.
    Vector(Vec<Operand>),
    /// A texture or surface operand `[%rd1, {%r1, %r2}]`: the object's handle (a register) and
    /// the coordinates (PTX ISA §9.7.10, §9.7.11).
    Texture {
        /// The handle: a `.u64` register (texture and surface objects).
        handle: Box<Operand>,
        /// The coordinate vector's elements.
        coords: Vec<Operand>,
    },
}

/// An instruction with its guard, typed operation and operands.
#[derive(Debug, Clone)]
pub struct Instruction {
    /// `@%p` / `@!%p`.
    pub guard: Option<Guard>,
    /// The operation with its checked modifiers.
    pub op: Op,
    /// Operands, destination first as in PTX.
    pub args: Vec<Operand>,
    /// Byte range of the instruction in the source.
    pub span: Range<usize>,
    /// 1-based PTX line.
    pub line: u32,
    /// The CUDA source location the last `.loc` before it names (`None`: no `.loc` in its
    /// function before it).
    pub loc: Option<LineLoc>,
}

/// A source location of the PTX line info: `.loc FILE LINE COLUMN` (PTX ISA, "Debugging
/// Directives: .loc"). `file` is an index of the module's `.file` table ([`Module::files`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineLoc {
    /// The `.file` index.
    pub file: u32,
    /// 1-based source line (0: a compiler-generated instruction with no line).
    pub line: u32,
    /// Column (0 when not known).
    pub col: u32,
}
