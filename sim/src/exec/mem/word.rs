//! Whole-warp accesses of 32-bit words planned by the fast path ([`MemPlan`]): global and shared
//! loads and stores done in one pass when every lane is aligned and in range, with the same
//! values, outcome, counts and log entries as the general path.

use super::address::{fits_step, row, row_mut, warp_addresses};
use super::load::shared_words;
use crate::exec::fast::{MemPlan, Word};
use crate::exec::step::Ctx;
use crate::exec::warp::Warp;
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::StateSpace;

impl Ctx<'_> {
    /// [`Ctx::load`] or [`Ctx::store`] of the instruction at `pc` for every lane of a full warp
    /// when its plan `p` is a whole-warp access of 32-bit scalars in global
    /// or shared memory and the access is the common case: every lane aligned, inside the block's
    /// shared memory or inside the instruction's last global allocation.
    /// Returns the latency, with the same values, outcome, counts and log entries as the general
    /// path; `None`, having done nothing, when the case does not apply (the general path then
    /// finds what else to do, or the fault).
    #[inline(always)]
    pub(in crate::exec) fn word_access(
        &mut self,
        w: &mut Warp,
        pc: u32,
        p: MemPlan,
    ) -> Option<u32> {
        let exec = u32::MAX;
        let base = row(&w.regs, p.base);
        let (addrs, shape) = warp_addresses(base, p.off);
        // Misaligned lanes fault on the general path.
        if shape.alignment(&addrs) & 3 != 0 {
            return None;
        }
        let access = WarpAccess {
            mask: exec,
            addrs,
            bytes: 4,
        };
        #[cfg(test)]
        tests::WORD_ACCESSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (run, step) = (shape.run(4), shape.step);
        let addrs = &access.addrs;
        let signed = p.m.ty.is_signed();
        match p.word {
            Word::GlobalLoad => {
                let (i, base) = self.word_allocation(pc, addrs, step)?;
                let g = self.pass.global;
                match step {
                    Some((a0, d)) if d != 0 => {
                        // Equally spaced lanes: one pass, straight into the destination.
                        let out = row_mut(&mut w.regs, p.reg);
                        let off = (a0 - base) as usize;
                        let ok = if d == 4 {
                            g.read_word_run(i, off, out)
                        } else {
                            g.read_run(i, off, 4, d as usize, out)
                        };
                        debug_assert!(ok, "bounds checked above");
                        if signed {
                            for o in out.iter_mut() {
                                *o = *o as u32 as i32 as i64 as u64;
                            }
                        }
                    }
                    _ => {
                        // Scattered lanes (the main job's pseudo-random load) or one word for
                        // the warp: as `load_from_one_allocation` reads them, into a copy first
                        // so that nothing is written when the host's buffer is not aligned
                        // (the general path then reads byte by byte).
                        let at = |l: usize| (addrs[l] - base) as usize;
                        let mut v = [0u64; WARP];
                        let ok = if signed {
                            g.read_words::<true>(i, at, &mut v)
                        } else {
                            g.read_words::<false>(i, at, &mut v)
                        };
                        if !ok {
                            return None;
                        }
                        *row_mut(&mut w.regs, p.reg) = v;
                    }
                }
                Some(self.model_global(w, pc, p.m, StateSpace::Global, &access, run, step, false))
            }
            Word::GlobalStore => {
                let (i, base) = self.word_allocation(pc, addrs, step)?;
                let (g, v) = (self.pass.global, row(&w.regs, p.reg));
                match step {
                    Some((a0, d)) if d != 0 => {
                        // Equally spaced lanes do not overlap: one pass.
                        let off = (a0 - base) as usize;
                        let ok = if d == 4 {
                            g.write_word_run(i, off, v)
                        } else {
                            g.write_run(i, off, 4, d as usize, v)
                        };
                        debug_assert!(ok, "bounds checked above");
                    }
                    _ => {
                        // Lane by lane in order: a later lane's word wins where lanes meet.
                        for (&a, &x) in addrs.iter().zip(v) {
                            let ok = g.write(i, (a - base) as usize, 4, x);
                            debug_assert!(ok, "bounds checked above");
                        }
                    }
                }
                Some(self.model_global(w, pc, p.m, StateSpace::Global, &access, run, step, true))
            }
            Word::SharedLoad => {
                let buf: &[u8] = self.shared;
                if !fits_step(addrs, step, 4, buf.len()) {
                    return None;
                }
                let out = row_mut(&mut w.regs, p.reg);
                // SAFETY: every lane's 4 bytes lie in `buf` (`fits_step`, checked above).
                unsafe {
                    if signed {
                        shared_words::<true>(buf, addrs, out);
                    } else {
                        shared_words::<false>(buf, addrs, out);
                    }
                }
                Some(self.model_shared(w, pc, p.m, &access, run, step, false))
            }
            Word::SharedStore => {
                if !fits_step(addrs, step, 4, self.shared.len()) {
                    return None;
                }
                let v = row(&w.regs, p.reg);
                let buf = &mut self.shared[..];
                if let Some(a0) = run {
                    // Consecutive words: as in `store_to_shared`.
                    let words: [[u8; 4]; WARP] =
                        std::array::from_fn(|l| (v[l] as u32).to_le_bytes());
                    buf[a0 as usize..][..WARP * 4].copy_from_slice(words.as_flattened());
                } else {
                    // Lane by lane in order: a later lane's word wins where lanes meet.
                    for (&x, &a) in v.iter().zip(addrs) {
                        let at = a as usize;
                        // SAFETY: as for the shared load above.
                        let b = unsafe { buf.get_unchecked_mut(at..at + 4) };
                        b.copy_from_slice(&(x as u32).to_le_bytes());
                    }
                }
                Some(self.model_shared(w, pc, p.m, &access, run, step, true))
            }
            Word::General => None,
        }
    }

    /// The global allocation (index, base address) of a whole-warp access of 32-bit words at
    /// `addrs` (with [`coalesce::Shape::step`] `step`) when every lane's word lies in the one the
    /// instruction at `pc` last fell in: what [`Self::one_allocation`] finds then (for equally
    /// spaced ascending lanes from the ends, for others by a compare a lane), with its prefetch of
    /// the next run. `None` otherwise (the general path looks the allocation up).
    ///
    /// [`coalesce::Shape::step`]: crate::memory::coalesce::Shape::step
    #[inline(always)]
    fn word_allocation(
        &mut self,
        pc: u32,
        addrs: &[u64; WARP],
        step: Option<(u64, u64)>,
    ) -> Option<(usize, u64)> {
        let hint = self.alloc_hints[pc as usize] as usize;
        let (base, end) = self.pass.global.try_bounds(hint)?;
        match step {
            Some((a0, d)) if d != 0 => {
                // `a0 + 31 * d` does not wrap (the step's).
                let top = (a0 + 31 * d).checked_add(4)?;
                if a0 < base || top > end {
                    return None;
                }
                if d == 4 {
                    self.prefetch_next_run(pc, hint, a0, base, 32 * 4);
                }
            }
            _ => {
                let limit = (end - base).checked_sub(4)?;
                let out = (addrs.iter()).fold(0u64, |any, &a| {
                    any | u64::from(a.wrapping_sub(base) > limit)
                });
                if out != 0 {
                    return None;
                }
            }
        }
        Some((hint, base))
    }
}

