//! The warp-level access handed to the memory models: the dispatch on the state space, constant
//! loads (operands, or requests to the constant caches), kernel-parameter loads and shared
//! accesses (wavefronts and bank conflicts), each recorded as an [`Outcome`]; global and local accesses are in
//! `global`.

use super::address::resolved_access;
use crate::exec::decode::{DInst, Src};
use crate::exec::step::Ctx;
use crate::exec::warp::Warp;
use crate::memory::coalesce;
use crate::memory::constant::merge::Issue;
use crate::memory::shared::{self, Banks};
use crate::memory::system::ConstLevelsOutcome;
use crate::memory::{Level, WarpAccess, WARP};
use crate::metrics::SharedSample;
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::LocalMemory;
use crate::ptx::inst::MemOp;
use crate::sass::merge::Merge;
use crate::trace::{Outcome, Served, SharedOp};

impl Ctx<'_> {
    /// Records outcome `o` of the memory instruction at `pc`: counted in the SM's counters and
    /// the instruction's statistics ([`crate::metrics::Counters::tally`]), added to the SM's
    /// work ([`crate::timing::SmWork::tally`]).
    #[inline(always)]
    pub(crate) fn record(&mut self, pc: u32, o: Outcome) {
        self.counters.tally(&o);
        self.per_pc[pc as usize].tally(&o);
        self.work.tally(&o);
    }

    /// A kernel-parameter load in the models: recorded, served by the immediate constant cache.
    pub(super) fn param_model(&mut self, pc: u32, m: MemOp) -> u32 {
        // A pointer parameter is loaded through the uniform datapath (ULDC, an IDC request that
        // hits); a scalar one becomes a constant operand (IMC). This is what ptxas emits for
        // sm_80 and later; counted per warp.
        let wide = u64::from(m.ty.bytes() == 8);
        self.record(
            pc,
            Outcome::Uniform {
                imc: 1 - wide,
                idc: wide,
            },
        );
        Served::Operand.lat()
    }

    /// Hands the warp-level access to the memory models and records the outcome; returns the
    /// stream entry's latency field ([`crate::trace::Lat`]: where it was served, or a ticket).
    /// `access`: the warp's addresses as generated (generic ones not yet resolved), `run` its
    /// [`coalesce::run`] (`None` where not needed: constant loads), `step` its
    /// [`coalesce::Shape::step`]. Only the dispatch on the
    /// space, inlined into the callers: each space's model is its own function with the frame
    /// and set-up it needs (one function for all had the global path's 2 KiB frame and a set-up
    /// of some 45 instructions that every shared access paid as well).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn model(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        match space {
            StateSpace::Param => {
                if matches!(inst.addr.map(|a| a.base), Some(Src::Imm(_))) {
                    self.param_model(pc, m)
                } else {
                    let n = distinct_addresses(access);
                    self.parameter_ldc(pc, n, n)
                }
            }
            StateSpace::Const => self.model_const(inst, pc, m, access),
            StateSpace::Local if self.pass.launch.program.local.in_registers() => {
                self.in_registers(pc, access, store)
            }
            StateSpace::Global | StateSpace::Local => {
                self.model_global(w, pc, m, space, access, run, step, store)
            }
            StateSpace::Shared => self.model_shared(w, pc, m, access, run, step, store),
            StateSpace::Reg | StateSpace::Generic => 0,
        }
    }

    /// [`Self::model`] for a local access that ptxas kept in registers: recorded with the
    /// distinct words a load's lanes read, served as a register operand; a load that selects
    /// among kernel parameters ([`LocalMemory::ParameterSelect`]) is that many LDC requests.
    #[inline(never)]
    fn in_registers(&mut self, pc: u32, access: &WarpAccess, store: bool) -> u32 {
        let words = if store { 0 } else { distinct_addresses(access) };
        if let (LocalMemory::ParameterSelect { ldcs }, true) =
            (self.pass.launch.program.local, words > 0)
        {
            // Each of the select's LDCs takes the constant pipe, those predicated off too.
            return self.parameter_ldc(pc, words, u32::from(ldcs).max(words));
        }
        self.record(pc, Outcome::InRegisters { words });
        Served::Operand.lat()
    }

    /// An LDC of `requests` distinct kernel-parameter addresses, all hits (kernel parameters
    /// are read at the kernel's start): recorded, and served by the constant caches (its latency
    /// and constant-pipe work priced by `timing::price`). An indexed kernel-parameter load
    /// (`ld.param.f32 %f1, [%rd10]`, a `__grid_constant__` table) is one: ptxas makes it an LDC
    /// with a register index (`LDC R0, c[0x0][R8+0x224]`), a request per distinct address.
    /// `passes`: the constant-pipe passes it takes (`requests` for one LDC; a select's
    /// predicated LDCs, [`LocalMemory::ParameterSelect`], take one each).
    fn parameter_ldc(&mut self, pc: u32, requests: u32, passes: u32) -> u32 {
        let o = Outcome::Ldc {
            requests,
            hits: requests,
            misses: 0,
            beyond: 0,
        };
        self.record(pc, o);
        self.log.ldc_served(pc, passes, 0, &[])
    }

    /// [`Self::model`] for an indexed or fixed constant load.
    #[inline(never)]
    fn model_const(&mut self, inst: &DInst, pc: u32, m: MemOp, access: &WarpAccess) -> u32 {
        let fixed = matches!(inst.addr.map(|a| a.base), Some(Src::Imm(_)))
            && self.pass.costs.sass.is_const_operand(pc); // timing::sass: LDC when if-converted
        if fixed {
            // A constant at a fixed address is an operand of the instruction (IMC,
            // DESIGN.md). ptxas sometimes loads such values with LDC instead: on an H200
            // conv2d's filter taps count as IDC requests while stencil_1d's count as IMC.
            self.record(pc, Outcome::ConstOperand);
            return Served::Operand.lat();
        }
        let mut o = ConstLevelsOutcome::default();
        let access = resolved_access(m.space, access);
        let window = self.pass.cfg.constant.smsp_merge_cycles;
        match self.slot {
            Some((scheduler, cycle)) if window > 0 => {
                let c = &self.pass.cfg.constant;
                let who = Issue {
                    pc,
                    scheduler,
                    cycle,
                    window: window.into(),
                    // A miss of the nearest level waits for the next level's latency.
                    fill: c.cache.get(1).map_or(0, |l| l.latency_cycles.into()),
                    spacing: (1.0 / c.addresses_per_cycle).round().max(1.0) as u64,
                };
                (self.caches).constant_load_issued_into(self.pass.params, &access, who, &mut o)
            }
            _ => (self.caches).constant_load_into(self.pass.params, &access, &mut o),
        }
        self.log.const_merged += u64::from(o.far_merged);
        self.record(
            pc,
            Outcome::Ldc {
                requests: o.requests,
                hits: o.hits,
                misses: o.misses,
                beyond: o.level_misses[0].saturating_sub(o.far_merged),
            },
        );
        if !o.to_l2.is_empty() {
            // Priced by the L2 pass, which knows where the misses were served.
            let served = o.served.iter().map(|&l| (l != Level::L2).then_some(l));
            return self.log.const_request(pc, served, &o.to_l2);
        }
        // Every request was served by a constant level; the timing pass prices it (latency and
        // constant-pipe work, `timing::price`) from the requests and misses, or, when some went
        // past the second level, from where each was served.
        let levels: &[Level] = match o.level_misses[1] {
            0 => &[],
            _ => &o.served,
        };
        self.log.ldc_served(pc, o.requests, o.misses, levels)
    }

    /// [`Self::model`] for a shared access.
    #[inline(never)]
    pub(super) fn model_shared(
        &mut self,
        w: &Warp,
        pc: u32,
        m: MemOp,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        let banks = Banks {
            banks: self.pass.cfg.shared.banks,
            width: self.pass.launch.bank_width,
        };
        let access = resolved_access(m.space, access);
        if let Some((shadow, hazards)) = self.race.as_mut() {
            shadow.access(
                (w.index, w.clock, w.warp_syncs),
                pc,
                &access,
                store,
                hazards,
            );
        }
        let (run, step) = match m.space {
            StateSpace::Generic => {
                let shape = coalesce::Shape::of(access.mask, &access.addrs);
                (shape.run(access.bytes), shape.step)
            }
            _ => (run, step),
        };
        let merged = (self.pass.launch.program.shared_widths)
            .get(pc as usize)
            .copied()
            .unwrap_or_default();
        let wide;
        let (access, run, step) = match merged {
            Merge::AsPtx => (&*access, run, step),
            // Its data came with another PTX line's LDS.128/STS.128: no wavefront of its own.
            Merge::Absorbed => return Served::Shared { wavefronts: 0 }.lat(),
            Merge::Aligned { bytes } => {
                let w = u64::from(bytes);
                let mut lanes = (0..WARP).filter(|&l| access.mask >> l & 1 == 1);
                if !lanes.all(|l| access.addrs[l].is_multiple_of(w)) {
                    // A later iteration of a merged group (its first is the aligned one).
                    return Served::Shared { wavefronts: 0 }.lat();
                }
                wide = WarpAccess {
                    bytes: u32::from(bytes),
                    ..*access
                };
                (&wide, None, None)
            }
            Merge::Group { bytes, back } => {
                let mut addrs = access.addrs;
                for a in &mut addrs {
                    *a = a.wrapping_sub(u64::from(back));
                }
                wide = WarpAccess {
                    mask: access.mask,
                    addrs,
                    bytes: u32::from(bytes),
                };
                (&wide, None, None)
            }
        };
        let bytes = access.bytes;
        // The 8- and 16-byte phase rules measured on the H200 are applied from compute 3.x on
        // (unmeasured before sm_90); Fermi keeps the rules the CUDA C Programming Guide 4.2
        // documents for compute 2.x (§F.4.3).
        let wf = if self.pass.measured_vector_phases {
            shared::lsu_wavefronts(access, banks, run, step)
        } else {
            shared::wavefronts_of_step(access, banks, run, step)
        };
        let op = if store {
            SharedOp::Store
        } else {
            SharedOp::Load
        };
        self.record(
            pc,
            Outcome::Shared {
                op,
                wavefronts: wf.wavefronts,
                conflicts: wf.conflicts(),
            },
        );
        let ps = &mut self.per_pc[pc as usize];
        note_worst(&mut ps.worst, access, bytes, banks, wf.wavefronts);
        Served::Shared {
            wavefronts: wf.wavefronts,
        }
        .lat()
    }
}

/// Keeps the shared access `access` (`bytes` per lane, on `banks`, taking `wavefronts`) as an
/// instruction's `worst` (the bank picture of `--per-instruction`) when it took more wavefronts
/// than the one kept.
#[inline(always)]
pub(super) fn note_worst(
    worst: &mut Option<SharedSample>,
    access: &WarpAccess,
    bytes: u32,
    banks: Banks,
    wavefronts: u32,
) {
    if worst.as_ref().is_none_or(|s| s.wavefronts < wavefronts) {
        *worst = Some(SharedSample {
            mask: access.mask,
            addrs: access.addrs.to_vec(),
            bytes,
            banks: banks.banks,
            width: banks.width,
            wavefronts,
        });
    }
}

/// Distinct addresses among the active lanes of `access`.
fn distinct_addresses(access: &WarpAccess) -> u32 {
    let mut seen = [0u64; WARP];
    let mut n = 0;
    for l in (0..WARP).filter(|&l| access.mask >> l & 1 == 1) {
        let a = access.addrs[l];
        if !seen[..n].contains(&a) {
            seen[n] = a;
            n += 1;
        }
    }
    n as u32
}
