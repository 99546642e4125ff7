//! Latencies and unit assignments read once from the config and the SASS profile ([`Costs`],
//! [`Unit`]): what the timing pass prices accesses and instructions with.

use super::*;

/// Latencies in SM cycles, read once from the config.
#[derive(Debug, Clone)]
pub struct Costs {
    /// Dependent ALU instruction.
    pub alu: u32,
    /// Warp-uniform constant operand (IMC hit), also kernel parameters.
    pub imc: u32,
    /// Constant cache levels, nearest first.
    pub constant: Vec<u32>,
    /// L1 hit.
    pub l1: u32,
    /// A shared-memory access of one wavefront (`shared.latency_cycles`).
    pub shared: u32,
    /// L2 hit.
    pub l2: u32,
    /// DRAM.
    pub dram: u32,
    /// Cycles per additional distinct constant address in one request (1 / addresses per cycle).
    pub const_serial: f64,
    /// Constant-cache misses in flight per SM.
    pub const_misses_in_flight: f64,
    /// L2 atomic unit: cycles per operation on one word (`l2.same_address_atomic_cycles`).
    pub atomic_word: f64,
    /// DRAM bytes per SM cycle available to one SM (its share of the GPU's bandwidth).
    pub dram_bytes_per_cycle_per_sm: f64,
    /// Cycles from the last warp's arrival at a barrier to its release, besides the per-warp part.
    pub barrier_latency: u32,
    /// Cycles each warp's barrier occupies the SM's barrier unit.
    pub barrier_per_warp: f64,
    /// Cycles between two warps of a block starting.
    pub warp_launch: f64,
    /// Cycles between two blocks starting on an SM, at least (`sm.block_dispatch_cycles`).
    pub dispatch: f64,
    /// Warp schedulers per SM, each issuing one SASS instruction per cycle.
    pub schedulers: u32,
    /// What the program's instructions become on the GPU ([`sass::Profile`]); empty when the
    /// costs were made without a program (every instruction one SASS instruction).
    pub sass: sass::Profile,
    /// The banks of the L1/shared data array, which global accesses pass too.
    pub banks: Banks,
    /// L1 sector and line bytes.
    pub l1_sector: u64,
    /// L1 line bytes.
    pub l1_line: u64,
    /// log2 of the sectors per L1 line when both sizes are powers of two (configs' sizes are),
    /// so that a sector's line is a shift ([`Costs::line_of`]).
    pub l1_line_shift: Option<u32>,
    /// Stores to one sector this close in cycles merge before L2 (`None`: never).
    pub store_merge: Option<u32>,
    /// The tensor pipe's forms (`[[tensor.form]]`, [`super::tensor::cost`]).
    pub tensor: Vec<crate::config::TensorForm>,
    /// Cycles a texture fetch or surface load takes beyond a global load served at the same
    /// level (`l1.texture_latency_cycles - l1.latency_cycles`).
    pub texture_extra: u32,
    /// Cycles an IMAD occupies a sub-partition's FMA-heavy pipe (`sm.imad_issue_cycles`).
    pub imad_issue: u32,
    /// Cycles an ALU-pipe instruction occupies its sub-partition's ALU (`sm.alu_issue_cycles`).
    pub alu_issue: u32,
}

impl Costs {
    /// Latencies of `cfg`.
    pub fn new(cfg: &GpuConfig) -> Self {
        Costs {
            alu: cfg.sm.alu_latency_cycles,
            imc: cfg.constant.imc_latency_cycles,
            constant: cfg
                .constant
                .cache
                .iter()
                .map(|c| c.latency_cycles)
                .collect(),
            l1: cfg.l1.latency_cycles,
            shared: cfg.shared.latency_cycles,
            l2: cfg.l2.latency_cycles,
            dram: cfg.dram.latency_cycles,
            const_serial: 1.0 / cfg.constant.addresses_per_cycle,
            const_misses_in_flight: cfg.constant.misses_in_flight,
            atomic_word: cfg.l2.same_address_atomic_cycles,
            dram_bytes_per_cycle_per_sm: cfg.dram_bytes_per_cycle() / f64::from(cfg.sm.count),
            barrier_latency: cfg.sm.barrier_latency_cycles,
            barrier_per_warp: cfg.sm.barrier_cycles_per_warp,
            warp_launch: cfg.sm.warp_launch_cycles,
            dispatch: cfg.sm.block_dispatch_cycles,
            schedulers: cfg.sm.schedulers,
            sass: sass::Profile::default(),
            banks: Banks {
                banks: cfg.shared.banks,
                width: cfg.shared.bank_width_bytes,
            },
            l1_sector: u64::from(cfg.l1.sector_bytes),
            l1_line: u64::from(cfg.l1.line_bytes),
            l1_line_shift: line_shift(u64::from(cfg.l1.sector_bytes), u64::from(cfg.l1.line_bytes)),
            store_merge: cfg.l1.store_merge_cycles,
            tensor: cfg.tensor.form.clone(),
            texture_extra: cfg
                .l1
                .texture_latency_cycles
                .map_or(0, |t| t.saturating_sub(cfg.l1.latency_cycles)),
            imad_issue: cfg.sm.imad_issue_cycles,
            alu_issue: cfg.sm.alu_issue_cycles,
        }
    }

