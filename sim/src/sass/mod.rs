//! What ptxas makes of the PTX for the config's architecture, when ptxas is available.
//!
//! Today: the registers per thread of each kernel, as `ptxas -v` reports them (`Used N
//! registers`), the number the driver's own assembly of the same PTX gives the launch and
//! therefore the occupancy the hardware sees (Nsight Compute's `launch__registers_per_thread`).
//! The SASS itself (instructions per PTX instruction, merged vector accesses, LDC versus constant
//! operands) is the next step of issue 37; `timing::sass` still models it from committed sm_90
//! SASS.
//!
//! - [`find`]: which ptxas ([`Ptxas`]: an explicit path, else the PyPI wheel
//!   `nvidia-cuda-nvcc-cu12`, a CUDA toolkit, the `PATH`), its release and the `sm_` targets it
//!   serves (ptxas 12.9: sm_50 to sm_121; CUDA 13 dropped sm_50 to sm_72);
//! - [`ptxas`]: running it on a module (bounded by a timeout) and reading its `-v` log;
//! - [`cache`]: its logs on disk, keyed by the PTX text, the architecture and the ptxas version,
//!   so a module is assembled once per machine (a cache that cannot be read or written only costs
//!   the time of running ptxas again).
//!
//! [`module_registers`] ties them together for the run. ptxas is never required: where it is not
//! found, serves no target for the GPU (compute capability 1.x to 3.x) or rejects the PTX (a PTX
//! ISA newer than it knows), the launch keeps the estimate from the PTX (`exec::regs::estimate`)
//! and carries a note saying why. An explicitly named ptxas that does not run is an error.

pub mod cache;
pub mod count;
pub mod disasm;
pub mod find;
pub mod flow;
pub mod listing;
pub mod merge;
pub mod ptxas;
pub mod unroll;

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use cache::CacheDir;
pub use find::{Tool, PTXAS_HINT};

/// Which ptxas to use (`sim run --ptxas auto|off|PATH`, `$GPUMEMSIM_PTXAS`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Ptxas {
    /// The first found of the PyPI wheel, a CUDA toolkit and the `PATH` ([`find::candidates`]);
    /// none found: the estimate, with a note.
    #[default]
    Auto,
    /// Never: registers are estimated from the PTX (what every run did before ptxas was used).
    Off,
    /// This binary; an error when it does not run.
    Path(PathBuf),
}

impl std::str::FromStr for Ptxas {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "" => Err("empty ptxas choice (allowed: auto, off, or the path of a ptxas)".into()),
            "auto" => Ok(Ptxas::Auto),
            "off" | "none" => Ok(Ptxas::Off),
            path => Ok(Ptxas::Path(PathBuf::from(path))),
        }
    }
}

/// How ptxas is found and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Which ptxas.
    pub ptxas: Ptxas,
    /// Where its logs are kept between runs.
    pub cache: CacheDir,
    /// How long one assembly may take before it is abandoned (the launch then keeps the
    /// estimate, with a note). Default [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// Which nvdisasm lists the SASS for the instruction counts (`sim run --nvdisasm`,
    /// `$GPUMEMSIM_NVDISASM`): found as [`disasm::candidates`] says, a path, or off (the counts
    /// are then estimated from the PTX).
    pub nvdisasm: Ptxas,
}

/// ptxas's time limit for one module: a large kernel takes seconds (the bundled ones 2 to 20
/// ms); a minute means it hangs.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for Settings {
    fn default() -> Self {
        Settings {
            ptxas: Ptxas::Auto,
            cache: CacheDir::Default,
            timeout: DEFAULT_TIMEOUT,
            nvdisasm: Ptxas::Auto,
        }
    }
}

impl Settings {
    /// Settings that never run ptxas (registers estimated from the PTX).
    pub fn off() -> Self {
        Settings {
            ptxas: Ptxas::Off,
            ..Settings::default()
        }
    }
}

