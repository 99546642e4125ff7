//! Registers per thread, estimated from a decoded kernel as ptxas would allocate them.
//!
//! Occupancy depends on the registers ptxas gives each thread (`ptxas -v`: `Used N registers`),
//! which the PTX does not say: its virtual registers are unlimited and ptxas reuses a hardware
//! register once the value in it is dead. The estimate is the register pressure of the kernel,
//! the most 32-bit register slots live at once, in an approximation of the order ptxas issues
//! the instructions in, plus the registers every kernel reserves:
//!
//! - **Liveness** over the control flow graph (calls are already inlined): a value is live from
//!   its definition to its last use on some path. A 64-bit value takes 2 slots; predicates and
//!   the carry flag none (they have registers of their own); a value loaded from `.param` space
//!   none, since ptxas reads kernel parameters from the constant bank where they are used
//!   (`c[0x0][0x210]` operands, or an `LDC` just before: every kernel of
//!   `validate/measurements/h200/sass/`).
//! - **Scheduling**: to hide latency ptxas issues independent instructions early, loads first,
//!   so that more values are live than in the PTX's order (conv2d's 50 loads, smem_stride's 32
//!   address additions ahead of their stores). Modelled by letting every instruction move up to
//!   [`HOIST_WINDOW`] places earlier within its straight-line region, as far as its operands,
//!   memory order and barriers allow; its result is then live from there. Regions are split at
//!   the targets of the branches ptxas keeps; short forward branches that it if-converts
//!   ([`crate::timing::sass::Profile`]) do not split them.
//! - **Reserved**: [`RESERVED`] registers.
//!
//! Fitted to `ptxas -v` of ptxas 13.0 for sm_90 on the 45 kernels of the bundled PTX and the
//! user-kernel fixture (`validate/measurements/h200/ptxas-registers.txt`): within 5 registers of
//! every one, mean absolute error under 2 (`tests/registers.rs` prints the table). ptxas's actual
//! assignment also leaves holes (smem_stride uses only even registers R2..R16 for its stored
//! values), which no pressure model sees.

use super::decode::{DInst, Program, Src, NO_REG};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::Op;
use crate::timing::sass::Profile;

/// Places an instruction may move up in the schedule, at most. Fitted to the sm_90 ground truth
/// (`tests/registers.rs` prints the sweep): 24 gives errors of -5 to +4 registers, mean 1.9; the
/// PTX's own order (0) leaves kernels up to 15 short (mean 4.5), 16 up to 8 short, and
/// 48 overshoots by up to 13.
pub const HOIST_WINDOW: usize = 24;

/// Registers a kernel holds besides its values: R1, the stack pointer, which opens every kernel's
/// SASS (`LDC R1, c[0x0][0x28]`, `validate/measurements/h200/sass/`).
pub const RESERVED: u32 = 1;

/// Registers per thread ptxas would allocate for `p`: [`peak_pressure`] plus [`RESERVED`]. Not
/// clamped to any GPU's maximum (255 from compute 3.5 on): callers compare.
pub fn estimate(p: &Program) -> u32 {
    peak_pressure(p) + RESERVED
}

/// The most 32-bit register slots that `p`'s values occupy at once, scheduled as the module
/// documentation describes.
pub fn peak_pressure(p: &Program) -> u32 {
    peak_pressure_in_window(p, HOIST_WINDOW)
}

/// [`peak_pressure`] with instructions moving up at most `window` places (0: the PTX's order).
pub fn peak_pressure_in_window(p: &Program, window: usize) -> u32 {
    let slots = value_slots(p);
    let (live_in, live_out) = liveness(p);
    let moved = moved_slots(p, &slots, &live_out, window);
    let count = |s: &Set| -> i64 { s.iter().map(|r| i64::from(slots[r])).sum() };
    let peak = (0..p.insts.len())
        .map(|pc| {
            // Before the instruction, or while it writes its results over the values that
            // outlive it.
            let mut during = live_out[pc].clone();
            defs(&p.insts[pc]).for_each(|r| during.insert(r));
            count(&live_in[pc]).max(count(&during)) + moved[pc]
        })
        .max()
        .unwrap_or(0);
    u32::try_from(peak.max(0)).unwrap_or(u32::MAX)
}

