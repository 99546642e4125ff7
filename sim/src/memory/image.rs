//! The simulated device memory: global allocations, the constant bank, and the generic address
//! windows of shared and local memory.
//!
//! Global allocations start at [`GLOBAL_BASE`], one after another, each rounded up to [`ALIGN`]
//! (512) bytes, as the driver places a workload's buffers for `validate compare` (the CUDA C++
//! Programming Guide §5.3.2 promises at least 256: "any address of a variable residing in global
//! memory or returned by one of the memory allocation routines from the driver or runtime API is
//! always aligned to at least 256 bytes"). An access outside every allocation is a fault, as a memory
//! checker reports it. Generic addresses inside [`SHARED_WINDOW`] or [`LOCAL_WINDOW`] refer to the
//! block's shared memory or the thread's local memory, like the hardware's generic windows.
//!
//! This file holds the allocations and the image ([`MemoryImage`]); the view of the global
//! allocations that a launch's SMs read and write concurrently ([`GlobalView`]) is in `view`,
//! re-exported here.

use super::formula::Formula;
use super::host::HostBytes;
pub use super::host::{host_buffer, host_zeros};
use std::borrow::Cow;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::atomic::{AtomicBool, AtomicU8};
use std::sync::Mutex;

mod view;

use view::AllocView;
pub use view::GlobalView;

/// First global address handed out.
pub const GLOBAL_BASE: u64 = 0x7f00_0000_0000;
/// Generic-address window of shared memory (`cvta.shared` adds it).
pub const SHARED_WINDOW: u64 = 0x1000_0000;
/// Generic-address window of local memory (`cvta.local` adds it).
pub const LOCAL_WINDOW: u64 = 0x2000_0000;
/// Generic-address window of constant memory (`cvta.const` adds it).
pub const CONST_WINDOW: u64 = 0x3000_0000;
/// Size of each window in bytes.
pub const WINDOW_BYTES: u64 = 0x0100_0000;

/// Global allocation alignment in bytes: \[measured\] on an H100 (`validate compare`, whose
/// cudarc allocates with `cuMemAllocAsync` from the default pool;
/// `validate/measurements/h200/ubench/h100_2026-12-08b/places.json`): a workload's buffers lie one
/// after another, each rounded up to 512 bytes (a 4-byte buffer at 0x302800000, the next at
/// 0x302800200; 1 KiB at 0x303000000, 128 B at 0x303000400, 1 KiB at 0x303000600). Where a
/// buffer's lines start decides which L2 atomic units they meet (suite37's 256-bin histograms).
pub const ALIGN: u64 = 512;

/// One global allocation (a workload buffer or a `.global` variable).
#[derive(Debug, Clone)]
pub struct Allocation {
    /// Buffer or variable name, for reports.
    pub name: String,
    /// Device address of the first byte.
    pub base: u64,
    /// Contents, but zeros (untouched) while [`Allocation::pending`] holds a formula.
    data: HostBytes,
    /// The formula of the contents until the first write ([`MemoryImage::alloc_formula`]).
    pending: Pending,
}

impl Allocation {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.base + self.data.len() as u64
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Its contents: borrowed, or made from its formula when no kernel has written it.
    pub fn contents(&self) -> Cow<'_, [u8]> {
        match self.pending.formula() {
            Some(f) => Cow::Owned(f.contents(self.data.len())),
            None => Cow::Borrowed(&*self.data),
        }
    }

    /// Its contents to change (written from its formula first, if it still has one).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        if let Some(f) = self.pending.formula() {
            f.fill(&mut self.data, true);
            self.pending = Pending::default();
        }
        &mut self.data
    }
}

/// The formula an allocation's contents still follow, if no kernel has written it: readers
/// compute bytes from it; the first writer writes it into the bytes (under the lock, once) and
/// clears the flag, after which everyone uses the bytes.
#[derive(Debug, Default)]
struct Pending {
    formula: Option<Formula>,
    /// Still the formula (release-stored false once the bytes hold it).
    on: AtomicBool,
    /// Taken by the writer that writes the formula into the bytes.
    lock: Mutex<()>,
}

