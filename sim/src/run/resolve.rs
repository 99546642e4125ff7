//! Resolving a workload into a plan ([`plan`]): its PTX (compiled first when it names a CUDA
//! source), the initial memory, and each launch decoded with its grid, parameters and registers.

use super::layout::{build_params, init_constant, layout_kernel, layout_module};
use super::{Options, Plan, PlannedLaunch, RegisterSource};
use crate::config::GpuConfig;
use crate::error::Result;
use crate::exec::{self, Dims, SymbolAddr};
use crate::memory::MemoryImage;
use crate::ptx;
use crate::sass;
use crate::workload::init::{self, Elem};
use crate::workload::{Take, Workload};
use std::collections::HashMap;

/// Resolves `w` against `cfg`: parses the PTX, builds the initial memory, decodes each launch.
pub fn plan(cfg: &GpuConfig, w: &Workload, opts: &Options) -> Result<Plan> {
    let mut w = w.clone();
    w.set_params(&opts.sets)?;
    let (ptx_name, text, compiled) = match &w.cuda {
        Some(cu) => compile_source(cfg, &w, cu, opts)?,
        None => {
            let (ptx_name, bytes) = w.source.read_relative(&w.ptx, Take::Text("PTX file"))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| w.err("ptx", format!("{ptx_name} is not UTF-8 text")))?;
            (ptx_name, text, None)
        }
    };
    let module = ptx::parse(&text, &ptx_name)?;
    if module.address_size != 64 {
        return Err(w.err(
            "ptx",
            format!(
                "{ptx_name}: .address_size {} is not supported (only 64-bit addressing)",
                module.address_size
            ),
        ));
    }
    let target_note = check_target(&module, cfg, &ptx_name)?;

    let mut image = MemoryImage::new(cfg.constant.size_bytes as usize);
    let budget = crate::memory::Budget {
        max: opts.max_memory,
    };
    let mut symbols = layout_module(&module, &mut image, &w, &budget)?;
    let mut buffers: HashMap<String, u64> = HashMap::new();
    let mut buffer_at: HashMap<String, super::texture::BufferAt> = HashMap::new();
    let read_file = |p: &str, n: u64| {
        w.source
            .read_relative(p, Take::Prefix(n))
            .map(|(_, d)| d)
            .map_err(|e| match e {
                crate::Error::Io { path, source } => {
                    format!("cannot read {}: {source}", path.display())
                }
                e => e.to_string(),
            })
    };
    let mut outputs = vec![];
    for (i, b) in w.buffers.iter().enumerate() {
        let key = format!("buffer[{i}]");
        let elem = Elem::parse(&b.ty)
            .ok_or_else(|| w.err(&format!("{key}.type"), format!("unknown type `{}`", b.ty)))?;
        let count = w.eval(&b.count, &format!("{key}.count"))?;
        let count = usize::try_from(count)
            .map_err(|_| w.err(&format!("{key}.count"), format!("= {count}, must be >= 0")))?;
        // An `iota` buffer stays its formula until a kernel writes it (memory::formula); a large
        // buffer of zeros is fresh pages, not a pass of zeros (memory::host::HostBytes).
        let bytes = (count.checked_mul(elem.bytes()))
            .ok_or_else(|| format!("{count} elements of {} bytes overflow", elem.bytes()));
        let too_big = |m: String| format!("{count} elements of {} bytes: {m}", elem.bytes());
        // Against the budget before anything is allocated or read (buffers before it included).
        if let (Ok(n), Some(left)) = (&bytes, image.memory_left(&budget)) {
            if *n as u64 > left.0 {
                let what = format!(
                    "buffer `{}` ({count} elements of {} bytes)",
                    b.name,
                    elem.bytes()
                );
                let m = crate::memory::over_budget(&what, *n as u64, left);
                return Err(w.err(&format!("{key}.count"), m));
            }
        }
        let base = match init::formula(&b.init, elem) {
            Some(f) => bytes
                .and_then(|n| image.alloc_formula(&b.name, f, n).map_err(too_big))
                .map_err(|m| w.err(&format!("{key}.init"), m))?,
            None if b.init == "zeros" => bytes
                .and_then(|n| image.alloc_zeros(&b.name, n).map_err(too_big))
                .map_err(|m| w.err(&format!("{key}.init"), m))?,
            None => {
                let data = init::build(&b.init, elem, count, &read_file)
                    .map_err(|m| w.err(&format!("{key}.init"), m))?;
                image.alloc(&b.name, data)
            }
        };
        if b.output {
            outputs.push(super::OutputBuffer {
                name: b.name.clone(),
                ty: b.ty.clone(),
                shape: shape_of(&w, b, &key, count)?,
            });
        } else {
            shape_of(&w, b, &key, count)?;
        }
        buffer_at.insert(b.name.clone(), (base, (count * elem.bytes()) as u64));
        if buffers.insert(b.name.clone(), base).is_some() {
            return Err(w.err(
                &format!("{key}.name"),
                format!("a second buffer named `{}`", b.name),
            ));
        }
    }
    let objects = super::texture::objects(&w, &buffer_at)?;
    for (i, c) in w.constants.iter().enumerate() {
        init_constant(&module, &mut image, &symbols, &w, i, c, &read_file)?;
    }
    let symbol_data = module
        .globals
        .iter()
        .filter_map(|v| match symbols.get(&v.name)? {
            SymbolAddr::Const(off) => Some((
                v.name.clone(),
                image.constant[*off as usize..(*off + v.size_bytes()) as usize].to_vec(),
            )),
            // A `.global` variable without an initializer that no `[[constant]]` fills is zero,
            // as the GPU's module loader leaves it: no copy (a 1 GiB array's copy touched every
            // page of it, 1.1 GB of host memory).
            SymbolAddr::Global(_)
                if v.init.is_empty() && !w.constants.iter().any(|c| c.symbol == v.name) =>
            {
                None
            }
            SymbolAddr::Global(a) => image
                .allocs
                .iter()
                .find(|x| x.base == *a)
                .map(|x| (v.name.clone(), x.contents().into_owned())),
            _ => None,
        })
        .collect();

    let mut launches = vec![];
    // ptxas's answer for the module, asked for the first launch that needs it.
    let mut assembled: Option<sass::ModuleRegisters> = None;
    let mut listed: Option<sass::ModuleListing> = None;
    for (i, spec) in w.launches.iter().enumerate() {
        if !opts.only.is_empty() && !opts.only.contains(&spec.label) {
            continue;
        }
        let key = format!("launch[{i}]");
        let f = module.entry(&spec.kernel).ok_or_else(|| {
            let names: Vec<&str> = module
                .functions
                .iter()
                .filter(|f| f.is_entry)
                .map(|f| f.name.as_str())
                .collect();
            w.err(
                &format!("{key}.kernel"),
                format!(
                    "no entry `{}` in {ptx_name} (entries: {})",
                    spec.kernel,
                    names.join(", ")
                ),
            )
        })?;
        let inlined = ptx::inline::inline_calls(&module, f, &text, &ptx_name)?;
        let f = &inlined;
        let (param_bytes, dynamic_shared_at, local) = layout_kernel(&module, f, &mut symbols);
        if local > super::layout::MAX_LOCAL_BYTES_PER_THREAD {
            return Err(w.err(
                &format!("{key}.kernel"),
                format!(
                    "kernel `{}` of {ptx_name} declares {local} bytes of .local memory per thread; \
the GPU allows at most {} (512 KiB)",
                    f.name,
                    super::layout::MAX_LOCAL_BYTES_PER_THREAD
                ),
            ));
        }
        let mut program = exec::decode(f, &symbols, &text, &ptx_name)?;
        program.files = module.files.clone();
        let (params, args) = build_params(f, spec, (&buffers, &objects), &w, &key, param_bytes)?;
        let dims = Dims {
            grid: w.dims(
                &spec.grid,
                &format!("{key}.grid"),
                crate::workload::MAX_GRID,
            )?,
            block: w.dims(
                &spec.block,
                &format!("{key}.block"),
                crate::workload::MAX_BLOCK,
            )?,
        };
        check_tuning(f, dims.block, &ptx_name).map_err(|m| w.err(&format!("{key}.block"), m))?;
        check_hopper(cfg, &program, &spec.kernel).map_err(|m| w.err(&key, m))?;
        crate::timing::tensor::check(cfg, &program, &ptx_name).map_err(|m| w.err(&key, m))?;
        let dynamic = match &spec.shared_bytes {
            Some(e) => w.eval(e, &format!("{key}.shared_bytes"))?,
            None => 0,
        };
        if dynamic < 0 {
            return Err(w.err(
                &format!("{key}.shared_bytes"),
                format!("= {dynamic}, must be >= 0"),
            ));
        }
        let max_dynamic = dynamic_shared_opt_in(cfg, spec, &w, &key, dynamic_shared_at, dynamic)?;
        let cache_global_loads = match spec.dlcm.as_deref() {
            None => cfg.l1.cache_global_loads,
            Some("ca") => true,
            Some("cg") => false,
            Some(o) => {
                return Err(w.err(
                    &format!("{key}.dlcm"),
                    format!("= \"{o}\", allowed: \"ca\" or \"cg\""),
                ))
            }
        };
        let mut notes = program.notes.clone();
        notes.extend(target_note.clone());
        let bank_width = match spec.bank_mode {
            None => cfg.shared.bank_width_bytes,
            Some(b) if b != 4 && b != 8 => {
                return Err(w.err(
                    &format!("{key}.bank_mode"),
                    format!("= {b}, allowed: 4 or 8"),
                ))
            }
            Some(b) if cfg.shared.bank_width_selectable => b,
            Some(b) => {
                // As on the hardware: cudaDeviceSetSharedMemConfig is ignored where banks are fixed.
                if b != cfg.shared.bank_width_bytes {
                    notes.push(format!(
                        "bank_mode = {b} ignored: {} has fixed {}-byte banks",
                        cfg.gpu.name, cfg.shared.bank_width_bytes
                    ));
                }
                cfg.shared.bank_width_bytes
            }
        };
        let ptxas = if opts.registers.is_none() && spec.registers.is_none() {
            if assembled.is_none() {
                let m = sass::module_registers(
                    &opts.ptxas,
                    cfg.compute_capability(),
                    &text,
                    &ptx_name,
                )?;
                assembled = Some(m);
            }
            assembled.as_ref()
        } else {
            None
        };
        let (registers, registers_source) =
            launch_registers(cfg, &program, spec, opts, ptxas, (&w, &key), &mut notes)?;
        let listing = listed.get_or_insert_with(|| {
            sass::module_listing(&opts.ptxas, cfg.compute_capability(), &text, &ptx_name)
        });
        let sass = listing.kernel(&spec.kernel);
        let mut program = program;
        if let Ok(k) = &sass {
            // Shared accesses ptxas merged (LDS.128 of four ld.shared.f32): their wavefronts
            // are the wide access's.
            program.shared_widths = sass::merge::shared_widths(&k.function, &program);
            // A by-value array that ptxas selects from instead of storing: no local traffic.
            program.local = sass::merge::local_memory(&k.function, &program);
            // Loops ptxas unrolled beyond the PTX: their loads are in flight together.
            program.loop_overlap = sass::unroll::overlaps(&k.function, &program);
        }
        launches.push(PlannedLaunch {
            label: spec.label.clone(),
            kernel: spec.kernel.clone(),
            program,
            params,
            args,
            dims,
            dynamic_shared_bytes: dynamic as u64,
            max_dynamic_shared_bytes: max_dynamic,
            shared_bytes: dynamic_shared_at + dynamic as u64,
            local_bytes: local,
            registers,
            registers_source,
            sass,
            cache_global_loads,
            bank_width,
            notes,
        });
    }
    Ok(Plan {
        workload: w,
        compiled,
        ptx_name,
        ptx_text: text,
        image,
        symbols: symbol_data,
        launches,
        line_files: module.files.clone(),
        outputs,
        objects,
    })
}