/// The registers some lane of `p` may read before it has written them: those live where the
/// kernel starts (a guarded write may not happen, so it does not count as one). Every other
/// register's row is written by a lane before that lane reads it, so what it held before the
/// launch cannot show. `None` when `p` reads registers of other lanes (`shfl`, whose source lane
/// may not have written them): then any register's old value may show.
pub fn read_before_written(p: &Program) -> Option<Vec<u16>> {
    if p.insts.iter().any(|i| matches!(i.op, Op::Shfl(_))) {
        return None;
    }
    if p.insts.is_empty() {
        return Some(vec![]);
    }
    let (live_in, _) = liveness(p);
    Some(live_in[0].iter().map(|r| r as u16).collect())
}

/// `p` with its registers renamed onto as few rows as their live ranges allow, for running it:
/// two registers share a row when neither is written while the other is live (nor by an
/// instruction that reads the other: an instruction never writes a row it reads from, whatever
/// order it reads and writes lanes in). The registers in `keep` (by index) keep a row of their
/// own. `None` when renaming cannot keep the results: a register may be read before it is
/// written ([`read_before_written`]: what an earlier block left in the row would change).
///
/// Each lane runs the program's instructions in the order of some path through it, so a
/// register's value at a read is the one its last write on that path left; sharing its row
/// with registers not live there changes no read. The PCs stay as they are; only register
/// indices change (`reg_slots` is each row's widest register's).
pub fn compact(p: &Program, keep: &[u16]) -> Option<Program> {
    let row = rows(p, keep)?;
    let map = |r: u16| row.get(usize::from(r)).copied().unwrap_or(r);
    let src = |s: Src| match s {
        Src::Reg(r) => Src::Reg(map(r)),
        Src::NotPred(r) => Src::NotPred(map(r)),
        s => s,
    };
    let mut q = p.clone();
    for i in &mut q.insts {
        i.guard = map(i.guard);
        i.dst = i.dst.map(map);
        i.src = i.src.map(src);
        if let Some(a) = &mut i.addr {
            a.base = src(a.base);
        }
    }
    q.num_regs = row.iter().map(|&r| usize::from(r) + 1).max().unwrap_or(0);
    q.reg_slots = vec![0; q.num_regs];
    for (r, &slots) in p.reg_slots.iter().enumerate() {
        let s = &mut q.reg_slots[usize::from(row[r])];
        *s = (*s).max(slots);
    }
    Some(q)
}

/// The row of each register of `p` that [`compact`] renames it to.
fn rows(p: &Program, keep: &[u16]) -> Option<Vec<u16>> {
    // `mma` reads and writes registers of the operand table that `defs`/`uses` do not see:
    // such a program keeps its rows.
    if !read_before_written(p)?.is_empty()
        || p.insts
            .iter()
            .any(|i| matches!(i.op, Op::Mma(_) | Op::Wmma(_) | Op::Sust(_)))
    {
        return None;
    }
    let n = p.reg_slots.len();
    let (_, live_out) = liveness(p);
    let mut clash = vec![Set::new(n); n];
    let mut edge = |a: u16, b: u16| {
        if a != b {
            clash[usize::from(a)].insert(b);
            clash[usize::from(b)].insert(a);
        }
    };
    for (i, out) in p.insts.iter().zip(&live_out) {
        for d in defs(i) {
            out.iter().for_each(|r| edge(d, r as u16));
            uses(i).chain(defs(i)).for_each(|r| edge(d, r));
        }
    }
    let mut own = vec![false; n];
    keep.iter().for_each(|&r| own[usize::from(r)] = true);
    // Greedy, in index order: the lowest row that no renamed neighbour holds and that no kept
    // register holds.
    let mut row = vec![u16::MAX; n];
    let mut rows = 0u16;
    let mut exclusive: Vec<bool> = vec![];
    for r in 0..n {
        let taken: Vec<u16> = (clash[r].iter())
            .map(|x| row[x])
            .filter(|&c| c != u16::MAX)
            .collect();
        let pick = if own[r] {
            None
        } else {
            (0..rows).find(|&c| !exclusive[usize::from(c)] && !taken.contains(&c))
        };
        row[r] = pick.unwrap_or_else(|| {
            exclusive.push(own[r]);
            rows += 1;
            rows - 1
        });
    }
    Some(row)
}