    /// Latencies of `cfg` and the SASS profile of program `p`.
    pub fn for_program(cfg: &GpuConfig, p: &Program) -> Self {
        Costs {
            sass: sass::Profile::new(p),
            ..Self::new(cfg)
        }
    }

    /// The L1 line of sector number `sector`.
    #[inline]
    pub fn line_of(&self, sector: u64) -> u64 {
        match self.l1_line_shift {
            Some(k) => sector >> k,
            None => sector * self.l1_sector / self.l1_line,
        }
    }

    /// Cycles until the result of the ALU instruction at `pc` is ready: its dependent SASS steps
    /// times the ALU latency (0 for an instruction ptxas folds into another).
    #[inline]
    pub fn result_latency(&self, pc: u32) -> u32 {
        u32::from(self.sass.at(pc).steps) * self.alu
    }

    /// The constant pipe's work for an LDC whose distinct addresses were served at `served`:
    /// (pipe cycles, miss cycles). Every address passes the pipe (1 / addresses per cycle); each
    /// one served beyond the nearest level also holds one of the misses in flight for that
    /// level's latency. The two overlap: the pipe goes on with other addresses while misses are
    /// outstanding ([`estimate`] takes the larger total).
    pub fn constant_work(&self, served: &[Level]) -> (f64, f64) {
        self.constant_costs(served).1
    }

    /// [`Costs::constant_costs`] of an LDC whose `requests` distinct addresses were all served
    /// by the two nearest constant levels, `misses` of them by the second: bit for bit the same
    /// as for any order of them (the nearest level adds nothing to the miss sum, so it is the
    /// second level's term added `misses` times), without a walk over the requests.
    pub fn constant_costs_near(&self, requests: u32, misses: u32) -> (u32, (f64, f64)) {
        let pipe = f64::from(requests) * self.const_serial;
        let mut miss: f64 = std::iter::empty::<f64>().sum();
        let mut worst = None;
        if misses < requests {
            worst = Some(self.const_level(Level::Cache(0)));
        }
        if misses > 0 {
            let lat = self.const_level(Level::Cache(1));
            worst = worst.max(Some(lat));
            let term = f64::from(lat) / self.const_misses_in_flight;
            for _ in 0..misses {
                miss += term;
            }
        }
        let serial = (requests.saturating_sub(1) as f64 * self.const_serial).round() as u32;
        (worst.unwrap_or(self.imc) + serial, (pipe, miss))
    }

    /// The constant-pipe work (pipe cycles, miss cycles: [`Costs::constant_work`]) of the LDC
    /// (the `ld.const` at `pc`) whose distinct addresses were served at `served`; `None` for the
    /// half of an LDC.64 pair, which issues nothing.
    #[inline]
    pub fn ldc_work(&self, pc: u32, served: &[Level]) -> Option<(f64, f64)> {
        (self.sass.at(pc).ldc > 0).then(|| self.constant_work(served))
    }

    /// The cycle warp `index` of a block starts: the SM launches a block's warps one after another
    /// (\[microbenchmark\] `validate/measurements/h200/ubench`, C).
    pub fn warp_start(&self, index: u32) -> u32 {
        (self.warp_launch * f64::from(index)).round() as u32
    }

    /// Cycles between two blocks of `warps` warps starting on one SM: the block dispatch interval,
    /// and at least a block's worth of warp launches (the next block's warps launch after this
    /// block's).
    pub fn block_dispatch(&self, warps: u32) -> f64 {
        self.dispatch
            .max(f64::from(warps.max(1)) * self.warp_launch)
    }

    /// Cycles from the last of `warps` warps arriving at `bar.sync` to their release: the
    /// arrivals pass the barrier unit one after another (\[microbenchmark\]
    /// `validate/measurements/h200/ubench`, D: 9 + 2 cycles per warp on an H200).
    pub fn barrier(&self, warps: usize) -> u32 {
        self.barrier_latency + (self.barrier_per_warp * warps as f64).round() as u32
    }

    pub(super) fn const_level(&self, l: Level) -> u32 {
        match l {
            Level::Cache(k) => self
                .constant
                .get(usize::from(k))
                .copied()
                .unwrap_or(self.l2),
            Level::L2 => self.l2,
            Level::Dram => self.dram,
        }
    }

