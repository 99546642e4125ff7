//! Host memory for simulated buffers: buffers are simulated byte for byte in host memory, so the
//! host's free memory bounds a workload's size (a readable error beyond it), large buffers ask for
//! transparent huge pages, and large buffers of zeros are pages mapped for them.

/// The host memory holding one allocation's bytes: a vector, or for a large buffer of zeros
/// pages mapped for it alone, zero until written and returned to the system when dropped. A
/// buffer of zeros from the allocator is zeroed by a pass over it unless the allocator knows
/// its pages fresh, which it does not for memory an earlier run gave back (a process that runs
/// several workloads: about 3% of read_stride's time in the benchmark, `perf`).
pub(super) enum HostBytes {
    Vec(Vec<u8>),
    /// `len` bytes at `ptr` that `mmap` gave (anonymous, private: zero-filled).
    #[cfg(target_os = "linux")]
    Mapped {
        ptr: std::ptr::NonNull<u8>,
        len: usize,
    },
}

// SAFETY: `Mapped` owns its pages as a `Vec` owns its buffer; nothing else refers to them.
unsafe impl Send for HostBytes {}
// SAFETY: shared access is through `&[u8]` only, as for a `Vec`.
unsafe impl Sync for HostBytes {}

impl HostBytes {
    /// `bytes` zeros: pages mapped for them when they are [`HUGE_PAGE_MIN`] or more (on
    /// Linux), else [`host_zeros`].
    ///
    /// # Errors
    /// As [`host_zeros`].
    pub(super) fn zeros(bytes: usize) -> Result<Self, String> {
        #[cfg(target_os = "linux")]
        if bytes >= HUGE_PAGE_MIN {
            check_available(bytes)?;
            // SAFETY: a fresh private anonymous mapping (no address asked for, no file): the
            // kernel picks the pages, zero-filled, and they are this value's until `drop`.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    bytes,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(not_allocated(bytes));
            }
            advise_huge_pages(p as *mut u8, bytes);
            let ptr = std::ptr::NonNull::new(p as *mut u8).ok_or_else(|| not_allocated(bytes))?;
            return Ok(HostBytes::Mapped { ptr, len: bytes });
        }
        host_zeros(bytes).map(HostBytes::Vec)
    }
}

impl HostBytes {
    /// Bytes of mapped pages (untouched until written; [`HostBytes::zeros`]), 0 for a `Vec`.
    pub(super) fn mapped_bytes(&self) -> u64 {
        match self {
            HostBytes::Vec(_) => 0,
            #[cfg(target_os = "linux")]
            HostBytes::Mapped { len, .. } => *len as u64,
        }
    }
}

impl std::ops::Deref for HostBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            HostBytes::Vec(v) => v,
            // SAFETY: `len` mapped, readable bytes (zero or written since), owned by `self`.
            #[cfg(target_os = "linux")]
            HostBytes::Mapped { ptr, len } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl std::ops::DerefMut for HostBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            HostBytes::Vec(v) => v,
            // SAFETY: as in `deref`, and `&mut self` makes the access unique.
            #[cfg(target_os = "linux")]
            HostBytes::Mapped { ptr, len } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), *len)
            },
        }
    }
}

impl Drop for HostBytes {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let HostBytes::Mapped { ptr, len } = *self {
            // SAFETY: the mapping `zeros` made, unmapped once (nothing refers to it after).
            unsafe { libc::munmap(ptr.as_ptr() as *mut libc::c_void, len) };
        }
    }
}

impl Clone for HostBytes {
    fn clone(&self) -> Self {
        HostBytes::Vec(self.to_vec())
    }
}

impl std::fmt::Debug for HostBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.len())
    }
}

