//! The real GPU, through cudarc (style.md practice 12: build on cudarc's safe layer and copy its
//! layering). [`Gpu`] is the device, its context and a stream; [`Program`] is a workload's PTX
//! loaded into it with its buffers and `__constant__`/`__device__` symbols initialised;
//! [`GpuBackend`] runs a plan's launches, checks nothing itself and times them with CUDA events.
//!
//! cudarc is built with `dynamic-loading` and the `cuda-12080` bindings: the workspace builds with
//! no CUDA installed, and libcuda is opened on first use; the driver must support the CUDA 12.8 API
//! (driver 570 or later). cudarc panics when libcuda is missing or lacks a symbol, so [`Gpu::open`]
//! first asks cudarc whether the library loads (`sys::is_culib_present`, no panic involved), and
//! every GPU call runs inside [`guard`], which turns a panic that slips through (a symbol missing
//! from an old driver) into an error.
//!
//! Kernels are launched with the raw `cuLaunchKernel` (cudarc's `result::launch_kernel`) because
//! the arguments come from a workload file at run time, as bytes, not as Rust values.

pub mod error;
mod program;
mod runner;
mod texture;

pub use program::Program;
pub use runner::{profile_once, GpuBackend};

use crate::report::{cuda_version, DeviceInfo};
use anyhow::{anyhow, bail, Result};
use cudarc::driver::sys::{self, CUdevice_attribute as A};
use cudarc::driver::{CudaContext, CudaStream};
use error::{describe, CudaResultExt};
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Once};

/// The message when libcuda cannot be loaded.
pub const NO_DRIVER: &str = "no CUDA driver found (libcuda could not be loaded): run `sim run` \
for predictions without a GPU";

/// The CUDA API version of the bindings (cudarc's `cuda-12080` feature).
pub const CUDA_API: &str = "12.8";

/// An open CUDA device: its primary context and the stream that every copy and launch uses.
pub struct Gpu {
    /// The primary context of the device.
    pub ctx: Arc<CudaContext>,
    /// The stream (the context's default stream).
    pub stream: Arc<CudaStream>,
    /// Device ordinal.
    pub ordinal: usize,
}

impl Gpu {
    /// Opens device `ordinal`. A missing driver or device is an error that says so in one line.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        // SAFETY: only tries to dlopen the library names cudarc would use.
        if !unsafe { sys::is_culib_present() } {
            bail!(NO_DRIVER);
        }
        guard(|| {
            let ctx = CudaContext::new(ordinal).map_err(|e| {
                let count = CudaContext::device_count().unwrap_or(0);
                if count > 0 && ordinal as i32 >= count {
                    anyhow!(
                        "no CUDA device {ordinal}: there are {count} (0 to {})",
                        count - 1
                    )
                } else {
                    anyhow!(
                        "CUDA device {ordinal} could not be opened: {}: run `sim run` for \
predictions without a GPU",
                        describe(&e)
                    )
                }
            })?;
            // One stream and no concurrent access: cudarc's per-allocation events are not needed,
            // and they would add event records to the timed launches.
            // SAFETY: every allocation below is used by `stream` only.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.default_stream();
            Ok(Gpu {
                ctx,
                stream,
                ordinal,
            })
        })
    }

    /// The device's properties.
    pub fn info(&self) -> Result<DeviceInfo> {
        guard(|| {
            let ctx = &self.ctx;
            let attr = |a: A| ctx.attribute(a).ok().filter(|&v| v >= 0);
            let (major, minor) = ctx
                .compute_capability()
                .cuda(|| "reading the compute capability".into())?;
            Ok(DeviceInfo {
                name: ctx.name().cuda(|| "reading the device name".into())?,
                compute_capability: format!("{major}.{minor}"),
                sm_count: ctx
                    .attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                    .cuda(|| "reading the SM count".into())? as u32,
                sm_clock_mhz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|k| f64::from(k) / 1e3),
                memory_clock_mhz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
                    .map(|k| f64::from(k) / 1e3),
                memory_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
                    .map(|v| v as u32),
                memory_bytes: ctx.total_mem().cuda(|| "reading the memory size".into())? as u64,
                l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).map(|v| v as u64),
                shared_per_sm_bytes: attr(
                    A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                )
                .map(|v| v as u64),
                shared_per_block_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
                    .map(|v| v as u64),
                shared_per_block_optin_bytes: attr(
                    A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                )
                .map(|v| v as u64),
                constant_bytes: attr(A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)
                    .map(|v| v as u64),
                max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
                    .map(|v| v as u32),
                max_blocks_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
                    .map(|v| v as u32),
                max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
                    .map(|v| v as u32),
                registers_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)
                    .map(|v| v as u32),
                warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE).map(|v| v as u32),
            })
        })
    }

    /// The driver's CUDA version (`cuDriverGetVersion`), as `13.0`.
    pub fn driver_version(&self) -> Result<String> {
        guard(|| {
            let mut v = 0i32;
            // SAFETY: writes one int; the driver is loaded (the context exists).
            unsafe { sys::cuDriverGetVersion(&mut v) }
                .result()
                .cuda(|| "reading the driver version".into())?;
            Ok(cuda_version(v))
        })
    }
}

thread_local! {
    /// Whether this thread is inside [`guard`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The last panic's message inside [`guard`], taken by the hook instead of being printed.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, turning a panic inside it (cudarc panics when a driver symbol is missing) into an
/// error with the panic's message and place, instead of a crash.
///
/// Global state (style.md practice 8): the first call installs, once per process, a panic hook
/// that records the message of a panic on a thread inside `guard` (so that nothing is printed
/// twice) and hands every other panic to the previous hook unchanged.
pub fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let text = info.to_string().replace('\n', " ");
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
            } else {
                previous(info);
            }
        }));
    });
    let outer = GUARDED.with(|g| g.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    match result {
        Ok(r) => r,
        Err(_) => {
            let text = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "unknown panic".into());
            Err(anyhow!(
                "the CUDA layer failed: {text} (is the driver older than the CUDA {CUDA_API} API \
that validate is built for?)"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_a_panic_into_a_one_line_error() {
        let r: Result<()> = guard(|| panic!("Missing symbol cuFoo"));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("Missing symbol cuFoo"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert_eq!(guard(|| Ok(3)).unwrap(), 3);
        // Nested guards, and errors pass through unchanged.
        assert!(guard(|| guard(|| -> Result<()> { bail!("plain error") }))
            .unwrap_err()
            .to_string()
            .contains("plain error"));
    }

    #[test]
    fn without_a_driver_open_says_so_in_one_line() {
        // On a machine with CUDA this opens the GPU instead; both are fine.
        if unsafe { sys::is_culib_present() } {
            return;
        }
        let e = Gpu::open(0).err().unwrap().to_string();
        assert_eq!(e, NO_DRIVER);
    }
}