impl Pending {
    fn new(formula: Formula) -> Self {
        Pending {
            formula: Some(formula),
            on: AtomicBool::new(true),
            lock: Mutex::new(()),
        }
    }

    /// The formula, while the bytes do not hold it.
    #[inline(always)]
    fn formula(&self) -> Option<Formula> {
        self.formula.filter(|_| self.on.load(Acquire))
    }

    /// Writes the formula into `data` (the allocation's bytes) unless done, so that a write can
    /// go to the bytes. No reader reads the bytes while the flag is on (they compute them), and
    /// writers wait here, so the bytes are this thread's alone until the flag is cleared.
    #[cold]
    fn settle(&self, data: &[AtomicU8]) {
        let Some(f) = self.formula else { return };
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.on.load(Acquire) {
            // SAFETY: `data` is a live view of `data.len()` bytes; `AtomicU8` is `UnsafeCell`
            // of `u8`, so writing through its pointer is allowed, and nothing else reads or
            // writes these bytes until `on` is cleared (Release, after the writes).
            let bytes =
                unsafe { std::slice::from_raw_parts_mut(data.as_ptr() as *mut u8, data.len()) };
            // On this thread alone: a pool thread that waited for parts of it might run a
            // block that writes this buffer, and wait on the lock it holds.
            f.fill(bytes, false);
            self.on.store(false, Release);
        }
    }
}

impl Clone for Pending {
    fn clone(&self) -> Self {
        match self.formula() {
            Some(f) => Pending::new(f),
            None => Pending::default(),
        }
    }
}

/// Device memory contents.
#[derive(Debug, Clone)]
pub struct MemoryImage {
    /// Global allocations in address order.
    pub allocs: Vec<Allocation>,
    /// The constant bank (`.const` variables), `size_bytes` of the config long.
    pub constant: Vec<u8>,
    next: u64,
}

impl MemoryImage {
    /// An empty image with a zeroed constant bank of `const_bytes`.
    pub fn new(const_bytes: usize) -> Self {
        MemoryImage {
            allocs: vec![],
            constant: vec![0; const_bytes],
            next: GLOBAL_BASE,
        }
    }

    /// Allocates `data` in global memory, 256-byte aligned; returns its device address.
    pub fn alloc(&mut self, name: &str, data: Vec<u8>) -> u64 {
        self.push(name, HostBytes::Vec(data), Pending::default())
    }

    /// Allocates `bytes` of zeros in global memory (`HostBytes::zeros`: host pages untouched
    /// until a kernel writes them); returns its device address.
    ///
    /// # Errors
    /// A readable message when the host cannot hold `bytes` ([`host_zeros`]).
    pub fn alloc_zeros(&mut self, name: &str, bytes: usize) -> Result<u64, String> {
        super::host::check_available_after(bytes, self.mapped_bytes())?;
        let data = HostBytes::zeros(bytes)?;
        Ok(self.push(name, data, Pending::default()))
    }

    /// Allocates `bytes` (whole elements) whose contents are `formula`, kept as the formula until
    /// a kernel first writes the allocation ([`super::formula`]); returns its device address.
    /// The host buffer is `HostBytes::zeros`, untouched until then.
    ///
    /// # Errors
    /// A readable message when the host cannot hold `bytes` ([`host_zeros`]).
    pub fn alloc_formula(
        &mut self,
        name: &str,
        formula: Formula,
        bytes: usize,
    ) -> Result<u64, String> {
        super::host::check_available_after(bytes, self.mapped_bytes())?;
        let data = HostBytes::zeros(bytes)?;
        Ok(self.push(name, data, Pending::new(formula)))
    }

    /// Bytes of the allocations whose host pages are mapped but not yet touched: what the
    /// system's available memory does not count yet.
    pub fn mapped_bytes(&self) -> u64 {
        self.allocs.iter().map(|a| a.data.mapped_bytes()).sum()
    }

    /// Host bytes of every allocation and of the constant bank.
    pub fn host_bytes(&self) -> u64 {
        let allocs: u64 = self.allocs.iter().map(|a| a.data.len() as u64).sum();
        allocs + self.constant.len() as u64
    }