    /// DRAM latency of a request behind `queued_bytes` of DRAM traffic of its wave: the idle
    /// latency plus the time the SM's share of the bandwidth takes to move what is queued
    /// (requests of co-resident blocks are served in issue order, first come first served).
    pub fn dram_queued(&self, queued_bytes: u64) -> u32 {
        (f64::from(self.dram) + queued_bytes as f64 / self.dram_bytes_per_cycle_per_sm).round()
            as u32
    }

    /// Cycles the L2 atomic unit spends on one warp request to a line that takes `passes`
    /// passes (per sector, the lanes on its busiest word): one operation per word of a sector in
    /// each pass (\[microbenchmark\] `validate/measurements/h200/ubench`, J: 32 lanes on one word
    /// 46.6 cycles, on 2 words of a sector 23.4, on 4 11.8, one lane 1.5, 8 words of one sector
    /// 4.8, 32 words of a line's 4 sectors 5.2). 0 where the config does not model it.
    pub fn atomic_line(&self, passes: u32) -> f64 {
        f64::from(passes) * self.atomic_word
    }

    /// Latency in cycles of a shared-memory access that took `wavefronts` bank passes
    /// ([`crate::trace::Outcome::Shared`]).
    pub fn shared_access(&self, wavefronts: u32) -> u32 {
        // Conflicting wavefronts are served one after another, a cycle each.
        self.shared + wavefronts - 1
    }

    /// Load-to-use latency of a global/local load served at `level`.
    pub fn global(&self, level: Level) -> u32 {
        match level {
            Level::Cache(_) => self.l1,
            Level::L2 => self.l2,
            Level::Dram => self.dram,
        }
    }

    /// Latency of an LDC whose requests were served at `served` (in service order): the requests
    /// go out one distinct address at a time, and the last one returns after its level's latency.
    pub fn constant_load(&self, served: &[Level]) -> u32 {
        self.constant_costs(served).0
    }

    /// [`Costs::constant_load`] and [`Costs::constant_work`] of `served` in one walk over its
    /// levels: (latency, (pipe cycles, miss cycles)), bit for bit the same as the two apart.
    pub fn constant_costs(&self, served: &[Level]) -> (u32, (f64, f64)) {
        let pipe = served.len() as f64 * self.const_serial;
        // Runs of requests come from one level: its latency and term are found once per run,
        // the term then added once per request, in order (the sum of the terms one by one, from
        // the sum of none).
        let mut worst = None;
        let mut miss: f64 = std::iter::empty::<f64>().sum();
        for run in served.chunk_by(|a, b| a == b) {
            let lat = self.const_level(run[0]);
            worst = worst.max(Some(lat));
            if matches!(run[0], Level::Cache(0)) {
                continue;
            }
            let term = f64::from(lat) / self.const_misses_in_flight;
            for _ in run {
                miss += term;
            }
        }
        let serial = (served.len().saturating_sub(1) as f64 * self.const_serial).round() as u32;
        (worst.unwrap_or(self.imc) + serial, (pipe, miss))
    }
}

/// log2 of the sectors per line when `sector` and `line` bytes are powers of two and the line
/// holds whole sectors ([`Costs::l1_line_shift`]).
pub(super) fn line_shift(sector: u64, line: u64) -> Option<u32> {
    let per_line = line.checked_div(sector)?;
    (per_line.is_power_of_two() && per_line * sector == line).then(|| per_line.trailing_zeros())
}

/// The units whose first use starts their throughput bound ([`SmWork::starts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Global and local loads (LSU, L1, L2 reads).
    Load,
    /// Global and local stores (LSU, L1, L2 writes).
    Store,
    /// Shared-memory accesses.
    Shared,
    /// LDC on the constant pipe.
    Ldc,
}

impl Unit {
    /// The unit instruction `inst` (at `pc` of `costs`' program) uses first, if any.
    pub fn of(costs: &Costs, pc: u32, inst: &DInst) -> Option<Unit> {
        let (m, store) = match inst.op {
            Op::Ld(m) => (m, false),
            Op::St(m) => (m, true),
            _ => return None,
        };
        Some(match m.space {
            StateSpace::Shared => Unit::Shared,
            StateSpace::Const if costs.sass.at(pc).ldc > 0 => Unit::Ldc,
            // An indexed parameter load is an LDC ([`super::sass::sass`]).
            StateSpace::Param if !store && !super::sass::fixed_address(inst) => Unit::Ldc,
            // Local memory ptxas kept in registers: a select, of LDCs where it holds parameters.
            StateSpace::Local if costs.sass.local.in_registers() => {
                return (costs.sass.at(pc).ldc > 0).then_some(Unit::Ldc);
            }
            StateSpace::Const | StateSpace::Param | StateSpace::Reg => return None,
            _ if store => Unit::Store,
            _ => Unit::Load,
        })
    }
}