/// The dimensions of buffer `b` (key `key`, `count` elements): its `shape`, each dimension at
/// least 1 and their product `count`, or `[count]`.
fn shape_of(
    w: &Workload,
    b: &crate::workload::BufferSpec,
    key: &str,
    count: usize,
) -> Result<Vec<u64>> {
    let Some(dims) = &b.shape else {
        return Ok(vec![count as u64]);
    };
    let key = format!("{key}.shape");
    if dims.is_empty() || dims.len() > 32 {
        return Err(w.err(
            &key,
            "expected 1 to 32 dimensions, e.g. [1024, 1024, 4]".into(),
        ));
    }
    let mut shape = vec![];
    for d in dims {
        let v = w.eval(d, &key)?;
        match u64::try_from(v) {
            Ok(n) if n >= 1 => shape.push(n),
            _ => return Err(w.err(&key, format!("dimension {v}: must be at least 1"))),
        }
    }
    let product = shape.iter().try_fold(1u64, |p, &d| p.checked_mul(d));
    if product != Some(count as u64) {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        return Err(w.err(
            &key,
            format!(
                "[{}] holds {} elements; the buffer's count is {count}",
                dims.join(", "),
                product.map_or("too many".to_string(), |p| p.to_string())
            ),
        ));
    }
    Ok(shape)
}

