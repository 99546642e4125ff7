//! A workload's PTX loaded onto the GPU, ready to launch: the module (JIT-compiled by the driver
//! from the very PTX text the simulator ran), one device allocation per workload buffer holding its
//! initial bytes, the module's `.const`/`.global` variables written with the plan's initial
//! values, the texture and surface objects over the buffers (`texture`), and each launch's
//! function, argument bytes and shape.

use super::error::{describe, CudaResultExt};
use super::Gpu;
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::sys::{self, CUfunction_attribute as F};
use cudarc::driver::{result, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use cudarc::nvrtc::Ptx;
use sim::run::{Plan, PlannedArg};
use std::ffi::{c_void, CString};
use std::sync::Arc;

/// Dynamic shared memory a launch may use without opting in (`cuFuncSetAttribute`).
const DEFAULT_DYNAMIC_SHARED: u64 = 48 * 1024;

/// Bytes kept for every kernel argument: at least the parameter's size, so that the driver never
/// reads past the value even for a parameter wider than the workload's bytes (an array `.param`).
const ARG_BYTES: usize = 64;

struct Buffer {
    name: String,
    slice: CudaSlice<u8>,
    /// The workload's size in bytes (the allocation has at least 1 byte).
    len: usize,
}

struct Launch {
    label: String,
    kernel: String,
    function: CudaFunction,
    /// One value per PTX parameter, each padded to [`ARG_BYTES`].
    args: Vec<Vec<u8>>,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared: u32,
}

/// A plan's PTX, memory and launches on the GPU.
pub struct Program {
    stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    /// Texture and surface objects, dropped before the buffers they read.
    objects: super::texture::Objects,
    buffers: Vec<Buffer>,
    launches: Vec<Launch>,
}

impl Program {
    /// Loads `plan` onto `gpu`: JIT-compiles its PTX, allocates and fills the buffers, writes the
    /// module's variables and resolves every launch.
    pub fn load(gpu: &Gpu, plan: &Plan) -> Result<Program> {
        super::guard(|| Self::load_inner(gpu, plan))
    }

    fn load_inner(gpu: &Gpu, plan: &Plan) -> Result<Program> {
        let stream = gpu.stream.clone();
        let name = &plan.ptx_name;
        if plan.ptx_text.contains('\0') {
            bail!("{name} contains a NUL byte, which the driver cannot take");
        }
        let module = gpu
            .ctx
            .load_module(Ptx::from_src(plan.ptx_text.clone()))
            .map_err(|e| {
                anyhow!(
                    "the driver could not load {name}: {}{}",
                    describe(&e),
                    jit_log(&plan.ptx_text)
                )
            })?;

        let mut buffers = vec![];
        for b in &plan.workload.buffers {
            let data = plan
                .image
                .allocs
                .iter()
                .rev()
                .find(|a| a.name == b.name)
                .map(|a| a.contents())
                .ok_or_else(|| {
                    anyhow!("buffer `{}` has no initial contents in the plan", b.name)
                })?;
            // An `iota` buffer's bytes are made from its formula here (sim::memory::formula).
            let data: &[u8] = &data;
            let what = || format!("allocating buffer `{}` ({} bytes)", b.name, data.len());
            let mut slice = stream.alloc_zeros::<u8>(data.len().max(1)).cuda(what)?;
            if !data.is_empty() {
                stream
                    .memcpy_htod(data, &mut slice)
                    .cuda(|| format!("uploading buffer `{}`", b.name))?;
            }
            buffers.push(Buffer {
                name: b.name.clone(),
                slice,
                len: data.len(),
            });
        }

        for (symbol, bytes) in plan.symbols.iter().filter(|(_, b)| !b.is_empty()) {
            let mut view = module.get_global(symbol, &stream).cuda(|| {
                format!("looking up the module variable `{symbol}` (cuModuleGetGlobal)")
            })?;
            if view.len() < bytes.len() {
                bail!(
                    "module variable `{symbol}` has {} bytes on the GPU, the plan initialises {}",
                    view.len(),
                    bytes.len()
                );
            }
            stream
                .memcpy_htod(bytes, &mut view)
                .cuda(|| format!("writing the module variable `{symbol}`"))?;
        }

        let objects = super::texture::Objects::create(&plan.objects, |name| {
            let b = buffers.iter().find(|b| b.name == name)?;
            let (ptr, _sync) = b.slice.device_ptr(&stream);
            Some(ptr)
        })?;
        objects.to_arrays()?;

        let mut launches = vec![];
        for l in &plan.launches {
            if l.kernel.contains('\0') {
                bail!("kernel name `{}` contains a NUL byte", l.kernel);
            }
            let function = module
                .load_function(&l.kernel)
                .cuda(|| format!("looking up kernel `{}` in {name}", l.kernel))?;
            let mut args = vec![];
            for a in &l.args {
                let mut v = match a {
                    PlannedArg::Buffer(b) => {
                        let buf = buffers
                            .iter()
                            .find(|x| &x.name == b)
                            .ok_or_else(|| anyhow!("launch `{}`: no buffer `{b}`", l.label))?;
                        let (ptr, _sync) = buf.slice.device_ptr(&stream);
                        ptr.to_le_bytes().to_vec()
                    }
                    PlannedArg::Bytes(bytes) => bytes.clone(),
                    PlannedArg::Object(o) => objects
                        .handle(o)
                        .ok_or_else(|| anyhow!("launch `{}`: no object `{o}`", l.label))?
                        .to_le_bytes()
                        .to_vec(),
                };
                v.resize(v.len().max(ARG_BYTES), 0);
                args.push(v);
            }
            let dynamic = l.dynamic_shared_bytes;
            let dynamic_shared = u32::try_from(dynamic).with_context(|| {
                format!("launch `{}`: {dynamic} bytes of shared memory", l.label)
            })?;
            // The workload's opt-in (`max_dynamic_shared_bytes`) as the CUDA runtime needs it:
            // cudaFuncSetAttribute(.., cudaFuncAttributeMaxDynamicSharedMemorySize, n).
            let opt_in = l
                .max_dynamic_shared_bytes
                .or((dynamic > DEFAULT_DYNAMIC_SHARED).then_some(dynamic));
            if let Some(max) = opt_in {
                let max = i32::try_from(max).with_context(|| {
                    format!("launch `{}`: max_dynamic_shared_bytes = {max}", l.label)
                })?;
                function
                    .set_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max)
                    .cuda(|| {
                        format!(
                            "allowing launch `{}` {max} bytes of dynamic shared memory \
(more than the device allows per block?)",
                            l.label
                        )
                    })?;
            }
            launches.push(Launch {
                label: l.label.clone(),
                kernel: l.kernel.clone(),
                function,
                args,
                grid: l.dims.grid,
                block: l.dims.block,
                dynamic_shared,
            });
        }
        stream
            .synchronize()
            .cuda(|| format!("uploading the inputs of {}", plan.workload.name))?;
        Ok(Program {
            stream,
            _module: module,
            objects,
            buffers,
            launches,
        })
    }

    /// Every buffer's device address (as the kernels get it) and size in bytes, in the
    /// workload's order: where the driver placed them decides which L2 slices and atomic units
    /// their lines meet.
    pub fn addresses(&self) -> Vec<(String, u64, usize)> {
        (self.buffers.iter())
            .map(|b| {
                let (ptr, _sync) = b.slice.device_ptr(&self.stream);
                (b.name.clone(), ptr, b.len)
            })
            .collect()
    }

    /// Number of launches.
    pub fn len(&self) -> usize {
        self.launches.len()
    }

    /// Whether there are no launches.
    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// `label` (kernel `k`, grid [..], block [..]) of launch `i`, for messages.
    pub fn describe(&self, i: usize) -> String {
        let l = &self.launches[i];
        format!(
            "launch `{}` (kernel `{}`, grid {:?}, block {:?}, {} bytes of dynamic shared memory)",
            l.label, l.kernel, l.grid, l.block, l.dynamic_shared
        )
    }

    /// Enqueues launch `i` on the stream; returns the launch error, if any (not the kernel's:
    /// see [`Program::sync`]).
    pub fn enqueue(&self, i: usize) -> Result<()> {
        let l = &self.launches[i];
        let mut params: Vec<*mut c_void> =
            l.args.iter().map(|a| a.as_ptr() as *mut c_void).collect();
        let [gx, gy, gz] = l.grid;
        let [bx, by, bz] = l.block;
        // SAFETY: the function belongs to the loaded module; each parameter pointer points at
        // ARG_BYTES or more bytes that live until cuLaunchKernel returns (it copies them); the
        // buffer arguments are live allocations of this context.
        unsafe {
            result::launch_kernel(
                l.function.cu_function(),
                (gx, gy, gz),
                (bx, by, bz),
                l.dynamic_shared,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .cuda(|| format!("launching {}", self.describe(i)))
    }

    /// Waits for the stream; a kernel fault (`CUDA_ERROR_ILLEGAL_ADDRESS`) shows up here.
    pub fn sync(&self, after: usize) -> Result<()> {
        self.stream
            .synchronize()
            .cuda(|| format!("running {}", self.describe(after)))
    }

    /// Runs launch `i` to completion, its surfaces' buffers copied into their CUDA arrays before
    /// and back after (so that the buffers hold what the simulator's do).
    pub fn run(&self, i: usize) -> Result<()> {
        self.objects.to_arrays()?;
        self.enqueue(i)?;
        self.sync(i)?;
        self.objects.to_buffers()
    }

    /// Copies the named buffers back: (name, bytes).
    pub fn read(&self, names: &[String]) -> Result<Vec<(String, Vec<u8>)>> {
        names
            .iter()
            .map(|n| {
                let b = self
                    .buffers
                    .iter()
                    .find(|b| &b.name == n)
                    .ok_or_else(|| anyhow!("no buffer `{n}` on the GPU"))?;
                let mut v = self
                    .stream
                    .clone_dtoh(&b.slice)
                    .cuda(|| format!("copying buffer `{n}` back"))?;
                v.truncate(b.len);
                Ok((n.clone(), v))
            })
            .collect()
    }

    /// The stream the program runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

/// The JIT compiler's error log for `ptx` (`cuModuleLoadDataEx` with an error log buffer), as
/// `: log line | log line`, or nothing when there is none.
fn jit_log(ptx: &str) -> String {
    let Ok(src) = CString::new(ptx) else {
        return String::new();
    };
    let mut log = vec![0u8; 1 << 16];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // The driver takes option values as pointer-sized words: a pointer, then a size.
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
    let mut module = std::mem::MaybeUninit::uninit();
    // SAFETY: `src` is NUL-terminated; the log buffer outlives the call and its size is given.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            module.as_mut_ptr(),
            src.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if r == sys::CUresult::CUDA_SUCCESS {
        // SAFETY: the module was just loaded.
        unsafe { sys::cuModuleUnload(module.assume_init()) };
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(6)
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join(" | "))
    }
}