/// Asks the host to bring the 64-byte line holding `p` into its caches (x86-64's `prefetcht0`;
/// nothing elsewhere). Only a hint: it reads nothing architecturally, cannot fault whatever `p`
/// is, and changes no result.
#[inline(always)]
pub(crate) fn prefetch_line(p: *const u8) {
    // SAFETY: `prefetcht0` reads nothing architecturally and cannot fault.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// An empty host buffer with room for `bytes` of simulated device memory, or a readable error
/// when the host cannot hold them: more than the memory the system says is available (Linux's
/// `MemAvailable`, /proc/meminfo), or an allocation that fails. Buffers are simulated in host
/// memory byte for byte, so this is what bounds a workload's size.
pub fn host_buffer(bytes: usize) -> Result<Vec<u8>, String> {
    check_available(bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(bytes)
        .map_err(|_| not_allocated(bytes))?;
    advise_huge_pages(v.as_mut_ptr(), bytes);
    Ok(v)
}

/// As [`host_buffer`], filled with `bytes` zeros. The zeros come from the allocator
/// (`alloc_zeroed`: fresh pages from the system are zero already), not from a pass over the
/// buffer, so a large buffer costs nothing until the kernel touches it.
pub fn host_zeros(bytes: usize) -> Result<Vec<u8>, String> {
    check_available(bytes)?;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(bytes).map_err(|_| not_allocated(bytes))?;
    // SAFETY: `layout` has a non-zero size; a non-null pointer from `alloc_zeroed` with it is a
    // block of `bytes` initialised (zero) bytes that the global allocator gave, which is what
    // `Vec::from_raw_parts` takes with length and capacity `bytes` (u8 has alignment 1).
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        if p.is_null() {
            return Err(not_allocated(bytes));
        }
        advise_huge_pages(p, bytes);
        Ok(Vec::from_raw_parts(p, bytes, bytes))
    }
}

/// Buffers at least this large (bytes) are backed by transparent huge pages where the host allows
/// it: one 2 MiB fault instead of 512 4 KiB ones when a kernel first touches them.
pub(super) const HUGE_PAGE_MIN: usize = 4 << 20;

/// Asks Linux to back `[p, p + bytes)` with transparent huge pages (`madvise(MADV_HUGEPAGE)`,
/// which hosts whose THP mode is `madvise` need). Only advice: a refusal changes nothing but
/// speed, so its result is ignored. The main job's 51 MB buffers took about 25,000 page faults.
fn advise_huge_pages(p: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE_MIN {
        const PAGE: usize = 4096;
        let start = (p as usize).next_multiple_of(PAGE);
        let len = (p as usize + bytes - start) / PAGE * PAGE;
        // SAFETY: `[start, start + len)` lies inside the allocation of `bytes` at `p`, whole
        // pages only; MADV_HUGEPAGE changes how the kernel backs them, not their contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, bytes);
}

fn gib(b: u64) -> f64 {
    b as f64 / f64::from(1u32 << 30)
}

/// An error when `bytes` more, after `earlier` bytes of mapped buffers whose pages are not yet
/// touched (so not yet counted in the memory the system says is available), are more than the
/// host's available memory: two 10 GiB buffers passed one at a time on a 16 GiB host (issue 40).
pub(super) fn check_available_after(bytes: usize, earlier: u64) -> Result<(), String> {
    if earlier == 0 {
        return check_available(bytes);
    }
    match available_host_bytes() {
        Some(avail) => check_total(bytes as u64, earlier, avail),
        None => Ok(()),
    }
}

/// [`check_available_after`] with the available bytes given.
fn check_total(bytes: u64, earlier: u64, avail: u64) -> Result<(), String> {
    let total = bytes.saturating_add(earlier);
    if total > avail {
        return Err(format!(
            "needs {:.1} GiB of host memory to simulate, {:.1} GiB with the buffers before it, \
and {:.1} GiB is available: use smaller sizes",
            gib(bytes),
            gib(total),
            gib(avail)
        ));
    }
    Ok(())
}

/// An error when `bytes` is more than the host's available memory.
/// Checks that `bytes` of host memory, which a simulation is about to need besides its
/// buffers, are available (as [`host_buffer`] checks a buffer's); the error says how much is.
pub fn check_host_bytes(bytes: u64) -> Result<(), String> {
    check_available(usize::try_from(bytes).unwrap_or(usize::MAX))
}

fn check_available(bytes: usize) -> Result<(), String> {
    if let Some(avail) = available_host_bytes() {
        if bytes as u64 > avail {
            return Err(format!(
                "needs {:.1} GiB of host memory to simulate, and {:.1} GiB is available: use a smaller size",
                gib(bytes as u64),
                gib(avail)
            ));
        }
    }
    Ok(())
}

/// What bounds the host memory a run may take ([`Budget::left`]), for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `--max-memory` (its bytes).
    Flag(u64),
    /// The memory the system says is available (Linux's `MemAvailable`).
    Available,
    /// The process's address-space limit (`RLIMIT_AS`, `ulimit -v`, `prlimit --as`).
    AddressSpace,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Flag(b) => write!(f, "--max-memory {}", size_text(*b)),
            Limit::Available => write!(f, "3/4 of the host's available memory"),
            Limit::AddressSpace => write!(f, "3/4 of what the address-space limit leaves"),
        }
    }
}