#[cfg(test)]
mod tests {
    /// Accesses that reached [`Ctx::word_access`]'s paths (most then complete there): so that
    /// the tests comparing it with the general path know it ran.
    pub(super) static WORD_ACCESSES: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(0);

    /// Whole-warp word accesses through [`Ctx::word_access`] give what the general memory path
    /// gives: the same outputs, counters, per-PC statistics and timing, on workloads of global
    /// and shared 32-bit loads and stores (runs, strides, columns, scattered lanes, guards).
    #[test]
    fn word_accesses_match_the_general_path() {
        let cases: [(&str, &[(&str, i64)]); 6] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("reduce", &[("n", 8192)]),
            ("stencil_1d", &[("n", 4096)]),
            ("smem_stride", &[]),
            ("pseudo_random", &[("n", 20000)]),
        ];
        for gpu in ["rtx3090", "h200"] {
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |p, on| p.word_general = on);
            }
        }
    }

    /// The fixture `word_mix.ptx` (loads and stores of words at addresses `(tid * a + b) & mask`
    /// and of a random table, global and shared, signed, unsigned and f32, guarded and not)
    /// gives the same results, and the same faults, through [`Ctx::word_access`] and through the
    /// general path, for edge and random patterns: runs, strides up to and past a line,
    /// broadcasts, descending lanes, lanes that meet, offsets; misaligned and out-of-range
    /// loads.
    #[test]
    fn word_accesses_match_the_general_path_on_random_patterns() {
        let dir = std::env::temp_dir().join(format!("sim-word-mix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("word_mix.ptx"),
            include_str!("../../../../tests/fixtures/word_mix.ptx"),
        )
        .unwrap();
        let edges = [
            0u32,
            1,
            2,
            3,
            4,
            7,
            8,
            16,
            31,
            32,
            33,
            64,
            255,
            u32::MAX,
            0xffff_fff0,
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            (x >> 32) as u32
        };
        let mut launches = String::new();
        for k in 0..40 {
            let mut pick = || {
                let r = next();
                if k % 2 == 0 {
                    edges[r as usize % edges.len()]
                } else {
                    r >> (r % 32)
                }
            };
            let args: [u32; 6] = std::array::from_fn(|_| pick());
            let [a, b, c, d, e, f] = args;
            launches += &format!(
                "[[launch]]\nlabel = \"l{k}\"\nkernel = \"word_mix\"\ngrid = [\"n\", 1, 1]\n\
                 block = [256, 1, 1]\nargs = [\"dst\", \"src\", \"idx\", {a}, {b}, {c}, {d}, \
                 {e}, {f}, 0]\n\n"
            );
        }
        // Faults: misaligned (2), past the shared memory and the buffer (4096, 1 << 20).
        let faults = [2u64, 4096, 1 << 20].map(|g| {
            format!(
                "[[launch]]\nlabel = \"f\"\nkernel = \"word_mix\"\ngrid = [\"n\", 1, 1]\n\
                 block = [256, 1, 1]\nargs = [\"dst\", \"src\", \"idx\", 1, 0, 1, 0, 32, 0, {g}]\n"
            )
        });
        let head = "name = \"word_mix\"\ndescription = \"test\"\nptx = \"word_mix.ptx\"\n\
                    [params]\nn = 6\n\
                    [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"n * 1024\"\n\
                    init = \"zeros\"\noutput = true\n\
                    [[buffer]]\nname = \"src\"\ntype = \"u32\"\ncount = \"4097\"\n\
                    init = \"random:7\"\n\
                    [[buffer]]\nname = \"idx\"\ntype = \"u32\"\ncount = \"n * 256\"\n\
                    init = \"random:3\"\n\n";
        let mut texts = vec![format!("{head}{launches}")];
        texts.extend(faults.iter().map(|f| format!("{head}{f}")));
        for (k, text) in texts.iter().enumerate() {
            let path = dir.join(format!("word_mix_{k}.toml"));
            std::fs::write(&path, text).unwrap();
            for gpu in ["rtx3090", "h200"] {
                let cfg = format!("{}/../configs/{gpu}.toml", env!("CARGO_MANIFEST_DIR"));
                let cfg = crate::config::GpuConfig::load(std::path::Path::new(&cfg)).unwrap();
                let w = crate::workload::Workload::resolve(path.to_str().unwrap()).unwrap();
                let opts = crate::run::Options {
                    keep_outputs: true,
                    ..Default::default()
                };
                let run = |general: bool| {
                    let mut opts = opts.clone();
                    opts.paths.word_general = general;
                    let r = crate::run::run_workload(&cfg, &w, &opts);
                    match r {
                        Ok(r) => format!("{:?}", r.launches),
                        Err(e) => format!("error: {e}"),
                    }
                };
                let before = WORD_ACCESSES.load(std::sync::atomic::Ordering::Relaxed);
                let (fast, general) = (run(false), run(true));
                assert!(WORD_ACCESSES.load(std::sync::atomic::Ordering::Relaxed) > before);
                // The patterns run, and each fault case faults.
                assert_eq!(
                    general.starts_with("error"),
                    k > 0,
                    "{gpu} {k}: {general:.300}"
                );
                assert_eq!(fast, general, "{gpu} {k}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
