//! `printf` on the device: each thread's `vprintf(fmt, args)` call formatted as the GPU would
//! print it ([`format`]), collected per SM and ordered after the launch ([`order`]), within the
//! printf FIFO's size ([`fit_fifo`]).
//!
//! The GPU writes each call into a FIFO that the host prints once the kernel completes (CUDA C++
//! Programming Guide, "Formatted Output"); the order of calls of different threads is not defined
//! there. The simulator prints in a fixed order: by block (linear block index, x fastest), then by
//! warp of the block, then by the warp's calls in the order it executed them, then by lane. A call
//! whose format string cannot be read is a memory error of the launch, as an out-of-bounds load is.

pub mod format;

use crate::exec::decode::DInst;
use crate::exec::mem::resolve;
use crate::exec::step::{lanes, Ctx};
use crate::exec::warp::{row_mut, Warp};
use crate::ptx::ast::StateSpace;

/// The printf FIFO's default size in bytes: 1 MiB (`cudaLimitPrintfFifoSize`'s default, CUDA
/// Runtime API, `cudaDeviceSetLimit`).
pub const DEFAULT_FIFO_BYTES: u64 = 1 << 20;

/// Longest format or `%s` string read, in bytes: a longer one is cut there.
const MAX_STRING: usize = 4096;

/// One thread's `printf` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Print {
    /// Linear block index (x fastest).
    pub block: u64,
    /// Warp of the block.
    pub warp: u32,
    /// The warp's issue count at the call: orders a warp's calls.
    pub call: u64,
    /// Lane of the warp.
    pub lane: u8,
    /// The text printed.
    pub text: Vec<u8>,
    /// Bytes the call takes in the FIFO: 16 (a header and the format string's address) plus its
    /// argument buffer rounded up to 8 bytes (the simulator's estimate of the record; the
    /// driver's layout is not documented).
    pub fifo_bytes: u64,
}

/// Sorts `prints` into the documented order (block, warp, call, lane).
pub fn order(prints: &mut [Print]) {
    prints.sort_by_key(|p| (p.block, p.warp, p.call, p.lane));
}

/// The calls of `prints` (in order) that the FIFO of `fifo_bytes` still holds when the host
/// reads it: the FIFO is circular, so when more is printed than fits, the oldest output is
/// overwritten (CUDA C++ Programming Guide, "Formatted Output"): the last calls that fit are
/// kept. Returns how many calls were dropped from the front.
pub fn fit_fifo(prints: &mut Vec<Print>, fifo_bytes: u64) -> usize {
    let mut total = 0u64;
    let keep = prints
        .iter()
        .rev()
        .take_while(|p| {
            total += p.fifo_bytes;
            total <= fifo_bytes
        })
        .count();
    let dropped = prints.len() - keep;
    prints.drain(..dropped);
    dropped
}

/// One lane's view of its argument buffer and of the strings it points to.
struct LaneArgs<'c, 'a, 'w> {
    ctx: &'c mut Ctx<'a>,
    warp: &'w mut Warp,
    lane: usize,
    base: u64,
}

impl format::Args for LaneArgs<'_, '_, '_> {
    fn word(&mut self, offset: usize, bytes: usize) -> Option<u64> {
        let (space, at) = resolve(StateSpace::Generic, self.base.wrapping_add(offset as u64));
        self.ctx
            .access(self.warp, self.lane, space, at, bytes, None)
    }

    fn string(&mut self, addr: u64) -> Option<Vec<u8>> {
        self.ctx.c_string(self.warp, self.lane, addr)
    }
}

impl Ctx<'_> {
    /// The NUL-terminated string at generic address `addr` for `lane` (cut at [`MAX_STRING`]
    /// bytes); `None` when a byte before its NUL cannot be read.
    fn c_string(&mut self, w: &mut Warp, lane: usize, addr: u64) -> Option<Vec<u8>> {
        let mut s = vec![];
        while s.len() < MAX_STRING {
            let (space, at) = resolve(StateSpace::Generic, addr.wrapping_add(s.len() as u64));
            match self.access(w, lane, space, at, 1, None)? as u8 {
                0 => break,
                b => s.push(b),
            }
        }
        Some(s)
    }

    /// `vprintf(fmt, args)` for the lanes of `exec`: `src[0]` the format string's generic
    /// address, `src[1]` the argument buffer's; `dst[0]` gets the number of arguments used.
    pub(crate) fn vprintf(&mut self, w: &mut Warp, inst: &DInst, pc: u32, exec: u32) {
        let g = self.pass.launch.dims.grid;
        let c = self.ctaid;
        let block = u64::from(c[0])
            + u64::from(g[0]) * (u64::from(c[1]) + u64::from(g[1]) * u64::from(c[2]));
        for l in lanes(exec) {
            let fmt_at = self.read(w, inst.src[0], l);
            let base = self.read(w, inst.src[1], l);
            let Some(fmt) = self.c_string(w, l, fmt_at) else {
                let (space, at) = resolve(StateSpace::Generic, fmt_at);
                self.note_fault(w, pc, l, "printf format read", space, at, 1);
                return;
            };
            let r = format::format(
                &fmt,
                &mut LaneArgs {
                    ctx: self,
                    warp: w,
                    lane: l,
                    base,
                },
            );
            if inst.dst[0] != crate::exec::decode::NO_REG {
                row_mut(&mut w.regs, inst.dst[0])[l] = u64::from(r.args);
            }
            self.prints.push(Print {
                block,
                warp: w.index,
                call: u64::from(w.clock),
                lane: l as u8,
                text: r.text,
                fifo_bytes: 16 + r.arg_bytes.next_multiple_of(8) as u64,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(block: u64, warp: u32, call: u64, lane: u8, bytes: u64) -> Print {
        Print {
            block,
            warp,
            call,
            lane,
            text: format!("{block}.{warp}.{call}.{lane}").into_bytes(),
            fifo_bytes: bytes,
        }
    }

    #[test]
    fn calls_are_ordered_by_block_warp_call_lane() {
        let mut v = vec![
            p(1, 0, 5, 0, 16),
            p(0, 1, 2, 3, 16),
            p(0, 1, 2, 1, 16),
            p(0, 0, 9, 31, 16),
            p(0, 1, 1, 7, 16),
        ];
        order(&mut v);
        let t: Vec<String> = v
            .iter()
            .map(|p| String::from_utf8(p.text.clone()).unwrap())
            .collect();
        assert_eq!(t, ["0.0.9.31", "0.1.1.7", "0.1.2.1", "0.1.2.3", "1.0.5.0"]);
    }

    #[test]
    fn an_overflowing_fifo_keeps_the_newest_calls() {
        let mut v: Vec<Print> = (0..10).map(|k| p(k, 0, 0, 0, 24)).collect();
        assert_eq!(fit_fifo(&mut v, 100), 6);
        assert_eq!(v.iter().map(|p| p.block).collect::<Vec<_>>(), [6, 7, 8, 9]);
        let mut v: Vec<Print> = (0..3).map(|k| p(k, 0, 0, 0, 24)).collect();
        assert_eq!(fit_fifo(&mut v, 72), 0);
        assert_eq!(v.len(), 3);
    }
}