/// 32-bit slots each register needs: its width's ([`Program::reg_slots`]), except that values
/// loaded from `.param` space need none.
fn value_slots(p: &Program) -> Vec<u8> {
    let mut slots = p.reg_slots.clone();
    for i in p.insts.iter().filter(|i| is_param_load(i)) {
        defs(i).for_each(|r| slots[usize::from(r)] = 0);
    }
    slots
}

fn is_param_load(i: &DInst) -> bool {
    matches!(i.op, Op::Ld(m) if m.space == StateSpace::Param)
}

/// A set of register indices.
#[derive(Clone, PartialEq, Eq)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Self {
        Set(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, r: u16) {
        self.0[usize::from(r) / 64] |= 1 << (r % 64);
    }
    fn contains(&self, r: u16) -> bool {
        self.0[usize::from(r) / 64] >> (r % 64) & 1 == 1
    }
    fn remove(&mut self, r: u16) {
        self.0[usize::from(r) / 64] &= !(1 << (r % 64));
    }
    fn union(&mut self, o: &Set) {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a |= b);
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| w * 64 + b)
        })
    }
}

/// The registers `i` reads.
fn uses(i: &DInst) -> impl Iterator<Item = u16> + '_ {
    let reg = |s: &Src| match s {
        Src::Reg(r) | Src::NotPred(r) => Some(*r),
        _ => None,
    };
    let guard = (i.guard != NO_REG).then_some(i.guard);
    i.src[..usize::from(i.nsrc)]
        .iter()
        .filter_map(reg)
        .chain(i.addr.as_ref().and_then(|a| reg(&a.base)))
        .chain(guard)
}

/// The registers `i` writes.
fn defs(i: &DInst) -> impl Iterator<Item = u16> + '_ {
    i.dst.iter().copied().filter(|&r| r != NO_REG)
}

/// Instructions control can reach after `pc`.
fn successors(p: &Program, pc: usize) -> impl Iterator<Item = usize> {
    let i = &p.insts[pc];
    let guarded = i.guard != NO_REG;
    let (fall, jump) = match i.op {
        Op::Bra => (guarded, Some(i.target as usize)),
        Op::Exit | Op::Ret => (guarded, None),
        _ => (true, None),
    };
    let next = (fall && pc + 1 < p.insts.len()).then_some(pc + 1);
    next.into_iter().chain(jump)
}

/// Live registers before and after each instruction: backward dataflow to a fixed point (in
/// reverse order it converges in a few sweeps; loops need one more each).
fn liveness(p: &Program) -> (Vec<Set>, Vec<Set>) {
    let n = p.insts.len();
    let nregs = p.reg_slots.len();
    let mut live_in = vec![Set::new(nregs); n];
    let mut live_out = vec![Set::new(nregs); n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let mut out = Set::new(nregs);
            for s in successors(p, pc) {
                out.union(&live_in[s]);
            }
            let i = &p.insts[pc];
            let mut inn = out.clone();
            if i.guard == NO_REG {
                // A guarded write may not happen: the old value lives through it.
                defs(i).for_each(|r| inn.remove(r));
            }
            uses(i).for_each(|r| inn.insert(r));
            if inn != live_in[pc] {
                live_in[pc] = inn;
                changed = true;
            }
            live_out[pc] = out;
        }
    }
    (live_in, live_out)
}

fn is_memory(i: &DInst) -> bool {
    matches!(i.op, Op::Ld(_) | Op::St(_) | Op::Atom(_) | Op::Red(_))
}

/// Whether no instruction moves above `i`: control flow and barriers end a scheduling region.
fn is_fence(i: &DInst) -> bool {
    matches!(
        i.op,
        Op::Bra | Op::Ret | Op::Exit | Op::BarSync | Op::BarRed(_) | Op::WarpSync
    )
}