/// Refuses PTX whose arch-specific (`sm_100a`) or family-specific (`sm_100f`) `.target` the
/// config's GPU cannot load ([`ptx::Arch::runs_on`]): it may use features no other GPU has, the
/// CUDA driver does not JIT-compile it for another one, and ptxas refuses it for another `-arch`.
///
/// A plain `.target` newer than the GPU gives a note (returned), not an error: the GPU could not
/// load it either ("PTX code produced for some specific compute capability can always be compiled
/// to binary code of greater or equal compute capability", CUDA C++ Programming Guide, "PTX
/// Compatibility"; ptxas 12.9 `-arch=sm_86` on `.target sm_90`: "SM version specified by .target
/// is higher than default SM version assumed"), but a plain target promises no feature the
/// simulator models per architecture, and asking how a kernel would fare on an older GPU is a
/// question the simulator exists to answer (the bundled `sm_80` PTX on the K40's and V100's
/// configs; its `.target` lowered for ptxas: `sass::ptxas`). `validate`, which loads the PTX on
/// a real GPU, meets the driver's refusal there.
fn check_target(module: &ptx::Module, cfg: &GpuConfig, ptx_name: &str) -> Result<Option<String>> {
    let Some(arch) = module.arch() else {
        return Ok(None);
    };
    let cc = cfg.compute_capability();
    if arch.runs_on(cc) {
        return Ok(None);
    }
    let (major, minor) = arch.cc;
    if arch.variant == ptx::ArchVariant::Portable {
        return Ok(Some(format!(
            "{ptx_name}:{}: .target {} is newer than {} ({}, compute capability {}.{}): the \
CUDA driver would not load this PTX there (PTX is compiled only for an equal or greater compute \
capability) and ptxas -arch=sm_{}{} refuses it; the simulator runs it as written",
            module.target_line, module.target, cfg.path, cfg.gpu.name, cc.0, cc.1, cc.0, cc.1,
        )));
    }
    let what = match arch.variant {
        ptx::ArchVariant::Family => {
            format!("family-specific: it runs on compute capability {major}.{minor} to {major}.9")
        }
        _ => format!("arch-specific: it runs on compute capability {major}.{minor} only"),
    };
    Err(crate::Error::Ptx {
        loc: crate::error::SourceLoc {
            file: ptx_name.to_string(),
            line: module.target_line as usize,
            col: 1,
        },
        message: format!(
            ".target {} is {what}; {} describes a {}.{} GPU ({}), for which the CUDA driver \
does not load this PTX and ptxas -arch=sm_{}{} refuses it; a plain .target (sm_{major}{minor}) \
simulates it there",
            module.target, cfg.path, cc.0, cc.1, cfg.gpu.name, cc.0, cc.1
        ),
        text: format!(".target {}", module.target),
    })
}

