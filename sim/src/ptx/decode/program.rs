//! [`Program`], the decoded kernel the warp loop runs, and what reports ask of it.

use super::DInst;
use crate::ptx::inst::Op;

/// A kernel ready to run.
#[derive(Debug, Clone)]
pub struct Program {
    /// Entry name.
    pub name: String,
    /// Instructions; labels are gone.
    pub insts: Vec<DInst>,
    /// PTX line of each instruction.
    pub lines: Vec<u32>,
    /// CUDA source location of each instruction (its `.loc`; `None` where there is none).
    pub locs: Vec<Option<crate::ptx::ast::LineLoc>>,
    /// The module's `.file` table (index, path) that `locs` refer to; empty when not given.
    pub files: Vec<(u32, String)>,
    /// Source text of each instruction, for reports.
    pub texts: Vec<String>,
    /// Register slots the simulator allocates per thread (every declared register, plus the
    /// hidden carry flag); not what ptxas would allocate (see `exec::regs`).
    pub num_regs: usize,
    /// 32-bit hardware registers each register index needs: 1 up to 32 bits, 2 for 64 bits;
    /// 0 for predicates and the hidden carry flag, which live in predicate and condition
    /// registers, not in the register file.
    pub reg_slots: Vec<u8>,
    /// What decoding noticed that a user should know (an immediate wider than its operand:
    /// `decode::operands`).
    pub notes: Vec<String>,
    /// Register operands of instructions with more than a [`DInst`] holds (`mma`: D, A, B, C
    /// from the instruction's `target` on).
    pub operands: Vec<u16>,
    /// Per instruction, where ptxas merged shared loads or stores into wider SASS ones
    /// ([`crate::sass::merge`]; empty: none known, every access as the PTX says).
    pub shared_widths: Vec<Merge>,
    /// Per instruction, for a backward branch, how many PTX iterations of its loop one iteration
    /// of ptxas's SASS loop covers and how often a warp waits for its loads in one
    /// ([`crate::sass::unroll`]): the replay makes the warp's later instructions wait for its
    /// earlier ones at that many of those executions of the branch only (empty: at every one).
    pub loop_overlap: Vec<Overlap>,
    /// Where the kernel's local memory is on the GPU (found by `sass::merge::local_memory`;
    /// [`LocalMemory::Memory`] without SASS).
    pub local: LocalMemory,
}

/// Where a kernel's local memory (`ld.local`/`st.local`) is on the GPU, as its SASS shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LocalMemory {
    /// In local memory, through L1 and L2 (`LDL`/`STL`), as the PTX says.
    #[default]
    Memory,
    /// In registers: the SASS has no local-memory instruction (`LDL`, `STL`, nor a generic
    /// `LD`/`ST` that could reach it) although the PTX has some; a load is a select among the
    /// values stored.
    Registers,
    /// In registers, holding kernel parameters: NVRTC copies a by-value array parameter to the
    /// stack and indexes it there; ptxas selects from the parameters instead, with one
    /// predicated LDC per element and lookup, so a load requests one LDC per word its lanes read
    /// (tests/fixtures/suite37's `param_table_local` on the H200: 20 IDC requests a warp).
    /// Every LDC of the select takes the constant pipe, those predicated off too.
    ParameterSelect {
        /// Predicated LDCs per local load (the array's elements).
        ldcs: u16,
    },
}

impl LocalMemory {
    /// Whether local accesses are register operands on the GPU, not memory accesses.
    pub fn in_registers(self) -> bool {
        self != LocalMemory::Memory
    }
}

impl Program {
    /// Where instruction `pc` is, for messages: `PTX line 220`, with the CUDA source line
    /// where its `.loc` gives one (`PTX line 220 (matmul.cu:28)`, the file's base name).
    pub fn place(&self, pc: usize) -> String {
        let ptx = self.lines.get(pc).copied().unwrap_or(0);
        match self.locs.get(pc).copied().flatten().filter(|l| l.line > 0) {
            Some(l) => {
                let file = (self.files.iter())
                    .find(|f| f.0 == l.file)
                    .map_or("?", |f| f.1.as_str());
                let name = file.rsplit('/').next().unwrap_or(file);
                format!("PTX line {ptx} ({name}:{})", l.line)
            }
            None => format!("PTX line {ptx}"),
        }
    }

    /// Basic-block leaders, one flag per instruction and one past the last: the first
    /// instruction, every branch target and every instruction after a branch.
    pub fn leaders(&self) -> Vec<bool> {
        let n = self.insts.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (pc, i) in self.insts.iter().enumerate() {
            if i.op == Op::Bra {
                leader[(i.target as usize).min(n)] = true;
                leader[pc + 1] = true;
            }
        }
        leader
    }

    /// Whether any instruction is a block barrier (`bar.sync`, `bar.red`): without one, a block's
    /// warps never wait for each other.
    pub fn has_barriers(&self) -> bool {
        self.insts
            .iter()
            .any(|i| matches!(i.op, Op::BarSync | Op::BarRed(_)))
    }
}

/// How a PTX loop runs on the GPU ([`Program::loop_overlap`], found from the SASS by
/// `sass::unroll`): one iteration of its SASS loop covers `iterations` PTX iterations, and a warp
/// waits for loads `waits` times in it (at most `iterations`, at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// PTX iterations per SASS iteration (1: as the PTX has it).
    pub iterations: u16,
    /// Waits for the loads of the iteration per SASS iteration.
    pub waits: u16,
}

impl Overlap {
    /// Every PTX iteration waits (no SASS known, or a loop ptxas kept as it is).
    pub const NONE: Overlap = Overlap {
        iterations: 1,
        waits: 1,
    };
}

impl Default for Overlap {
    fn default() -> Self {
        Overlap::NONE
    }
}

/// What the GPU executes for one PTX shared load or store ([`Program::shared_widths`], found from the SASS by `sass::merge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merge {
    /// The access as the PTX says.
    #[default]
    AsPtx,
    /// No SASS access of its own: another line's wide access carried its data.
    Absorbed,
    /// A loop's line merged across iterations into `bytes`-byte accesses (8 or 16): an execution
    /// whose active lanes are all `bytes`-aligned is one such access, the others none.
    Aligned {
        /// Bytes per lane of the SASS access.
        bytes: u8,
    },
    /// The line ptxas attributed a group's `bytes`-byte access to: one access per execution,
    /// from each lane's address minus `back` bytes (the group's first).
    Group {
        /// Bytes per lane of the SASS access.
        bytes: u8,
        /// Bytes from the group's first address to this line's.
        back: u8,
    },
}
