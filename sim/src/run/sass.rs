//! A launch's SASS counts from its PTX run: the PTX run's per-line counts into
//! [`crate::sass::count`], and its result into the launch's counters.

use crate::metrics::{Counters, PcStats};
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{Program, NO_REG};
use crate::ptx::inst::Op;
use crate::sass::count::{count, LineRun, SassCounts};
use crate::sass::KernelSass;
use std::collections::HashMap;

/// The SASS counts of kernel `k` for a launch of `program` whose instructions ran as `per_pc`
/// (one per PTX instruction, sampled launches extrapolated). The launch's warps are the
/// executions of its first instruction. Errors: the block counts could not be solved.
pub fn sass_counts(
    k: &KernelSass,
    program: &Program,
    per_pc: &[PcStats],
) -> Result<SassCounts, String> {
    let mut lines: HashMap<u32, LineRun> = HashMap::new();
    for ((inst, &line), s) in program.insts.iter().zip(&program.lines).zip(per_pc) {
        let r = lines.entry(line).or_default();
        r.count.executed += s.executed;
        r.count.threads += s.threads;
        r.count.guarded |= inst.guard != NO_REG;
        r.requests += s.requests;
    }
    let warps = per_pc.first().map_or(0, |s| s.executed);
    // The words read by local loads that ptxas kept in registers ([`Program::local`]).
    let selected = program.local.in_registers().then(|| {
        (program.insts.iter().zip(per_pc))
            .filter(|(i, _)| matches!(i.op, Op::Ld(m) if m.space == StateSpace::Local))
            .map(|(_, s)| s.requests)
            .sum()
    });
    count(&k.function, &lines, warps, selected)
}

/// Replaces the counts the PTX estimate gave with the SASS's: warp instructions, shared load
/// and store instructions, LDGSTS issued (`smsp__inst_executed_op_ldgsts`, which counts those
/// with every lane predicated off too), and constant-cache requests (`idc__requests.sum`; the misses stay the
/// model's, the hits are the rest). The LDC counts of the table (`ld.const` and indexed
/// `ld.param`) stay the PTX's.
pub fn apply_sass_counts(c: &mut Counters, s: &SassCounts) {
    c.inst_executed = s.inst_executed;
    c.shared_ld_inst = s.shared_ld_inst;
    c.shared_st_inst = s.shared_st_inst;
    c.ldgsts_inst = s.ldgsts_issued;
    c.idc_requests = s.idc_requests;
    c.idc_misses = c.idc_misses.min(s.idc_requests);
    c.idc_hits = s.idc_requests - c.idc_misses;
}
