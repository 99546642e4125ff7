//! The calibration benchmarks on the GPU: the kernels of `validate/calibrate/*.cu`, whose NVRTC PTX
//! is embedded here (`include_str!`, stamped and checked like the bundled kernels'), loaded through
//! cudarc and launched with its launch builder. Each benchmark is reduced to the numbers of a
//! [`Raw`] record; [`super::analyze`] does the rest.
//!
//! Sizes follow the device: the DRAM buffers are 16 x its L2 (at least 256 MiB, at most 2 GiB or a
//! quarter of the free memory), the L2 working set a quarter of its L2, the grids a multiple of its
//! SM count.

use super::{fit, Chase, Raw, Transfer};
use crate::gpu::error::CudaResultExt;
use crate::gpu::{guard, Gpu};
use crate::report::DeviceInfo;
use anyhow::{bail, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;
use std::time::Instant;

/// NVRTC's PTX of `validate/calibrate/latency.cu`: global and shared pointer chases.
pub const LATENCY_PTX: &str = include_str!("../../calibrate/ptx/latency.ptx");
/// NVRTC's PTX of `validate/calibrate/constant.cu`: constant chase, distinct addresses.
pub const CONSTANT_PTX: &str = include_str!("../../calibrate/ptx/constant.ptx");
/// NVRTC's PTX of `validate/calibrate/shared.cu`: bank conflicts, shared bandwidth.
pub const SHARED_PTX: &str = include_str!("../../calibrate/ptx/shared.ptx");
/// NVRTC's PTX of `validate/calibrate/bandwidth.cu`: DRAM and L2 bandwidth, clock, empty kernel.
pub const BANDWIDTH_PTX: &str = include_str!("../../calibrate/ptx/bandwidth.ptx");

/// Every embedded PTX with the source it was generated from.
pub const PTX: &[(&str, &str)] = &[
    ("latency.cu", LATENCY_PTX),
    ("constant.cu", CONSTANT_PTX),
    ("shared.cu", SHARED_PTX),
    ("bandwidth.cu", BANDWIDTH_PTX),
];

/// Working sets of the constant chase, bytes: fine around the 2 KiB of the smallest level.
pub const CONSTANT_SWEEP: &[u32] = &[
    512, 1024, 1536, 1792, 2048, 2304, 2560, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    40960, 49152, 57344, 65536,
];
/// Bytes between two elements of the constant chains: the smallest level's line.
pub const CONSTANT_STRIDE: u32 = 64;
/// Distinct addresses per warp of constant-addresses.
pub const DISTINCT: &[u32] = &[1, 2, 4, 8, 16, 32];
/// Warps per block of constant-addresses and bank-conflicts.
pub const WARPS: u32 = 16;

const SPIN_SHORT: u64 = 1_000_000;
const SPIN_LONG: u64 = 21_000_000;

/// The `__constant__` chain (16384 words) for a working set of `bytes`: `bytes / stride`
/// elements `stride` bytes apart, element i holding the byte offset of element (i + 1) mod n.
pub fn constant_chain(bytes: u32, stride: u32) -> Vec<u32> {
    let mut words = vec![0u32; 16384];
    let n = (bytes / stride).max(1);
    for i in 0..n {
        words[(i * stride / 4) as usize] = ((i + 1) % n) * stride;
    }
    words
}

/// What to run: the benchmark ids `selected` accepts (`clock` always runs).
pub struct Options<'a> {
    /// Whether the benchmark `id` runs.
    pub selected: &'a dyn Fn(&str) -> bool,
    /// Called with one line per finished benchmark (progress, for stderr).
    pub log: &'a mut dyn FnMut(&str),
}

struct Runner<'g> {
    gpu: &'g Gpu,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    latency: Arc<CudaModule>,
    constant: Arc<CudaModule>,
    shared: Arc<CudaModule>,
    bandwidth: Arc<CudaModule>,
}