/// The assembly a register count came from: ptxas's release and the target architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Build {
    /// ptxas's release, `(12, 9)` for `Cuda compilation tools, release 12.9, V12.9.86`.
    pub release: (u32, u32),
    /// The `sm_` target, `(8, 6)` for `-arch=sm_86`.
    pub arch: (u32, u32),
}

impl std::fmt::Display for Build {
    /// `ptxas 12.9 sm_86`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ptxas {}.{} sm_{}{}",
            self.release.0, self.release.1, self.arch.0, self.arch.1
        )
    }
}

/// What ptxas says about the kernels of one PTX module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleRegisters {
    /// ptxas assembled the module: registers per thread of each entry, by PTX entry name.
    Assembled {
        /// Which ptxas, for which target.
        build: Build,
        /// `Used N registers` of each `Compiling entry function 'NAME'`.
        entries: HashMap<String, u32>,
    },
    /// ptxas was not used; the note says why, for the user (`None`: turned off).
    NotUsed(Option<String>),
}

impl ModuleRegisters {
    /// ptxas's registers per thread for the entry `kernel` and the build they came from, or the
    /// note saying why there are none (`None`: ptxas turned off).
    pub fn entry(&self, kernel: &str) -> std::result::Result<(u32, Build), Option<String>> {
        match self {
            ModuleRegisters::Assembled { build, entries } => match entries.get(kernel) {
                Some(&n) => Ok((n, *build)),
                None => Err(Some(format!(
                    "{build} printed no register count for `{kernel}`: registers per thread \
                     estimated from the PTX"
                ))),
            },
            ModuleRegisters::NotUsed(note) => Err(note.clone()),
        }
    }
}

/// The registers per thread of every entry of the PTX module `ptx` (named `ptx_name` in notes),
/// assembled by the ptxas of `settings` for compute capability `cc`.
///
/// Errors only when an explicitly named ptxas does not run; everything else that keeps ptxas
/// from answering (none found, an architecture it does not serve, its errors on this PTX, its
/// timeout) is [`ModuleRegisters::NotUsed`] with a note.
pub fn module_registers(
    settings: &Settings,
    cc: (u32, u32),
    ptx: &str,
    ptx_name: &str,
) -> Result<ModuleRegisters> {
    let tool = match find::locate(&settings.ptxas) {
        Ok(Some(tool)) => tool,
        Ok(None) if settings.ptxas == Ptxas::Off => return Ok(ModuleRegisters::NotUsed(None)),
        Ok(None) => {
            return Ok(ModuleRegisters::NotUsed(Some(format!(
                "registers per thread estimated from the PTX: no ptxas found ({PTXAS_HINT})"
            ))))
        }
        Err(message) => {
            let path = match &settings.ptxas {
                Ptxas::Path(p) => p.clone(),
                _ => PathBuf::from("ptxas"),
            };
            let message = format!("{message} (get one: {PTXAS_HINT})");
            return Err(Error::Ptxas { path, message });
        }
    };
    if !tool.serves(cc) {
        return Ok(ModuleRegisters::NotUsed(Some(format!(
            "ptxas {}.{} does not assemble for sm_{}{} (it serves {}): registers per thread \
             estimated from the PTX",
            tool.release.0,
            tool.release.1,
            cc.0,
            cc.1,
            tool.served_range()
        ))));
    }
    let build = Build {
        release: tool.release,
        arch: cc,
    };
    match ptxas::assemble(&tool, cc, ptx, ptx_name, settings) {
        Ok(log) => Ok(ModuleRegisters::Assembled {
            build,
            entries: ptxas::parse_registers(&log).into_iter().collect(),
        }),
        Err(why) => Ok(ModuleRegisters::NotUsed(Some(format!(
            "{build} failed on {ptx_name}, registers per thread estimated from the PTX: {why}"
        )))),
    }
}