/// The message of something a run would need, `need` bytes of host memory, beyond what the
/// budget leaves (`left`, [`Budget::left`]): `{what} needs 2.0 GiB of host memory to simulate;
/// 1.0 GiB is left of --max-memory 1.5 GiB`.
pub fn over_budget(what: &str, need: u64, left: (u64, Limit)) -> String {
    let (bytes, limit) = left;
    let hint = match limit {
        Limit::Flag(_) => "",
        _ => " (--max-memory SIZE sets the budget)",
    };
    format!(
        "{what} needs {} of host memory to simulate; {} is left of {limit}{hint}",
        size_text(need),
        size_text(bytes)
    )
}

/// The host memory budget of a run: `--max-memory` if given, and what the host has. A run
/// checks against it, before allocating, what it is about to need (a buffer, a launch's
/// per-instruction state and schedule, the trace of a batch of blocks): an error naming the
/// input rather than an allocation that aborts or a host that runs out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// `--max-memory` in bytes.
    pub max: Option<u64>,
}

impl Budget {
    /// The bytes a run may still take, with what bounds them, given `held` bytes of buffers
    /// already allocated, `untouched` of them mapped pages not yet counted by the system: the
    /// least of `--max-memory` less `held`, 3/4 of the available memory less `untouched`, and
    /// 3/4 of what the address-space limit leaves (the rest for what is not estimated: the
    /// PTX, caches, threads). `None` when nothing bounds it.
    pub fn left(&self, held: u64, untouched: u64) -> Option<(u64, Limit)> {
        let three_quarters = |b: u64| b / 4 * 3;
        [
            self.max.map(|m| (m.saturating_sub(held), Limit::Flag(m))),
            available_host_bytes().map(|a| {
                (
                    three_quarters(a.saturating_sub(untouched)),
                    Limit::Available,
                )
            }),
            address_space_left().map(|a| (three_quarters(a), Limit::AddressSpace)),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|&(b, _)| b)
    }
}

/// What the address-space limit leaves the process: `RLIMIT_AS` less its mapped size
/// (`VmSize`, /proc/self/status); `None` without a limit.
fn address_space_left() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into `r`, a valid rlimit.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0
            || r.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every Linux target
        let limit = r.rlim_cur as u64;
        Some(limit.saturating_sub(kib.saturating_mul(1024)))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// `1.5 GiB`, `12.0 MiB`, `3.5 KiB`, `100 bytes`: a size for messages.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", gib(b)),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// Parses a size as `--max-memory` takes it: bytes, or a number with `K`, `M`, `G` or `T`
/// (powers of 1024, `KiB`/`KB` alike), e.g. `4G`, `512MiB`, `1.5G`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "`{text}`: expected a size such as 4G, 512M or 1000000"
            ))
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{text}`: expected a size such as 4G, 512M or 1000000"))?;
    let bytes = v * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}`: a size from 1 byte to 16 EiB"));
    }
    Ok(bytes as u64)
}

fn not_allocated(bytes: usize) -> String {
    format!(
        "needs {:.1} GiB of host memory to simulate, which could not be allocated: use a smaller size",
        gib(bytes as u64)
    )
}

/// `MemAvailable` of /proc/meminfo in bytes, where there is one.
fn available_host_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        for bad in ["", "G", "4X", "-1G", "0", "1e30T", "nan"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        let b = Budget { max: Some(1 << 30) };
        let (left, limit) = b.left(1 << 29, 0).unwrap();
        assert!(left <= 1 << 29);
        if left == 1 << 29 {
            assert_eq!(limit, Limit::Flag(1 << 30));
        }
    }

    /// Issue 40: each of two 10 GiB buffers fits a 16 GiB host; both do not.
    #[test]
    fn buffers_are_checked_together_against_available_memory() {
        let gib = 1u64 << 30;
        assert!(check_total(10 * gib, 0, 16 * gib).is_ok());
        let e = check_total(10 * gib, 10 * gib, 16 * gib).unwrap_err();
        assert!(
            e.starts_with("needs 10.0 GiB of host memory to simulate, 20.0 GiB with the buffers before it, and 16.0 GiB is available"),
            "{e}"
        );
        assert!(check_total(u64::MAX, u64::MAX, 16 * gib).is_err());
    }
}