/// Launches `$f` on `$grid` blocks of `$block` threads with the arguments after `;`.
macro_rules! launch {
    ($r:expr, $f:expr, $grid:expr, $block:expr; $($arg:expr),*) => {{
        let mut builder = $r.stream.launch_builder(&$f);
        $( builder.arg($arg); )*
        let cfg = LaunchConfig {
            grid_dim: ($grid, 1, 1),
            block_dim: ($block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the kernel's parameters in validate/calibrate/*.cu in
        // number, order and size; the pointers are live allocations of this context.
        unsafe { builder.launch(cfg) }
            .map(|_| ())
            .cuda(|| format!("launching {}", stringify!($f)))
    }};
}

fn ptr<T>(slice: &CudaSlice<T>, stream: &Arc<CudaStream>) -> u64 {
    let (p, _sync) = slice.device_ptr(stream);
    p
}

impl<'g> Runner<'g> {
    fn new(gpu: &'g Gpu, info: &DeviceInfo) -> Result<Self> {
        let load = |name: &str, ptx: &str| {
            gpu.ctx
                .load_module(Ptx::from_src(ptx))
                .cuda(|| format!("loading the calibration PTX {name}"))
        };
        Ok(Runner {
            gpu,
            stream: gpu.stream.clone(),
            info: info.clone(),
            latency: load("latency.ptx", LATENCY_PTX)?,
            constant: load("constant.ptx", CONSTANT_PTX)?,
            shared: load("shared.ptx", SHARED_PTX)?,
            bandwidth: load("bandwidth.ptx", BANDWIDTH_PTX)?,
        })
    }

    fn func(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction> {
        module
            .load_function(name)
            .cuda(|| format!("looking up the calibration kernel `{name}`"))
    }

    fn sync(&self, what: &str) -> Result<()> {
        self.stream.synchronize().cuda(|| format!("running {what}"))
    }

    fn read(&self, out: &CudaSlice<u64>, what: &str) -> Result<Vec<u64>> {
        self.sync(what)?;
        self.stream
            .clone_dtoh(out)
            .cuda(|| format!("reading the results of {what}"))
    }

    fn sms(&self) -> u32 {
        self.info.sm_count.max(1)
    }

    /// Milliseconds of each of `reps` runs of `f`, each between two CUDA events, after `warm`
    /// untimed runs.
    fn timed(
        &self,
        what: &str,
        warm: u32,
        reps: u32,
        mut f: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let event = || {
            self.gpu
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .cuda(|| "creating a CUDA event".into())
        };
        let (start, end) = (event()?, event()?);
        for _ in 0..warm {
            f()?;
        }
        self.sync(what)?;
        let mut ms = vec![];
        for _ in 0..reps {
            start
                .record(&self.stream)
                .cuda(|| format!("timing {what}"))?;
            f()?;
            end.record(&self.stream).cuda(|| format!("timing {what}"))?;
            end.synchronize().cuda(|| format!("running {what}"))?;
            ms.push(f64::from(
                start.elapsed_ms(&end).cuda(|| format!("timing {what}"))?,
            ));
        }
        Ok(ms)
    }

    /// Milliseconds of each of `reps` runs of `f`, each between two CUDA events queued behind a
    /// spin kernel of `cycles` (one warp): the host queues the start event, `f`'s work and the end
    /// event while the GPU spins, so the span between the events is the GPU's alone.
    fn timed_behind(
        &self,
        spin: &CudaFunction,
        out: &mut CudaSlice<u64>,
        cycles: u64,
        reps: u32,
        mut f: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let event = || {
            self.gpu
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .cuda(|| "creating a CUDA event".into())
        };
        let (start, end) = (event()?, event()?);
        let mut ms = vec![];
        for _ in 0..reps {
            launch!(self, *spin, 1, 32; &cycles, &mut *out)?;
            start
                .record(&self.stream)
                .cuda(|| "timing the launches".into())?;
            f()?;
            end.record(&self.stream)
                .cuda(|| "timing the launches".into())?;
            end.synchronize().cuda(|| "running the launches".into())?;
            ms.push(f64::from(
                start
                    .elapsed_ms(&end)
                    .cuda(|| "timing the launches".into())?,
            ));
        }
        Ok(ms)
    }

    /// The SM clock in MHz: the spin kernel for SPIN_SHORT and SPIN_LONG cycles, median of 3.
    fn clock(&self, warm_up: bool) -> Result<f64> {
        let spin = self.func(&self.bandwidth, "spin")?;
        let grid = self.sms();
        let mut out = self
            .stream
            .alloc_zeros::<u64>(grid as usize)
            .cuda(|| "allocating the clock results".into())?;
        if warm_up {
            // Bring the clock up from idle (about 50 ms at full clock, longer from idle).
            let cycles = 100_000_000u64;
            launch!(self, spin, grid, 32; &cycles, &mut out)?;
            self.sync("the clock warm-up")?;
        }
        let mut mhz = vec![];
        for _ in 0..3 {
            let mut time = |cycles: u64| -> Result<f64> {
                let ms = self.timed(
                    "the spin kernel",
                    0,
                    1,
                    || launch!(self, spin, grid, 32; &cycles, &mut out),
                )?;
                Ok(ms[0])
            };
            let short = time(SPIN_SHORT)?;
            let long = time(SPIN_LONG)?;
            if let Some(m) = fit::clock_mhz(SPIN_SHORT as f64, short, SPIN_LONG as f64, long) {
                mhz.push(m);
            }
        }
        match fit::median(&mhz) {
            Some(m) => Ok(m),
            None => bail!("the spin kernel's event times did not grow with its cycles"),
        }
    }

    /// Writes a chain of `n` pointers `stride_words` 8-byte words apart from `base`, in the order
    /// of [`fit::coprime_step`].
    fn chain(&self, base: u64, n: u64, stride_words: u64) -> Result<()> {
        let init = self.func(&self.latency, "chase_init")?;
        let step = fit::coprime_step(n);
        let grid = n.div_ceil(256).clamp(1, 4096) as u32;
        launch!(self, init, grid, 256; &base, &n, &stride_words, &step)?;
        self.sync("chase_init")
    }

    /// Cycles per load of `hops` timed loads after `warm` untimed ones from `start`.
    fn chase(&self, kernel: &str, start: u64, warm: u32, hops: u32) -> Result<f64> {
        let f = self.func(&self.latency, kernel)?;
        let mut out = self
            .stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating the chase results".into())?;
        launch!(self, f, 1, 1; &start, &warm, &hops, &mut out)?;
        let v = self.read(&out, kernel)?;
        Ok(v[0] as f64 / f64::from(hops))
    }

    /// Bytes of the DRAM buffer: 32 x L2, within [512 MiB, 2 GiB] and a quarter of free memory.
    fn big_bytes(&self) -> Result<usize> {
        let l2 = self.info.l2_bytes.unwrap_or(64 << 20) as usize;
        let (free, _) = self
            .gpu
            .ctx
            .mem_get_info()
            .cuda(|| "reading the free memory".into())?;
        let want = (32 * l2).clamp(512 << 20, 2 << 30).min(free / 4);
        Ok(want / 256 * 256)
    }

    /// Reads `words` 16-byte words of `buf` with `read_bytes` on a full grid.
    fn read_all(&self, buf: &CudaSlice<u8>, words: u64, sink: &mut CudaSlice<u32>) -> Result<()> {
        let f = self.func(&self.bandwidth, "read_bytes")?;
        launch!(self, f, self.sms() * 8, 256; buf, &words, sink)
    }
}

/// Runs the selected benchmarks on `gpu` and reduces them to a [`Raw`] record.
pub fn run(gpu: &Gpu, info: &DeviceInfo, options: Options<'_>) -> Result<Raw> {
    guard(|| run_inner(gpu, info, options))
}

fn run_inner(gpu: &Gpu, info: &DeviceInfo, options: Options<'_>) -> Result<Raw> {
    let Options { selected, log } = options;
    let r = Runner::new(gpu, info)?;
    let mut raw = Raw {
        device: info.name.clone(),
        attribute_clock_mhz: info.sm_clock_mhz,
        warps: WARPS,
        ..Raw::default()
    };
    let t = Instant::now();
    let mut done = |id: &str, what: String| {
        log(&format!(
            "{id}: {what} ({:.1} s)",
            t.elapsed().as_secs_f64()
        ))
    };

    let start = r.clock(true)?;
    raw.clock_start_mhz = Some(start);
    done("clock", format!("{start:.1} MHz"));

    let stream = &r.stream;
    if selected("latency-l1") {
        // 64 lines of 128 bytes: 8 KiB.
        let buf = stream
            .alloc_zeros::<u64>(1024)
            .cuda(|| "allocating the L1 chain".into())?;
        let base = ptr(&buf, stream);
        r.chain(base, 64, 16)?;
        let cycles = r.chase("chase_plain", base, 64, 8192)?;
        raw.l1 = Some(Chase {
            cycles_per_load: cycles,
            loads: 8192,
            bytes: 8192,
            runs: 1,
        });
        done("latency-l1", format!("{cycles:.1} cycles"));
    }
    if selected("latency-l2") {
        // 4096 elements 256 bytes apart: 1 MiB.
        let buf = stream
            .alloc_zeros::<u64>(1 << 17)
            .cuda(|| "allocating the L2 chain".into())?;
        let base = ptr(&buf, stream);
        r.chain(base, 4096, 32)?;
        let cycles = r.chase("chase_cg", base, 4096, 8192)?;
        raw.l2 = Some(Chase {
            cycles_per_load: cycles,
            loads: 8192,
            bytes: 1 << 20,
            runs: 1,
        });
        done("latency-l2", format!("{cycles:.1} cycles"));
    }

    let dram_words = if selected("latency-dram") || selected("bandwidth-dram") {
        r.big_bytes()? / 16
    } else {
        0
    };
    let big = if dram_words > 0 {
        Some(stream.alloc_zeros::<u8>(dram_words * 16).cuda(|| {
            format!(
                "allocating {} MiB for the DRAM benchmarks",
                dram_words >> 16
            )
        })?)
    } else {
        None
    };
    let mut sink = stream
        .alloc_zeros::<u32>(4)
        .cuda(|| "allocating a sink".into())?;

    if let (true, Some(big)) = (selected("latency-dram"), big.as_ref()) {
        // Three regions of 65536 elements 256 bytes apart (16 MiB each); before each run, reading
        // the big buffer (32 x L2) evicts the region's chain (written by chase_init) from L2.
        const REGION_WORDS: u64 = 65536 * 32;
        let buf = stream
            .alloc_zeros::<u64>(3 * REGION_WORDS as usize)
            .cuda(|| "allocating the DRAM chain".into())?;
        let base = ptr(&buf, stream);
        let mut runs = vec![];
        for region in 0..3u64 {
            let start = base + region * REGION_WORDS * 8;
            r.chain(start, 65536, 32)?;
            r.read_all(big, dram_words as u64, &mut sink)?;
            runs.push(r.chase("chase_cg", start, 0, 16384)?);
        }
        let cycles = fit::median(&runs).unwrap_or(f64::NAN);
        raw.dram = Some(Chase {
            cycles_per_load: cycles,
            loads: 16384,
            bytes: 16 << 20,
            runs: 3,
        });
        done("latency-dram", format!("{cycles:.1} cycles"));
    }

    if selected("latency-shared") {
        let f = r.func(&r.latency, "chase_shared")?;
        let mut out = stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating results".into())?;
        let (n, step, warm, hops) = (1024u32, 1u32, 1024u32, 8192u32);
        launch!(r, f, 1, 256; &n, &step, &warm, &hops, &mut out)?;
        let cycles = r.read(&out, "chase_shared")?[0] as f64 / f64::from(hops);
        raw.shared = Some(Chase {
            cycles_per_load: cycles,
            loads: 8192,
            bytes: 4096,
            runs: 1,
        });
        done("latency-shared", format!("{cycles:.1} cycles"));
    }

    if selected("latency-constant") {
        let f = r.func(&r.constant, "chase_const")?;
        let mut out = stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating results".into())?;
        for &bytes in CONSTANT_SWEEP {
            let words = constant_chain(bytes, CONSTANT_STRIDE);
            let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            {
                let mut symbol = r
                    .constant
                    .get_global("cchain", stream)
                    .cuda(|| "looking up `cchain`".into())?;
                stream
                    .memcpy_htod(&data, &mut symbol)
                    .cuda(|| "writing the constant chain".into())?;
            }
            let (warm, hops, zero) = (bytes / CONSTANT_STRIDE, 4096u32, 0u32);
            let mut runs = vec![];
            for _ in 0..3 {
                launch!(r, f, 1, 1; &warm, &hops, &zero, &mut out)?;
                runs.push(r.read(&out, "chase_const")?[0] as f64 / f64::from(hops));
            }
            raw.constant_sweep
                .push((f64::from(bytes), fit::median(&runs).unwrap_or(f64::NAN)));
        }
        let pts: Vec<String> = raw
            .constant_sweep
            .iter()
            .map(|(b, c)| format!("{}:{c:.0}", b / 1024.0))
            .collect();
        done("latency-constant", format!("KiB:cycles {}", pts.join(" ")));
    }

    if let (true, Some(big)) = (selected("bandwidth-dram"), big.as_ref()) {
        let words = dram_words as u64;
        let bytes = (dram_words * 16) as f64;
        let ms = r.timed("read_bytes", 2, 10, || r.read_all(big, words, &mut sink))?;
        raw.dram_read = Some(Transfer {
            bytes,
            ms: fit::median(&ms).unwrap_or(f64::NAN),
        });
        let copy = r.func(&r.bandwidth, "copy_bytes")?;
        // The first half of the buffer to the second, one 16-byte word per thread.
        let half = words / 2;
        let src = ptr(big, stream);
        let dst = src + half * 16;
        let grid = u32::try_from(half.div_ceil(256)).unwrap_or(u32::MAX);
        let ms = r.timed(
            "copy_bytes",
            2,
            10,
            || launch!(r, copy, grid, 256; &src, &dst, &half),
        )?;
        raw.dram_copy = Some(Transfer {
            bytes: (half * 32) as f64,
            ms: fit::median(&ms).unwrap_or(f64::NAN),
        });
        done(
            "bandwidth-dram",
            format!(
                "copy {:.0} GB/s, read {:.0} GB/s",
                raw.dram_copy
                    .map_or(f64::NAN, |t| fit::gb_per_s(t.bytes, t.ms)),
                raw.dram_read
                    .map_or(f64::NAN, |t| fit::gb_per_s(t.bytes, t.ms))
            ),
        );
    }
    drop(big);

    if selected("bandwidth-l2") {
        let l2 = info.l2_bytes.unwrap_or(4 << 20);
        let words = (l2 / 4 / 16).max(1024);
        let reps = 128u32;
        let buf = stream
            .alloc_zeros::<u8>((words * 16) as usize)
            .cuda(|| "allocating the L2 working set".into())?;
        let f = r.func(&r.bandwidth, "read_l2")?;
        let ms = r.timed(
            "read_l2",
            2,
            10,
            || launch!(r, f, r.sms() * 4, 256; &buf, &words, &reps, &mut sink),
        )?;
        let t = Transfer {
            bytes: (words * 16) as f64 * f64::from(reps),
            ms: fit::median(&ms).unwrap_or(f64::NAN),
        };
        raw.l2_read = Some(t);
        done(
            "bandwidth-l2",
            format!("{:.0} GB/s", fit::gb_per_s(t.bytes, t.ms)),
        );
    }

    if selected("bandwidth-shared") {
        let f = r.func(&r.shared, "smem_bandwidth")?;
        let grid = r.sms();
        let (iters, zero) = (512u32, 0u32);
        let mut out = stream
            .alloc_zeros::<u64>(4 * grid as usize)
            .cuda(|| "allocating results".into())?;
        launch!(r, f, grid, 1024; &iters, &zero, &mut out)?; // warm-up
        launch!(r, f, grid, 1024; &iters, &zero, &mut out)?;
        let v = r.read(&out, "smem_bandwidth")?;
        let blocks: Vec<fit::BlockTime> = v
            .chunks(4)
            .map(|c| fit::BlockTime {
                sm: c[1] as u32,
                start: c[2],
                cycles: c[0],
            })
            .collect();
        let per_block = 1024.0 * f64::from(iters) * 4.0 * 16.0;
        raw.shared_bytes_per_cycle = fit::per_sm_rates(&blocks, per_block);
        done(
            "bandwidth-shared",
            format!(
                "{:.1} bytes/cycle/SM",
                fit::median(&raw.shared_bytes_per_cycle).unwrap_or(f64::NAN)
            ),
        );
    }

    if selected("constant-addresses") {
        let f = r.func(&r.constant, "const_addresses")?;
        let mut out = stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating results".into())?;
        let (iters, zero) = (256u32, 0u32);
        for &d in DISTINCT {
            let mut runs = vec![];
            for _ in 0..3 {
                launch!(r, f, 1, WARPS * 32; &d, &iters, &zero, &mut out)?;
                let cycles = r.read(&out, "const_addresses")?[0] as f64;
                runs.push(cycles / f64::from(WARPS * iters * 8));
            }
            raw.constant_addresses
                .push((f64::from(d), fit::median(&runs).unwrap_or(f64::NAN)));
        }
        let pts: Vec<String> = raw
            .constant_addresses
            .iter()
            .map(|(d, c)| format!("{d}:{c:.2}"))
            .collect();
        done(
            "constant-addresses",
            format!("addresses:cycles {}", pts.join(" ")),
        );
    }

    if selected("constant-misses") {
        let f = r.func(&r.constant, "const_misses")?;
        let mut out = stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating results".into())?;
        // Each iteration moves every address 5 lines on: all miss the smallest level.
        let (iters, rotate) = (64u32, 320u32);
        for &d in DISTINCT {
            let mut runs = vec![];
            for _ in 0..3 {
                launch!(r, f, 1, WARPS * 32; &d, &iters, &rotate, &mut out)?;
                let cycles = r.read(&out, "const_misses")?[0] as f64;
                runs.push(cycles / f64::from(WARPS * iters * 8));
            }
            raw.constant_misses
                .push((f64::from(d), fit::median(&runs).unwrap_or(f64::NAN)));
        }
        let pts: Vec<String> = raw
            .constant_misses
            .iter()
            .map(|(d, c)| format!("{d}:{c:.2}"))
            .collect();
        done(
            "constant-misses",
            format!("addresses:cycles {}", pts.join(" ")),
        );
    }

    if selected("bank-conflicts") {
        let f = r.func(&r.shared, "smem_stride")?;
        let mut out = stream
            .alloc_zeros::<u64>(4)
            .cuda(|| "allocating results".into())?;
        let (iters, zero) = (256u32, 0u32);
        for stride in 1..=32u32 {
            let mut runs = vec![];
            for _ in 0..3 {
                launch!(r, f, 1, WARPS * 32; &stride, &iters, &zero, &mut out)?;
                let cycles = r.read(&out, "smem_stride")?[0] as f64;
                runs.push(cycles / f64::from(WARPS * iters * 8));
            }
            raw.bank_conflicts
                .push((f64::from(stride), fit::median(&runs).unwrap_or(f64::NAN)));
        }
        let pts: Vec<String> = raw
            .bank_conflicts
            .iter()
            .filter(|(s, _)| (*s as u32).is_power_of_two())
            .map(|(s, c)| format!("{s}:{c:.2}"))
            .collect();
        done("bank-conflicts", format!("stride:cycles {}", pts.join(" ")));
    }

    if selected("launch") {
        let empty = r.func(&r.bandwidth, "empty")?;
        let spin = r.func(&r.bandwidth, "spin")?;
        let mut spun = stream
            .alloc_zeros::<u64>(1)
            .cuda(|| "allocating results".into())?;
        // As `validate compare` times a launch: alone between two events, the host's launch
        // included.
        let single = r.timed("empty", 20, 200, || launch!(r, empty, 1, 32;))?;
        raw.launch_single_us = fit::median(&single).map(|ms| ms * 1e3);
        // The GPU's side alone: the launch queued between two events behind a spin kernel
        // (about 50 us), minus two events queued the same way without a launch.
        let short = 100_000u64;
        let with = r.timed_behind(&spin, &mut spun, short, 100, || launch!(r, empty, 1, 32;))?;
        let without = r.timed_behind(&spin, &mut spun, short, 100, || Ok(()))?;
        if let (Some(a), Some(b)) = (fit::median(&with), fit::median(&without)) {
            raw.launch_gpu_single_us = Some((a - b) * 1e3);
        }
        // 1000 launches queued behind a 20 ms spin: the GPU's time per launch, back to back.
        let n = 1000u32;
        let long = 40_000_000u64;
        let queued = Instant::now();
        let mut host_ms = 0.0;
        let b2b = r.timed_behind(&spin, &mut spun, long, 1, || {
            for _ in 0..n {
                launch!(r, empty, 1, 32;)?;
            }
            host_ms = queued.elapsed().as_secs_f64() * 1e3;
            Ok(())
        })?;
        raw.launch_gpu_back_to_back_us = Some(b2b[0] * 1e3 / f64::from(n));
        let spin_ms = long as f64 / (start * 1e3);
        if host_ms > 0.8 * spin_ms {
            raw.launch_queue_drained = true;
        }
        done(
            "launch",
            format!(
                "GPU side {:.2} us single, {:.2} us back to back; with the host {:.2} us",
                raw.launch_gpu_single_us.unwrap_or(f64::NAN),
                raw.launch_gpu_back_to_back_us.unwrap_or(f64::NAN),
                raw.launch_single_us.unwrap_or(f64::NAN)
            ),
        );
    }

    let end = r.clock(false)?;
    raw.clock_end_mhz = Some(end);
    done("clock", format!("{end:.1} MHz at the end"));
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptxgen::{self, Stamp};
    use std::path::Path;

    #[test]
    fn constant_chains_cycle_through_the_working_set() {
        let w = constant_chain(256, 64);
        assert_eq!(w.len(), 16384);
        // Elements at 0, 64, 128, 192 bytes (words 0, 16, 32, 48) point at the next.
        assert_eq!((w[0], w[16], w[32], w[48]), (64, 128, 192, 0));
        assert_eq!(w.iter().filter(|&&x| x != 0).count(), 3);
        let full = constant_chain(65536, 64);
        assert_eq!(full[16368], 0); // the last element, at 65472 bytes, closes the cycle
        assert_eq!(full[16352], 65472);
    }

    #[test]
    fn the_embedded_ptx_is_generated_from_the_current_sources() {
        // What `validate ptx --check` checks for the calibration kernels, on the embedded text.
        let dir = Path::new(crate::cmd::ptx::SOURCE_CALIBRATE);
        for (source, ptx) in PTX {
            let stamp = Stamp::parse(ptx).unwrap_or_else(|| panic!("{source}: no stamp"));
            assert_eq!(stamp.source, *source);
            let bytes = std::fs::read(dir.join(source)).unwrap();
            assert_eq!(
                stamp.sha256,
                ptxgen::sha256_hex(&bytes),
                "{source} changed since its PTX was generated: run {}",
                ptxgen::REGENERATE_NVRTC
            );
            assert_eq!(stamp.options, ptxgen::Compiler::Nvrtc.options());
        }
        let (checked, stale) = ptxgen::check(dir).unwrap();
        assert_eq!(checked.len(), PTX.len());
        assert!(stale.is_empty());
    }
}
