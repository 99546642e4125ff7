//! Laying out a launch's memory: module-scope `.const` and `.global` variables, a kernel's own
//! symbols, the constant bank's initial bytes, and the kernel parameter buffer.

use super::PlannedArg;
use crate::error::Result;
use crate::exec::SymbolAddr;
use crate::memory::MemoryImage;
use crate::ptx::{self, Module, StateSpace, Type};
use crate::workload::init::{self, Elem};
use crate::workload::{Arg, Workload};
use std::collections::HashMap;

/// Places module-scope `.const` and `.global` variables; returns their symbols. A `.global`
/// variable is checked against the memory `budget` before it is allocated, as a buffer is (a
/// 1 GiB array under `--max-memory 100M` was allocated and zeroed, and the error then blamed the
/// first buffer), and one without initializer is fresh pages, not a pass of zeros.
pub(super) fn layout_module(
    module: &Module,
    image: &mut MemoryImage,
    w: &Workload,
    budget: &crate::memory::Budget,
) -> Result<HashMap<String, SymbolAddr>> {
    let mut symbols = HashMap::new();
    let mut bank = 0u64;
    for v in &module.globals {
        match v.space {
            StateSpace::Const => {
                bank = bank.next_multiple_of(u64::from(v.align.max(1)));
                let end = bank + v.size_bytes();
                if end > image.constant.len() as u64 {
                    return Err(w.err(
                        "ptx",
                        format!("constant variable `{}` ends at byte {end}, beyond the GPU's {} bytes of constant memory", v.name, image.constant.len()),
                    ));
                }
                image.constant[bank as usize..bank as usize + v.init.len()]
                    .copy_from_slice(&v.init);
                symbols.insert(v.name.clone(), SymbolAddr::Const(bank));
                bank = end;
            }
            StateSpace::Global => {
                let what = || format!("global variable `{}`", v.name);
                if let Some(left) = image.memory_left(budget) {
                    if v.size_bytes() > left.0 {
                        let m = crate::memory::over_budget(&what(), v.size_bytes(), left);
                        return Err(w.err("ptx", m));
                    }
                }
                let size = usize::try_from(v.size_bytes()).unwrap_or(usize::MAX);
                let a = if v.init.is_empty() {
                    image.alloc_zeros(&v.name, size)
                } else {
                    crate::memory::image::host_buffer(size).map(|mut data| {
                        data.extend_from_slice(&v.init);
                        data.resize(size, 0);
                        image.alloc(&v.name, data)
                    })
                }
                .map_err(|m| w.err("ptx", format!("{} {m}", what())))?;
                symbols.insert(v.name.clone(), SymbolAddr::Global(a));
            }
            _ => {}
        }
    }
    Ok(symbols)
}

/// The most local memory one thread may use, in bytes: 512 KiB, "Maximum amount of local memory
/// per thread" in the CUDA C++ Programming Guide's table of technical specifications per compute
/// capability (every compute capability from 2.0 on). ptxas accepts more; the launch fails.
pub const MAX_LOCAL_BYTES_PER_THREAD: u64 = 512 << 10;

/// Lays out a kernel's parameters and its shared and local variables (module and kernel scope)
/// into `symbols`. Returns the parameter bytes, the offset where dynamic (`extern`) shared memory
/// starts (after the static variables, 16-byte aligned), and the local bytes per thread.
pub(super) fn layout_kernel(
    module: &Module,
    f: &ptx::Function,
    symbols: &mut HashMap<String, SymbolAddr>,
) -> (u64, u64, u64) {
    fn place(end: &mut u64, align: u32, size: u64) -> u64 {
        *end = end.next_multiple_of(u64::from(align.max(1)));
        let at = *end;
        *end = end.saturating_add(size);
        at
    }
    let mut params = 0u64;
    for p in &f.params {
        symbols.insert(
            p.name.clone(),
            SymbolAddr::Param(place(&mut params, p.align, p.size_bytes())),
        );
    }
    let (mut shared, mut local) = (0u64, 0u64);
    let vars = || module.globals.iter().chain(&f.locals);
    for v in vars().filter(|v| !v.is_extern) {
        match v.space {
            StateSpace::Shared => symbols.insert(
                v.name.clone(),
                SymbolAddr::Shared(place(&mut shared, v.align, v.size_bytes())),
            ),
            StateSpace::Local => symbols.insert(
                v.name.clone(),
                SymbolAddr::Local(place(&mut local, v.align, v.size_bytes())),
            ),
            _ => None,
        };
    }
    let dynamic = shared.next_multiple_of(16);
    for v in vars().filter(|v| v.is_extern && v.space == StateSpace::Shared) {
        symbols.insert(v.name.clone(), SymbolAddr::Shared(dynamic));
    }
    (params, dynamic, local)
}