/// Refuses a block that the kernel's `.maxntid` or `.reqntid` forbids, as the CUDA driver refuses
/// the launch (`cuLaunchKernel` returns `CUDA_ERROR_INVALID_VALUE`; the PTX ISA, "Performance-Tuning
/// Directives": exceeding them "results in a runtime error or kernel launch failure"). The driver
/// knows `.maxntid` as the function's `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`, the product of its
/// dimensions, so a block's thread count is checked against the product; `.reqntid` must match
/// dimension by dimension. The message names the directive, its line and the kernel.
pub(crate) fn check_tuning(
    f: &ptx::ast::Function,
    block: [u32; 3],
    ptx_name: &str,
) -> Result<(), String> {
    let [x, y, z] = block;
    let threads = u64::from(x) * u64::from(y) * u64::from(z);
    let at = |line: u32| format!("kernel `{}` at {ptx_name}:{line}", f.name);
    if let Some(b) = f.tuning.maxntid.filter(|b| threads > b.threads()) {
        return Err(format!(
            "[{x}, {y}, {z}] is {threads} threads, more than the {} of `.maxntid {b}` ({}); \
the CUDA driver refuses this launch (CUDA_ERROR_INVALID_VALUE)",
            b.threads(),
            at(b.line)
        ));
    }
    if let Some(b) = f.tuning.reqntid.filter(|b| b.dims != block) {
        return Err(format!(
            "[{x}, {y}, {z}] is not the block `.reqntid {b}` requires ({}); the CUDA driver \
refuses this launch (CUDA_ERROR_INVALID_VALUE)",
            at(b.line)
        ));
    }
    Ok(())
}