/// Whether `j` may move above `prev` (in straight-line code): not past a fence, not past the
/// definition of what it reads nor a read or write of what it writes, and in memory order (loads
/// pass loads; nothing passes a store or an atomic, and stores and atomics pass nothing).
fn may_pass(j: &DInst, prev: &DInst) -> bool {
    if is_fence(prev) {
        return false;
    }
    let reads_or_writes = |r: u16| uses(prev).chain(defs(prev)).any(|x| x == r);
    if defs(prev).any(|d| uses(j).any(|u| u == d)) || defs(j).any(reads_or_writes) {
        return false;
    }
    let load = matches!(j.op, Op::Ld(_));
    !(is_memory(j) && is_memory(prev) && !(load && matches!(prev.op, Op::Ld(_))))
}

/// Per instruction, how many more slots are live there in the schedule than in the PTX's
/// order: every instruction with a result moves up at most `window` places within its region
/// ([`may_pass`]); its result is live from there, and an operand it read last is dead from there.
fn moved_slots(p: &Program, slots: &[u8], live_out: &[Set], window: usize) -> Vec<i64> {
    let n = p.insts.len();
    let profile = Profile::new(p);
    // Regions start at the targets of the branches ptxas keeps (loops, long or nested regions).
    let mut starts = vec![false; n + 1];
    for (pc, i) in p.insts.iter().enumerate() {
        if i.op == Op::Bra && profile.skipped(pc as u32).is_none() {
            starts[(i.target as usize).min(n)] = true;
        }
    }
    let slots_of = |r: u16| i64::from(slots[usize::from(r)]);
    let mut delta = vec![0i64; n];
    for (j, inst) in p.insts.iter().enumerate() {
        let width: i64 = defs(inst).map(slots_of).sum();
        if width == 0 || is_fence(inst) {
            continue;
        }
        let mut to = j;
        while to > 0 && !starts[to] && j - to < window {
            let prev = &p.insts[to - 1];
            // An if-converted branch is predication, not control flow.
            let if_converted = prev.op == Op::Bra && profile.skipped((to - 1) as u32).is_some();
            if !if_converted && !may_pass(inst, prev) {
                break;
            }
            to -= 1;
        }
        // An operand's old value dies here if nothing after reads it (or this instruction
        // overwrites it) and nothing it moved above reads it.
        let dies = |u: u16| {
            let overwritten = inst.guard == NO_REG && defs(inst).any(|d| d == u);
            (overwritten || !live_out[j].contains(u))
                && !p.insts[to..j].iter().any(|k| uses(k).any(|x| x == u))
        };
        let mut freed: Vec<u16> = uses(inst).filter(|&u| dies(u)).collect();
        freed.sort_unstable();
        freed.dedup();
        let change = width - freed.into_iter().map(slots_of).sum::<i64>();
        delta[to..j].iter_mut().for_each(|e| *e += change);
    }
    delta
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::decode;
    use std::collections::HashMap;

    /// The kernel `k` of `body` (a `.entry k` with the given declarations and instructions).
    fn program(decls: &str, body: &str) -> Program {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 k_p)\n{{\n{decls}\n{body}\n}}\n"
        );
        let m = crate::ptx::parse(&text, "t.ptx").unwrap();
        let f = m.entry("k").unwrap();
        let symbols = HashMap::from([("k_p".to_string(), decode::SymbolAddr::Param(0))]);
        decode::decode(f, &symbols, &text, "t.ptx").unwrap()
    }

    #[test]
    fn a_chain_needs_one_register_per_value_alive() {
        // %r1 and %r2 die into %r3: at most two 32-bit values at once, plus the parameter's
        // pointer (no register: a constant-bank operand) and the stack pointer.
        let p = program(
            ".reg .b32 %r<4>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\n\
             add.s32 %r3, %r2, %r2;\nst.global.u32 [%rd1], %r3;\nret;",
        );
        assert_eq!(peak_pressure(&p), 1);
        assert_eq!(estimate(&p), 1 + RESERVED);
    }

    #[test]
    fn sixty_four_bit_values_take_two_slots_and_predicates_none() {
        let p = program(
            ".reg .pred %p<2>; .reg .b32 %r<2>; .reg .b64 %rd<4>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n\
             setp.eq.u32 %p1, %r1, 0;\nadd.s64 %rd3, %rd1, %rd2;\n@%p1 st.global.u32 [%rd3], %r1;\n\
             ret;",
        );
        // %r1 (1) and %rd2 (2) live together, then %rd3 (2) and %r1 (1).
        assert_eq!(peak_pressure(&p), 3);
    }

    #[test]
    fn independent_loads_are_scheduled_early_and_stay_live() {
        // Four loads each used right away in the PTX: in order, two values live at once; ptxas
        // issues the four loads first, so all four results are live before the first add.
        let p = program(
            ".reg .b32 %r<9>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\n\
             ld.global.u32 %r1, [%rd1];\nadd.s32 %r5, %r1, 1;\n\
             ld.global.u32 %r2, [%rd1+4];\nadd.s32 %r6, %r5, %r2;\n\
             ld.global.u32 %r3, [%rd1+8];\nadd.s32 %r7, %r6, %r3;\n\
             ld.global.u32 %r4, [%rd1+12];\nadd.s32 %r8, %r7, %r4;\n\
             st.global.u32 [%rd1], %r8;\nret;",
        );
        assert!(peak_pressure(&p) >= 4, "{}", peak_pressure(&p));
    }

    #[test]
    fn loads_do_not_pass_stores_or_barriers() {
        let p = program(
            ".reg .b32 %r<5>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nst.global.u32 [%rd1], %r1;\n\
             bar.sync 0;\nld.global.u32 %r2, [%rd1];\nst.global.u32 [%rd1+4], %r2;\n\
             ld.global.u32 %r3, [%rd1+8];\nst.global.u32 [%rd1+12], %r3;\nret;",
        );
        assert_eq!(peak_pressure(&p), 1);
    }

    /// [`compact`] gives registers that clash (one written while the other is live, or by an
    /// instruction that reads it) different rows, kept registers rows of their own, and shares
    /// the others': on a chain, a guarded write, and every entry of the bundled PTX.
    #[test]
    fn compacted_rows_never_clash() {
        // Every row a pc's instruction writes differs from those of the other registers live
        // after it and of its operands; kept registers share no row.
        let check = |p: &Program, keep: &[u16], what: &str| -> Option<usize> {
            let row = rows(p, keep)?;
            let (_, live_out) = liveness(p);
            for (pc, (i, out)) in p.insts.iter().zip(&live_out).enumerate() {
                for d in defs(i) {
                    let others = out.iter().map(|r| r as u16).chain(uses(i)).chain(defs(i));
                    for r in others.filter(|&r| r != d) {
                        let (a, b) = (row[usize::from(d)], row[usize::from(r)]);
                        assert_ne!(a, b, "{what}: pc {pc} writes {d} over {r}");
                    }
                }
            }
            for &k in keep {
                let shared = (0..row.len())
                    .filter(|&r| row[r] == row[usize::from(k)])
                    .count();
                assert_eq!(shared, 1, "{what}: kept {k} shares its row");
            }
            let q = compact(p, keep).expect("renamed");
            assert_eq!(q.insts.len(), p.insts.len());
            assert!(q.num_regs <= p.num_regs);
            Some(q.num_regs)
        };
        // %r1 dies into %r2, %r2 into %r3: one row serves all three; %rd1 lives throughout.
        let p = program(
            ".reg .b32 %r<4>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\n\
             add.s32 %r3, %r2, %r2;\nst.global.u32 [%rd1], %r3;\nret;",
        );
        // %rd1, %r1..%r3 (and their neighbours), the carry flag: fewer rows than registers.
        let n = check(&p, &[], "chain").unwrap();
        assert!(n < p.num_regs, "{n} rows of {}", p.num_regs);
        let Src::Reg(r1) = p.insts[2].src[0] else {
            panic!("add reads %r1")
        };
        assert!(check(&p, &[r1], "chain, %r1 kept").unwrap() > n - 1);
        // A guarded write keeps the old value live through it: %r2 and %r1 clash.
        let p = program(
            ".reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, 5;\n\
             setp.eq.u32 %p1, %r1, 0;\n@%p1 mov.u32 %r2, %r1;\nst.global.u32 [%rd1], %r2;\nret;",
        );
        check(&p, &[], "guarded").unwrap();
        // A register read before it is written: no renaming.
        let p = program(
            ".reg .b32 %r<3>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nadd.s32 %r2, %r1, 1;\nst.global.u32 [%rd1], %r2;\nret;",
        );
        assert!(compact(&p, &[]).is_none());
        // Every entry of the bundled PTX.
        let dir = format!("{}/../kernels/ptx", env!("CARGO_MANIFEST_DIR"));
        let mut renamed = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let file = path.display().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let m = crate::ptx::parse(&text, &file).unwrap();
            for f in m.functions.iter().filter(|f| f.is_entry) {
                let f = crate::ptx::inline::inline_calls(&m, f, &text, &file).unwrap();
                let mut symbols = HashMap::new();
                for v in m.globals.iter().chain(&f.locals) {
                    symbols.insert(v.name.clone(), decode::SymbolAddr::Global(0));
                }
                for q in &f.params {
                    symbols.insert(q.name.clone(), decode::SymbolAddr::Param(0));
                }
                let p = decode::decode(&f, &symbols, &text, &file).unwrap();
                let what = format!("{file} {}", f.name);
                // Keep every third register too.
                let keep: Vec<u16> = (0..p.num_regs as u16).step_by(3).collect();
                if check(&p, &[], &what).is_some() {
                    check(&p, &keep, &what).unwrap();
                    renamed += 1;
                }
            }
        }
        assert!(renamed > 10, "{renamed} entries renamed");
    }

    #[test]
    fn registers_read_before_written_are_those_live_at_entry() {
        // %r1 is written before every read; %r2 only under a guard, so the add may read the
        // old value; %r3 is read first.
        let p = program(
            ".reg .pred %p<2>; .reg .b32 %r<5>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\n\
             @%p1 mov.u32 %r2, 1;\nadd.s32 %r4, %r2, %r3;\nst.global.u32 [%rd1], %r4;\nret;",
        );
        let Src::Reg(r2) = p.insts[4].src[0] else {
            panic!("add reads %r2")
        };
        let Src::Reg(r3) = p.insts[4].src[1] else {
            panic!("add reads %r3")
        };
        let mut got = read_before_written(&p).unwrap();
        got.sort();
        let mut want = vec![r2, r3];
        want.sort();
        assert_eq!(got, want);
        // A chain reads nothing before writing it.
        let p = program(
            ".reg .b32 %r<3>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\n\
             st.global.u32 [%rd1], %r2;\nret;",
        );
        assert_eq!(read_before_written(&p), Some(vec![]));
        // `shfl` reads other lanes' registers: any may show.
        let p = program(
            ".reg .b32 %r<3>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, %tid.x;\n\
             shfl.sync.down.b32 %r2, %r1, 1, 31, -1;\nst.global.u32 [%rd1], %r2;\nret;",
        );
        assert_eq!(read_before_written(&p), None);
    }

    #[test]
    fn a_value_live_around_a_loop_counts_in_the_loop() {
        // %r2 accumulates around the loop while %r3 is computed in it.
        let p = program(
            ".reg .pred %p<2>; .reg .b32 %r<5>; .reg .b64 %rd<2>;",
            "ld.param.u64 %rd1, [k_p];\nmov.u32 %r1, 0;\nmov.u32 %r2, 0;\n$L:\n\
             mul.lo.s32 %r3, %r1, %r1;\nadd.s32 %r2, %r2, %r3;\nadd.s32 %r1, %r1, 1;\n\
             setp.lt.u32 %p1, %r1, 10;\n@%p1 bra $L;\nst.global.u32 [%rd1], %r2;\nret;",
        );
        assert_eq!(peak_pressure(&p), 3);
    }
}