/// Writes a `[[constant]]` initialiser into its symbol.
pub(super) fn init_constant(
    module: &Module,
    image: &mut MemoryImage,
    symbols: &HashMap<String, SymbolAddr>,
    w: &Workload,
    i: usize,
    c: &crate::workload::ConstantSpec,
    read_file: &crate::workload::init::ReadFile,
) -> Result<()> {
    let key = format!("constant[{i}]");
    let var = module
        .globals
        .iter()
        .find(|g| g.name == c.symbol)
        .ok_or_else(|| {
            let names: Vec<&str> = module
                .globals
                .iter()
                .filter(|g| matches!(g.space, StateSpace::Const | StateSpace::Global))
                .map(|g| g.name.as_str())
                .collect();
            w.err(
                &format!("{key}.symbol"),
                format!(
                    "no symbol `{}` in the PTX (symbols: {})",
                    c.symbol,
                    names.join(", ")
                ),
            )
        })?;
    let elem = Elem::parse(&c.ty)
        .ok_or_else(|| w.err(&format!("{key}.type"), format!("unknown type `{}`", c.ty)))?;
    let size = var.size_bytes();
    let count = match &c.count {
        Some(e) => w.eval(e, &format!("{key}.count"))?,
        None => (size / elem.bytes() as u64) as i64,
    };
    let count = usize::try_from(count)
        .map_err(|_| w.err(&format!("{key}.count"), format!("= {count}, must be >= 0")))?;
    if count
        .checked_mul(elem.bytes())
        .is_none_or(|b| b as u64 > size)
    {
        return Err(w.err(
            &format!("{key}.count"),
            format!(
                "{count} x {} bytes exceed the {size} bytes of `{}`",
                elem.bytes(),
                c.symbol
            ),
        ));
    }
    let data = init::build(&c.init, elem, count, read_file)
        .map_err(|m| w.err(&format!("{key}.init"), m))?;
    match symbols.get(&c.symbol) {
        Some(SymbolAddr::Const(off)) => {
            let off = *off as usize;
            image.constant[off..off + data.len()].copy_from_slice(&data);
        }
        Some(SymbolAddr::Global(a)) => {
            let a = *a;
            let alloc = image
                .allocs
                .iter_mut()
                .find(|x| x.base == a)
                .expect("global symbols are allocated");
            alloc.bytes_mut()[..data.len()].copy_from_slice(&data);
        }
        _ => {
            return Err(w.err(
                &format!("{key}.symbol"),
                format!("`{}` is not a .const or .global variable", c.symbol),
            ))
        }
    }
    Ok(())
}

/// Lays the launch's arguments out as the PTX `.param` list declares them.
pub(super) fn build_params(
    f: &ptx::Function,
    spec: &crate::workload::LaunchSpec,
    (buffers, objects): (&HashMap<String, u64>, &[crate::exec::texture::TexObject]),
    w: &Workload,
    key: &str,
    bytes: u64,
) -> Result<(Vec<u8>, Vec<PlannedArg>)> {
    let object = |t: &str| objects.iter().find(|o| o.name == t);
    if spec.args.len() != f.params.len() {
        return Err(w.err(
            &format!("{key}.args"),
            format!(
                "{} arguments given, kernel `{}` takes {}",
                spec.args.len(),
                f.name,
                f.params.len()
            ),
        ));
    }
    let mut out = vec![0u8; bytes as usize];
    let mut args = Vec::with_capacity(f.params.len());
    let mut off = 0u64;
    for (j, (p, a)) in f.params.iter().zip(&spec.args).enumerate() {
        off = off.next_multiple_of(u64::from(p.align.max(1)));
        let k = format!("{key}.args[{j}]");
        let value: u64 = match a {
            Arg::Text(t) if buffers.contains_key(t) => {
                if p.ty.bytes() != 8 || p.count != 1 {
                    return Err(w.err(
                        &k,
                        format!(
                            "buffer `{t}` passed to `{}`, which is not a 64-bit pointer parameter",
                            p.name
                        ),
                    ));
                }
                buffers[t]
            }
            Arg::Text(t) if object(t).is_some() => {
                if p.ty.bytes() != 8 || p.count != 1 {
                    return Err(w.err(
                        &k,
                        format!(
                            "texture or surface `{t}` passed to `{}`, which is not a 64-bit parameter (cudaTextureObject_t, cudaSurfaceObject_t)",
                            p.name
                        ),
                    ));
                }
                object(t).map_or(0, |o| o.handle)
            }
            Arg::Text(t) => {
                let v = w.eval(&crate::workload::Expr::Text(t.clone()), &k)?;
                int_for(p, v).map_err(|m| w.err(&k, m))?
            }
            Arg::Int(v) => int_for(p, *v).map_err(|m| w.err(&k, m))?,
            Arg::Float(x) => match p.ty {
                Type::F64 => x.to_bits(),
                Type::F32 => u64::from((*x as f32).to_bits()),
                _ => {
                    return Err(w.err(
                        &k,
                        format!(
                            "float {x} passed to the .{} parameter `{}`",
                            p.ty.name(),
                            p.name
                        ),
                    ))
                }
            },
        };
        let n = (p.ty.bytes() as usize).min(8);
        out[off as usize..off as usize + n].copy_from_slice(&value.to_le_bytes()[..n]);
        args.push(match a {
            Arg::Text(t) if buffers.contains_key(t) => PlannedArg::Buffer(t.clone()),
            Arg::Text(t) if object(t).is_some() => PlannedArg::Object(t.clone()),
            _ => PlannedArg::Bytes(value.to_le_bytes()[..n].to_vec()),
        });
        off += p.size_bytes();
    }
    Ok((out, args))
}

/// The bits of integer argument `v` for parameter `p`: a float parameter takes its value, an
/// integer one the integer if its width holds it ([`Type::holds_int`]; 2^40 for a `.u32` was
/// passed as 0).
fn int_for(p: &ptx::Param, v: i64) -> Result<u64, String> {
    match p.ty {
        Type::F32 => Ok(u64::from((v as f32).to_bits())),
        Type::F64 => Ok((v as f64).to_bits()),
        t if p.count == 1 && !t.holds_int(v) => {
            let (lo, hi) = t.int_range();
            Err(format!(
                "{v} does not fit the .{} parameter `{}`; allowed: {lo} to {hi}",
                t.name(),
                p.name
            ))
        }
        _ => Ok(v as u64),
    }
}