/// Registers per thread of a launch of `program` ([`choose`]): `--registers`, else the launch's
/// `registers`, else ptxas's count (`ptxas`: the module's, asked for only when neither is given),
/// else the estimate from the PTX clamped to the GPU's maximum (with a note: ptxas would spill).
/// Why ptxas gave no count is a note. A given number above the maximum is an error naming the
/// key (`at`: the workload and the launch's key) or the flag.
fn launch_registers(
    cfg: &GpuConfig,
    program: &exec::Program,
    spec: &crate::workload::LaunchSpec,
    opts: &Options,
    ptxas: Option<&sass::ModuleRegisters>,
    at: (&Workload, &str),
    notes: &mut Vec<String>,
) -> Result<(u32, RegisterSource)> {
    let (w, key) = at;
    let max = cfg.sm.max_registers_per_thread;
    let allowed = format!(
        "allowed: 0 to {max} (sm.max_registers_per_thread of {})",
        cfg.path
    );
    if let Some(n) = opts.registers.filter(|&n| n > max) {
        return Err(crate::Error::Launch {
            launch: spec.label.clone(),
            message: format!("--registers {n} is out of range; {allowed}"),
        });
    }
    if let Some(n) = spec
        .registers
        .filter(|&n| n > max && opts.registers.is_none())
    {
        return Err(w.err(&format!("{key}.registers"), format!("= {n}, {allowed}")));
    }
    let from_ptxas = match ptxas.map(|m| m.entry(&spec.kernel)) {
        Some(Ok(found)) => Some(found),
        Some(Err(Some(why))) => {
            notes.push(why);
            None
        }
        Some(Err(None)) | None => None,
    };
    let (n, source) = choose(opts.registers, spec.registers, from_ptxas, || {
        exec::regs::estimate(program)
    });
    if n <= max {
        return Ok((n, source));
    }
    let what = match source {
        RegisterSource::Ptxas(b) => format!("{b}'s {n} registers per thread"),
        _ => format!("an estimated {n} registers per thread"),
    };
    notes.push(format!(
        "{what} exceed {}'s {max}: counted as {max} for occupancy (ptxas would spill the rest \
         to local memory, which is not simulated); `registers = N` in the launch or \
         --registers N gives ptxas's number",
        cfg.gpu.name
    ));
    Ok((max, source))
}

