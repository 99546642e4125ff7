//! What the straight-line path of one SM keeps over a launch ([`Runs`]), and the counts it adds
//! once per run of entries rather than per instruction.

use super::*;

/// What the straight-line path of one SM keeps over a launch: the per-PC counts of the runs of
/// entries it executed, as differences, and each instruction's stream entry.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// `[executions, threads]` differences per PC (`len + 1` of them): a run over PCs `a..b`
    /// adds at `a` and takes away at `b` (wrapping), so that the prefix sums are each PC's
    /// counts ([`Runs::fold`]).
    pub(super) diff: Vec<[u64; 2]>,
    /// The stream entry of each instruction executed on the straight-line path: its PC and
    /// its latency (a kernel parameter's is the IMC's; a word access's is written over).
    pub(super) entries: Vec<Entry>,
    /// Per PC (`len + 1`), the uniform datapath's requests of the instructions before it:
    /// `[IMC requests, IDC requests]` (every IDC request, an 8-byte parameter's, hits).
    pub(super) uniform: Vec<[u64; 2]>,
    /// Per PC (`len + 1`), the f32 forms before it by kind ([`super::fast::LaneOp::flops`]:
    /// `[fadd, fmul, ffma]`), each counting its threads; empty when the program has none, so
    /// that integer kernels' runs count nothing more.
    pub(super) flops: Vec<[u64; 3]>,
}

impl Runs {
    /// Host bytes the runs of one SM keep per instruction of the program.
    pub const BYTES_PER_PC: u64 = (2 * std::mem::size_of::<[u64; 2]>()
        + std::mem::size_of::<Entry>()
        + std::mem::size_of::<[u64; 3]>()) as u64;

    /// The runs of a launch whose pre-decoded entries are `forms`.
    pub fn new(forms: &[LoopEntry]) -> Runs {
        let entries = forms
            .iter()
            .enumerate()
            .map(|(pc, p)| Entry {
                pc: pc as u32,
                lat: if let EntryOp::Param { .. } = p.op {
                    Served::Operand.lat()
                } else {
                    0
                },
            })
            .collect();
        let mut uniform = vec![[0; 2]];
        let mut flops = vec![[0; 3]];
        for p in forms {
            let [imc, idc] = *uniform.last().expect("starts with one");
            let (di, dd) = match p.op {
                EntryOp::Bcast { imc, .. } => (u64::from(imc), 0),
                EntryOp::Param { wide, .. } => (u64::from(!wide), u64::from(wide)),
                _ => (0, 0),
            };
            uniform.push([imc + di, idc + dd]);
            let mut f = *flops.last().expect("starts with one");
            if let EntryOp::AluForm(AluForm { kernel, .. }) = p.op {
                if let Some(k) = kernel.flops() {
                    f[k] += 1;
                }
            }
            flops.push(f);
        }
        if flops.last() == Some(&[0; 3]) {
            flops.clear();
        }
        Runs {
            flops,
            diff: vec![[0; 2]; forms.len() + 1],
            entries,
            uniform,
        }
    }

    /// No launch's runs yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.diff.is_empty()
    }

    /// Adds the counts of the runs so far to `per_pc` (one per PC) and starts again from none.
    pub fn fold(&mut self, per_pc: &mut [PcStats]) {
        let mut acc = [0u64; 2];
        for (d, ps) in self.diff.iter_mut().zip(per_pc) {
            acc[0] = acc[0].wrapping_add(d[0]);
            acc[1] = acc[1].wrapping_add(d[1]);
            ps.executed += acc[0];
            ps.threads += acc[1];
        }
        self.diff.fill([0; 2]);
    }
}

/// Counts the uniform datapath's requests and the f32 forms' threads ([`Runs::flops`]) of the
/// instructions at PCs `a..b` (a plain run, or one entry) run by `threads` threads in `counters`.
#[inline(always)]
pub(super) fn count_uniform(
    counters: &mut Counters,
    runs: (&[[u64; 2]], &[[u64; 3]]),
    a: usize,
    b: usize,
    threads: u64,
) {
    let (uniform, flops) = runs;
    let [imc, idc] = [0, 1].map(|k| uniform[b][k] - uniform[a][k]);
    counters.tally(&Outcome::Uniform { imc, idc });
    if !flops.is_empty() {
        for (k, op) in Flop::F32.into_iter().enumerate() {
            counters.add_flops(op, (flops[b][k] - flops[a][k]) * threads);
        }
    }
}

/// Counts `threads` threads of an f32 form of kind `k` ([`super::fast::LaneOp::flops`]) in `counters`, as
/// [`Ctx::count_flops`] counts the general path's.
#[inline(always)]
pub(super) fn count_flop(counters: &mut Counters, k: FlopKind, threads: u64) {
    counters.add_flops(Flop::F32[k], threads);
}

/// Takes `threads` threads back from the count of PC `pc` in `diff` (a branch inside a
/// segment that no lane took: [`count_run`] counted every thread of the segment there).
#[inline(always)]
pub(super) fn uncount_threads(diff: &mut [[u64; 2]], pc: usize, threads: u64) {
    diff[pc][1] = diff[pc][1].wrapping_sub(threads);
    diff[pc + 1][1] = diff[pc + 1][1].wrapping_add(threads);
}

/// Counts one execution of the plain run over PCs `a..b` by `threads` threads in `diff`.
#[inline(always)]
pub(super) fn count_run(diff: &mut [[u64; 2]], a: usize, b: usize, threads: u64) {
    let da = &mut diff[a];
    da[0] = da[0].wrapping_add(1);
    da[1] = da[1].wrapping_add(threads);
    let db = &mut diff[b];
    db[0] = db[0].wrapping_sub(1);
    db[1] = db[1].wrapping_sub(threads);
}