/// The SASS that a launch's instruction counts came from: ptxas's and nvdisasm's releases and the
/// target architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SassBuild {
    /// ptxas and its target.
    pub ptxas: Build,
    /// nvdisasm's release, `(13, 5)`.
    pub nvdisasm: (u32, u32),
}

impl std::fmt::Display for SassBuild {
    /// `ptxas 12.9 sm_90 SASS (nvdisasm 13.5)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} SASS (nvdisasm {}.{})",
            self.ptxas, self.nvdisasm.0, self.nvdisasm.1
        )
    }
}

/// A kernel's SASS, for counting what the GPU executes ([`count`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSass {
    /// Where it came from.
    pub build: SassBuild,
    /// The kernel's function in the listing.
    pub function: Arc<listing::Function>,
}

/// The SASS of a PTX module, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleListing {
    /// ptxas assembled it and nvdisasm listed it.
    Listed {
        /// The tools and target.
        build: SassBuild,
        /// Its functions.
        listing: Arc<listing::Listing>,
    },
    /// No SASS: the note says why, for the user (`None`: ptxas turned off).
    NotUsed(Option<String>),
}

impl ModuleListing {
    /// The SASS of entry `kernel`, or the note saying why there is none.
    pub fn kernel(&self, kernel: &str) -> std::result::Result<KernelSass, Option<String>> {
        match self {
            ModuleListing::Listed { build, listing } => match listing.function(kernel) {
                Some(f) => Ok(KernelSass {
                    build: *build,
                    function: Arc::new(f.clone()),
                }),
                None => Err(Some(format!("{build} has no function `{kernel}`"))),
            },
            ModuleListing::NotUsed(note) => Err(note.clone()),
        }
    }
}

/// The SASS of the PTX module `ptx` (named `ptx_name` in notes) for compute capability `cc`:
/// assembled by the ptxas of `settings` with line info and listed by nvdisasm
/// ([`disasm::listing_text`]), parsed ([`listing::parse`]). Never an error: whatever keeps it
/// from being listed (ptxas off or missing, no nvdisasm, an architecture either does not serve,
/// their errors) is [`ModuleListing::NotUsed`] with a note, and the counts stay the PTX estimate.
pub fn module_listing(
    settings: &Settings,
    cc: (u32, u32),
    ptx: &str,
    ptx_name: &str,
) -> ModuleListing {
    let tool = match find::locate(&settings.ptxas) {
        Ok(Some(t)) => t,
        Ok(None) if settings.ptxas == Ptxas::Off => return ModuleListing::NotUsed(None),
        _ => return ModuleListing::NotUsed(Some(format!("no ptxas found ({PTXAS_HINT})"))),
    };
    let nv = match disasm::locate(&settings.nvdisasm) {
        Ok(Some(nv)) => nv,
        Ok(None) if settings.nvdisasm == Ptxas::Off => return ModuleListing::NotUsed(None),
        Ok(None) => {
            return ModuleListing::NotUsed(Some(format!(
                "no nvdisasm found ({})",
                disasm::NVDISASM_HINT
            )))
        }
        Err(why) => return ModuleListing::NotUsed(Some(why)),
    };
    if !tool.serves(cc) || !nv.serves(cc) {
        return ModuleListing::NotUsed(Some(format!(
            "ptxas {}.{} and nvdisasm {}.{} do not both serve sm_{}{}",
            tool.release.0, tool.release.1, nv.release.0, nv.release.1, cc.0, cc.1
        )));
    }
    let build = SassBuild {
        ptxas: Build {
            release: tool.release,
            arch: cc,
        },
        nvdisasm: nv.release,
    };
    match disasm::listing_text(&tool, &nv, cc, ptx, ptx_name, settings)
        .and_then(|t| listing::parse(&t))
    {
        Ok(l) => ModuleListing::Listed {
            build,
            listing: Arc::new(l),
        },
        Err(why) => ModuleListing::NotUsed(Some(format!("{build} failed on {ptx_name}: {why}"))),
    }
}