/// The precedence of registers per thread: `flag` (`--registers`) over `key` (the launch's
/// `registers = N`) over `ptxas` (its count and build) over `estimate` (called only when needed).
pub(crate) fn choose(
    flag: Option<u32>,
    key: Option<u32>,
    ptxas: Option<(u32, sass::Build)>,
    estimate: impl FnOnce() -> u32,
) -> (u32, RegisterSource) {
    match (flag.or(key), ptxas) {
        (Some(n), _) => (n, RegisterSource::Given),
        (None, Some((n, build))) => (n, RegisterSource::Ptxas(build)),
        (None, None) => (estimate(), RegisterSource::Estimated),
    }
}

/// Compiles the workload's CUDA source `cu` for the config's GPU; returns a name for the PTX (the
/// source, the compiler and the target, for messages), the PTX, and who compiled it.
fn compile_source(
    cfg: &GpuConfig,
    w: &Workload,
    cu: &str,
    opts: &Options,
) -> Result<(String, String, Option<super::CompiledBy>)> {
    let (name, bytes) = w.source.read_relative(cu, Take::Text("CUDA source"))?;
    let source =
        String::from_utf8(bytes).map_err(|_| w.err("cuda", format!("{name} is not UTF-8 text")))?;
    let dir = match &w.source {
        crate::workload::Source::File(p) => {
            Some(p.parent().unwrap_or(std::path::Path::new(".")).join(cu))
        }
        crate::workload::Source::Inline => Some(std::path::PathBuf::from(cu)),
        crate::workload::Source::Bundled(_) => None,
    };
    let include_dir = dir.as_deref().and_then(std::path::Path::parent);
    let options: Vec<String> = w
        .nvrtc_options
        .iter()
        .chain(&opts.nvrtc_options)
        .cloned()
        .collect();
    let c = crate::compile::compile_cuda(
        &name,
        &source,
        include_dir,
        cfg.compute_capability(),
        opts.compiler,
        &options,
    )
    .map_err(|e| match e {
        crate::error::Error::Compile { file, message } if !w.nvrtc_options.is_empty() => {
            crate::error::Error::Compile {
                file,
                message: format!(
                    "{message}\n(options: `nvrtc_options` of {}, then --nvrtc-option)",
                    w.source.display()
                ),
            }
        }
        e => e,
    })?;
    Ok((
        format!("{name} (PTX by {} for {})", c.compiler, c.arch),
        c.ptx,
        Some(super::CompiledBy {
            source: name,
            compiler: c.compiler,
            arch: c.arch,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_given_beat_ptxas_which_beats_the_estimate() {
        let build = sass::Build {
            release: (12, 9),
            arch: (8, 6),
        };
        let never = || -> u32 { panic!("the estimate is not needed") };
        let src = RegisterSource::Ptxas(build);
        assert_eq!(
            choose(Some(32), Some(40), Some((10, build)), never),
            (32, RegisterSource::Given)
        );
        assert_eq!(
            choose(None, Some(40), Some((10, build)), never),
            (40, RegisterSource::Given)
        );
        assert_eq!(choose(None, None, Some((10, build)), never), (10, src));
        assert_eq!(
            choose(None, None, None, || 7),
            (7, RegisterSource::Estimated)
        );
        assert_eq!(src.describe(), "ptxas 12.9 sm_86");
        assert_eq!(src.name(), "ptxas");
    }
}

/// The launch's `max_dynamic_shared_bytes` (the `cudaFuncAttributeMaxDynamicSharedMemorySize`
/// opt-in), checked as the CUDA runtime checks it: the attribute fails when static shared memory
/// plus it exceed the device's opt-in limit (`cudaDevAttrMaxSharedMemoryPerBlockOptin`, the
/// config's `shared.size_per_block_optin_bytes`); the launch fails when its dynamic shared memory
/// exceeds the attribute, or, without it, when static plus dynamic exceed
/// `shared.size_per_block_bytes` (48 KB). CUDA C++ Programming Guide, "Shared Memory" of compute
/// capabilities 7.x-9.0. `static_bytes` is where dynamic shared memory starts.
fn dynamic_shared_opt_in(
    cfg: &GpuConfig,
    spec: &crate::workload::LaunchSpec,
    w: &Workload,
    key: &str,
    static_bytes: u64,
    dynamic: i64,
) -> Result<Option<u64>> {
    let dynamic = dynamic as u64;
    let base = u64::from(cfg.shared.size_per_block_bytes);
    let optin = cfg.shared_per_block_optin_bytes();
    let Some(e) = &spec.max_dynamic_shared_bytes else {
        if static_bytes + dynamic > base {
            let more = if optin > base {
                format!(
                    "; {} allows up to {optin} bytes with the opt-in: set \
                     `max_dynamic_shared_bytes` (cudaFuncAttributeMaxDynamicSharedMemorySize) to \
                     at least {dynamic}",
                    cfg.gpu.name
                )
            } else {
                format!(" ({} has no opt-in above it)", cfg.gpu.name)
            };
            return Err(w.err(
                &format!("{key}.shared_bytes"),
                format!(
                    "= {dynamic}: {static_bytes} bytes of static plus {dynamic} of dynamic shared \
                     memory exceed the {base} bytes a block may use without opting in{more}"
                ),
            ));
        }
        return Ok(None);
    };
    let k = format!("{key}.max_dynamic_shared_bytes");
    let max = w.eval(e, &k)?;
    if max < 0 {
        return Err(w.err(&k, format!("= {max}, must be >= 0")));
    }
    let max = max as u64;
    if static_bytes + max > optin {
        return Err(w.err(
            &k,
            format!(
                "= {max}: with {static_bytes} bytes of static shared memory this exceeds the \
                 {optin} bytes per block {} allows (shared.size_per_block_optin_bytes); \
                 cudaFuncSetAttribute would fail; allowed: 0 to {}",
                cfg.gpu.name,
                optin.saturating_sub(static_bytes)
            ),
        ));
    }
    if dynamic > max {
        return Err(w.err(
            &format!("{key}.shared_bytes"),
            format!(
                "= {dynamic} exceeds the launch's max_dynamic_shared_bytes = {max}: the launch \
                 would fail (cudaErrorInvalidValue)"
            ),
        ));
    }
    Ok(Some(max))
}

/// Refuses a kernel that uses Hopper's `mbarrier` transactions or `cp.async.bulk` on a config
/// below compute capability 9.0 (PTX ISA: `cp.async.bulk`, `mbarrier.expect_tx`,
/// `mbarrier.try_wait` need sm_90), as ptxas would for its architecture.
fn check_hopper(
    cfg: &GpuConfig,
    program: &exec::Program,
    kernel: &str,
) -> std::result::Result<(), String> {
    use crate::ptx::inst::Op;
    let uses = program.insts.iter().find_map(|i| match i.op {
        Op::Mbarrier(_) => Some("mbarrier"),
        Op::CpAsyncBulk { .. } | Op::CpAsyncBulkGroup => Some("cp.async.bulk"),
        _ => None,
    });
    match uses {
        Some(what) if cfg.compute_capability().0 < 9 => Err(format!(
            "kernel `{kernel}` uses `{what}`, which needs compute capability 9.0 (sm_90); {} is {}",
            cfg.gpu.name, cfg.gpu.compute_capability
        )),
        _ => Ok(()),
    }
}
