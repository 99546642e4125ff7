//! What one warp-level memory instruction did, as the functional pass found it: the contract
//! between `exec`, which records it, `metrics`, which counts it ([`crate::metrics::Counters::tally`]),
//! and `timing`, which prices it and adds it to the SM's work
//! ([`crate::timing::SmWork::tally`]). An outcome says what happened (the level that served
//! an access, its sectors, wavefronts and requests), never what it cost.

/// One warp-level memory instruction's outcome. Counts are per warp instruction: sectors of
/// 32 bytes, wavefronts (passes of the shared-memory banks or the L1 data pipe), requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Constant-bank values read through the uniform datapath, summed over a run of
    /// instructions: `imc` constant operands (scalar kernel parameters, `%ntid`, `%nctaid`;
    /// one immediate-constant request each) and `idc` ULDC loads (pointer parameters and the
    /// sm_80+ memory descriptor; one indexed-constant request each, which hits).
    Uniform {
        /// Immediate-constant (IMC) requests.
        imc: u64,
        /// Indexed-constant (IDC) requests, all hits.
        idc: u64,
    },
    /// A constant at a fixed address read as an operand of the instruction (one IMC request).
    ConstOperand,
    /// An indexed constant load (LDC): one request per distinct address of the warp.
    Ldc {
        /// Requests (distinct addresses).
        requests: u32,
        /// Requests that hit the first constant level.
        hits: u32,
        /// Requests that missed it.
        misses: u32,
        /// Requests that went on to the GPC-level constant cache: misses of the first level, less
        /// those that merged into a fill already pending (`memory::constant::fills`).
        beyond: u32,
    },
    /// A shared-memory access.
    Shared {
        /// Which kind.
        op: SharedOp,
        /// Bank passes it took.
        wavefronts: u32,
        /// Wavefronts beyond the ideal (bank conflicts); 0 for atomics, which count none.
        conflicts: u32,
    },
    /// A global or local load or store at L1.
    Global {
        /// A local-space access.
        local: bool,
        /// A store.
        store: bool,
        /// Bytes the active lanes asked for.
        bytes: u32,
        /// Distinct sectors.
        sectors: u32,
        /// Sectors that hit L1 (a store's are in the instruction's statistics only: Nsight
        /// Compute's lookup counters are the loads').
        hits: u32,
        /// Sectors that missed L1 (0 for stores).
        misses: u32,
        /// Distinct L1 lines (tag lookups).
        lines: u32,
        /// The global side of a `cp.async` (LDGSTS): `Ca` through L1, `Cg` bypassing it;
        /// `Default` for an ordinary load or store.
        async_copy: crate::ptx::inst::CacheOp,
    },
    /// A local load or store that ptxas kept in registers (the kernel's SASS has no local-memory
    /// instruction, [`crate::ptx::decode::Program::local_in_registers`]): no memory access on the
    /// GPU, so nothing is counted but, for a load, the words its lanes read.
    InRegisters {
        /// Distinct addresses of a load's active lanes (0 for a store): an indexed read of a
        /// by-value array becomes a select over that many values, each an LDC where the array
        /// holds kernel parameters (`sass::count`).
        words: u32,
    },
    /// A texture fetch or surface access through L1TEX's texture pipe, its sectors through the
    /// same L1 and L2 as global loads (a surface store's written through, as a global store's).
    Texture {
        /// Which instruction.
        kind: TexKind,
        /// Distinct sectors of the texels the active lanes read or wrote.
        sectors: u32,
        /// Sectors that hit L1 (0 for stores).
        hits: u32,
        /// Sectors that missed L1 (0 for stores).
        misses: u32,
        /// Distinct L1 lines (tag lookups).
        lines: u32,
    },
    /// A global atomic (`returns`: ATOMG, its old value is used) or reduction (RED), at L1.
    Atomic {
        /// Its result is read.
        returns: bool,
        /// Distinct sectors.
        sectors: u32,
        /// Sectors that missed L1.
        misses: u32,
        /// Distinct L1 lines (tag lookups).
        lines: u32,
    },
}

/// Which instruction of L1TEX's texture pipe an [`Outcome::Texture`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexKind {
    /// A texture fetch (`tex`, `tld4`: SASS TEX, TLD, TLD4).
    Fetch,
    /// A surface load (`suld`: SULD).
    SurfaceLoad,
    /// A surface store (`sust`: SUST).
    SurfaceStore,
}

/// The kind of a shared-memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedOp {
    /// A load (LDS).
    Load,
    /// A store (STS).
    Store,
    /// An atomic or reduction (ATOMS).
    Atom,
    /// The shared-memory write of a `cp.async` (LDGSTS), which counts the instruction.
    Ldgsts {
        /// `.cg`: its global read bypasses L1.
        bypass: bool,
    },
    /// `ldmatrix` (LDSM).
    Ldsm,
    /// `stmatrix` (STSM).
    Stsm,
}