    /// What the image leaves of `budget`: [`super::Budget::left`] with its allocations.
    pub fn memory_left(&self, budget: &super::Budget) -> Option<(u64, super::Limit)> {
        budget.left(self.host_bytes(), self.mapped_bytes())
    }

    fn push(&mut self, name: &str, data: HostBytes, pending: Pending) -> u64 {
        let base = self.next;
        self.next = (base + (data.len() as u64).max(1)).div_ceil(ALIGN) * ALIGN;
        self.allocs.push(Allocation {
            name: name.to_string(),
            base,
            data,
            pending,
        });
        base
    }

    /// Index of the allocation holding `[addr, addr+len)` entirely.
    pub fn find(&self, addr: u64, len: u64) -> Option<usize> {
        find_span(&self.allocs, |a| (a.base, a.end()), addr, len)
    }

    /// The allocation by name.
    pub fn by_name(&self, name: &str) -> Option<&Allocation> {
        self.allocs.iter().find(|a| a.name == name)
    }

    /// Describes where `addr` lies relative to the nearest allocation, for fault reports.
    pub fn nearest(&self, addr: u64) -> String {
        nearest(
            self.allocs
                .iter()
                .map(|a| (a.name.as_str(), a.base, a.data.len() as u64)),
            addr,
        )
    }

    /// A view of global memory that threads executing blocks on different SMs share, and the
    /// (read-only) constant bank. Bytes are accessed through relaxed atomics, which compile to
    /// plain loads and stores: a kernel whose blocks race on a word (undefined in CUDA without
    /// atomics) then reads one of the values written, never undefined behaviour of the simulator.
    pub fn view(&mut self) -> (GlobalView<'_>, &[u8]) {
        let allocs = self
            .allocs
            .iter_mut()
            .map(|a| AllocView {
                name: a.name.as_str(),
                base: a.base,
                // SAFETY: `AtomicU8` has the size, alignment and bit validity of `u8`, and the
                // unique borrow of the bytes is given up for the view's lifetime (what
                // `AtomicU8::from_mut_slice` does, which is not yet stable).
                data: unsafe { &*(&mut *a.data as *mut [u8] as *const [AtomicU8]) },
                pending: a.pending.formula().is_some().then_some(&a.pending),
            })
            .collect();
        (GlobalView { allocs }, &self.constant)
    }
}

/// Where `addr` lies relative to the nearest of `allocs` (name, base, bytes).
fn nearest<'a>(allocs: impl Iterator<Item = (&'a str, u64, u64)>, addr: u64) -> String {
    let Some((name, base, len)) = allocs.min_by_key(|&(_, base, len)| {
        if addr < base {
            base - addr
        } else {
            addr.saturating_sub(base + len - 1)
        }
    }) else {
        return "no buffers are allocated".into();
    };
    let end = base + len;
    let rel = if addr < base {
        format!("{} bytes before", base - addr)
    } else if addr >= end {
        format!("{} bytes after the end of", addr - end)
    } else {
        format!("{} bytes into", addr - base)
    };
    format!("{rel} buffer `{name}` [{base:#x}, {end:#x}) of {len} bytes")
}

/// Reads `n` (1..=8) little-endian bytes of `buf` at `off`; `None` when out of range.
#[inline]
pub fn read_le(buf: &[u8], off: usize, n: usize) -> Option<u64> {
    // Fixed-size reads compile to one load; a variable-length copy would call memcpy and stall
    // on store forwarding (the interpreter's hottest line before this).
    let end = off.checked_add(n)?;
    let b = buf.get(off..end)?;
    Some(match n {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
        4 => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => {
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(b);
            u64::from_le_bytes(v)
        }
    })
}

/// Writes the low `n` (1..=8) bytes of `v` into `buf` at `off`; `false` when out of range.
#[inline]
pub fn write_le(buf: &mut [u8], off: usize, n: usize, v: u64) -> bool {
    match off.checked_add(n).and_then(|end| buf.get_mut(off..end)) {
        Some(b) => {
            match n {
                1 => b[0] = v as u8,
                2 => b.copy_from_slice(&(v as u16).to_le_bytes()),
                4 => b.copy_from_slice(&(v as u32).to_le_bytes()),
                8 => b.copy_from_slice(&v.to_le_bytes()),
                _ => b.copy_from_slice(&v.to_le_bytes()[..n]),
            }
            true
        }
        None => false,
    }
}

/// The generic-address window of a state space (0 for global: generic = global addresses).
pub fn window(space: crate::ptx::ast::StateSpace) -> u64 {
    use crate::ptx::ast::StateSpace as S;
    match space {
        S::Shared => SHARED_WINDOW,
        S::Local => LOCAL_WINDOW,
        S::Const => CONST_WINDOW,
        _ => 0,
    }
}

/// Index of the allocation among `allocs` (sorted by base, `span` giving each one's first and
/// one-past-last address) that holds `[addr, addr + len)` entirely; `None` also when the end
/// overflows.
#[inline]
fn find_span<T>(
    allocs: &[T],
    span: impl Fn(&T) -> (u64, u64),
    addr: u64,
    len: u64,
) -> Option<usize> {
    let i = allocs
        .partition_point(|a| span(a).0 <= addr)
        .checked_sub(1)?;
    (addr.checked_add(len)? <= span(&allocs[i]).1).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_follow_each_other_512_byte_aligned_and_are_found() {
        // As the driver placed suite37's histograms (h100_2026-12-08b/places.json): 1 KiB at
        // 0x303000000, 128 B at 0x303000400, 1 KiB at 0x303000600.
        let mut m = MemoryImage::new(16);
        let a = m.alloc("a", vec![0; 10]);
        let b = m.alloc("b", vec![0; 300]);
        assert_eq!(a % 512, 0);
        assert_eq!(b, a + 512);
        let (c, d, e) = (
            m.alloc("c", vec![0; 1024]),
            m.alloc("d", vec![0; 128]),
            m.alloc("e", vec![0; 1024]),
        );
        assert_eq!((d - c, e - c), (0x400, 0x600));
        assert_eq!(m.find(b + 296, 4), Some(1));
        assert_eq!(m.find(b + 297, 4), None);
        assert_eq!(m.find(a + 12, 4), None);
        assert!(m
            .nearest(b + 300)
            .starts_with("0 bytes after the end of buffer `b`"));
    }

    #[test]
    fn large_buffers_of_zeros_and_formulas_hold_their_bytes_through_writes_and_clones() {
        // Above HUGE_PAGE_MIN: pages mapped for them (on Linux).
        let big = 2 * super::super::host::HUGE_PAGE_MIN;
        let mut m = MemoryImage::new(16);
        m.alloc_zeros("z", big).unwrap();
        m.alloc_formula("f", Formula::IotaInt { bytes: 8 }, big)
            .unwrap();
        {
            let (g, _) = m.view();
            assert_eq!(g.read(0, big - 8, 8), Some(0));
            assert!(g.write(0, big - 8, 8, 42));
            assert!(!g.write(0, big - 4, 8, 42));
            assert_eq!(g.read(1, big - 8, 8), Some((big / 8 - 1) as u64));
            assert!(g.write(1, 0, 8, 7));
            assert_eq!(g.read(1, big - 8, 8), Some((big / 8 - 1) as u64));
        }
        let copy = m.clone();
        drop(m);
        let z = copy.allocs[0].contents();
        assert_eq!(z.len(), big);
        assert!(z[..big - 8].iter().all(|&b| b == 0));
        assert_eq!(z[big - 8], 42);
        let f = copy.allocs[1].contents();
        assert_eq!(f[..8], 7u64.to_le_bytes());
        assert_eq!(f[8..16], 1u64.to_le_bytes());
    }

    #[test]
    fn little_endian_helpers() {
        let mut buf = vec![0u8; 8];
        assert!(write_le(&mut buf, 4, 4, 0xdead_beef));
        assert_eq!(read_le(&buf, 4, 4), Some(0xdead_beef));
        assert_eq!(read_le(&buf, 6, 4), None);
        assert!(!write_le(&mut buf, usize::MAX, 4, 0));
    }
}
