//! libnvrtc, found the same way on every machine (issue 42).
//!
//! cudarc opens the unversioned `libnvrtc.so` first, so a system CUDA 11.8 (Debian's
//! `nvidia-cuda-toolkit`) won over the 12.9 wheel on `LD_LIBRARY_PATH`, and results changed with
//! it (warp instructions +4.7%, registers 24 -> 28). The library is chosen here instead, in
//! [`candidates`]' order, and called through `libloading`:
//! 1. `$GPUMEMSIM_NVRTC`, a path to a libnvrtc (an error if it does not load: it was asked for);
//! 2. a versioned name (`libnvrtc.so.12`, then `.13`, `.11.2`) on the loader's search path
//!    (`LD_LIBRARY_PATH`, then the system's);
//! 3. the PyPI wheel `nvidia-cuda-nvrtc-cu12` in the usual site-packages directories, with no
//!    `LD_LIBRARY_PATH` needed;
//! 4. a CUDA toolkit (`$CUDA_HOME`, `/usr/local/cuda`);
//! 5. the unversioned `libnvrtc.so`, last.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `nvrtcResult` (0 is `NVRTC_SUCCESS`).
type Status = c_int;
/// `nvrtcProgram`.
type Program = *mut c_void;

/// The NVRTC entry points the simulator calls, from one loaded library.
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Program) -> Status,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
}

/// A loaded libnvrtc: where it came from and its entry points.
pub struct Nvrtc {
    /// What was opened: a path, or a name the dynamic loader resolved.
    pub source: String,
    api: Api,
    // Keeps the library mapped for the life of the process ([`library`] holds it in a static).
    _lib: libloading::Library,
}

/// The libraries tried, in order (see the module's documentation); `env` is
/// `$GPUMEMSIM_NVRTC`'s value, `wheel_dirs` the `nvidia/cuda_nvrtc/lib` directories to look in.
pub fn candidates(env: Option<PathBuf>, wheel_dirs: &[PathBuf]) -> Vec<PathBuf> {
    if let Some(p) = env {
        return vec![p];
    }
    let versioned = ["libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so.11.2"];
    let mut out: Vec<PathBuf> = versioned.iter().map(PathBuf::from).collect();
    for dir in wheel_dirs {
        out.extend(versioned.iter().map(|v| dir.join(v)));
    }
    let toolkits = std::env::var_os("CUDA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/usr/local/cuda")]);
    for t in toolkits {
        out.extend(versioned.iter().map(|v| t.join("lib64").join(v)));
    }
    out.push(PathBuf::from("libnvrtc.so"));
    out
}

/// The wheel's library directories (`site-packages/nvidia/cuda_nvrtc/lib`) that exist.
fn wheel_dirs() -> Vec<PathBuf> {
    crate::sass::find::site_package_dirs("nvidia/cuda_nvrtc/lib")
        .into_iter()
        .filter(|d| d.is_dir())
        .collect()
}

/// Opens `path` and looks up the entry points.
fn open(path: &PathBuf) -> Result<Nvrtc, String> {
    // SAFETY: loading libnvrtc runs its initialisers, which have no preconditions; each symbol
    // is given the signature NVIDIA's nvrtc.h declares for it.
    unsafe {
        let lib = libloading::Library::new(path).map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal) => {
                *lib.get(concat!($name, "\0").as_bytes())
                    .map_err(|e| format!("{}: no {}: {e}", path.display(), $name))?
            };
        }
        let api = Api {
            version: sym!("nvrtcVersion"),
            create: sym!("nvrtcCreateProgram"),
            compile: sym!("nvrtcCompileProgram"),
            ptx_size: sym!("nvrtcGetPTXSize"),
            ptx: sym!("nvrtcGetPTX"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
            destroy: sym!("nvrtcDestroyProgram"),
            error_string: sym!("nvrtcGetErrorString"),
        };
        Ok(Nvrtc {
            source: path.display().to_string(),
            api,
            _lib: lib,
        })
    }
}

/// The libnvrtc of this process: the first of [`candidates`] that loads, found once; the error
/// says what was tried and how to get one.
pub fn library() -> Result<&'static Nvrtc, String> {
    static LIB: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let env = std::env::var_os("GPUMEMSIM_NVRTC")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        if let Some(p) = &env {
            return open(p).map_err(|e| format!("GPUMEMSIM_NVRTC={}: {e}", p.display()));
        }
        let tried = candidates(None, &wheel_dirs());
        tried.iter().find_map(|p| open(p).ok()).ok_or_else(|| {
            format!(
                "libnvrtc not found (tried {} and {} more): {}",
                tried[0].display(),
                tried.len() - 1,
                super::NVRTC_HINT
            )
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Nvrtc {
    /// NVRTC's version, `(major, minor)`.
    pub fn version(&self) -> Result<(i32, i32), String> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are valid for writes.
        let s = unsafe { (self.api.version)(&mut major, &mut minor) };
        self.check(s, "nvrtcVersion")?;
        Ok((major, minor))
    }

    /// The text of status `s` of call `what`, or `Ok` for success.
    fn check(&self, s: Status, what: &str) -> Result<(), String> {
        if s == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString returns a static string for any status.
        let text = unsafe { CStr::from_ptr((self.api.error_string)(s)) };
        Err(format!("{what} failed: {}", text.to_string_lossy()))
    }

    /// Compiles `source` as the program `name` with `options`: the PTX, or the compiler's log.
    pub fn compile(&self, name: &CStr, source: &CStr, options: &[&str]) -> Result<String, String> {
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(*o).map_err(|_| format!("option {o:?} contains a NUL byte")))
            .collect::<Result<_, _>>()?;
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let n = c_int::try_from(ptrs.len()).map_err(|_| "too many NVRTC options".to_string())?;
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: `prog` is written by a successful create and destroyed once below; every
        // pointer passed lives until the calls return; the buffers have the sizes NVRTC reported.
        unsafe {
            let s = (self.api.create)(
                &mut prog,
                source.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            self.check(s, "nvrtcCreateProgram")?;
            let text =
                |size: unsafe extern "C" fn(Program, *mut usize) -> Status,
                 get: unsafe extern "C" fn(Program, *mut c_char) -> Status| {
                    let mut n = 0usize;
                    if size(prog, &mut n) != 0 || n == 0 {
                        return String::new();
                    }
                    let mut buf = vec![0u8; n];
                    if get(prog, buf.as_mut_ptr().cast()) != 0 {
                        return String::new();
                    }
                    CStr::from_bytes_until_nul(&buf)
                        .map(|c| c.to_string_lossy().into_owned())
                        .unwrap_or_default()
                };
            let s = (self.api.compile)(prog, n, ptrs.as_ptr());
            let out = match self.check(s, "nvrtcCompileProgram") {
                Ok(()) => Ok(text(self.api.ptx_size, self.api.ptx)),
                Err(e) => Err((e, text(self.api.log_size, self.api.log))),
            };
            (self.api.destroy)(&mut prog);
            out.map_err(|(e, log)| format!("{e}\n{}", log.trim_end()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_names_come_before_the_unversioned_one() {
        let wheel = PathBuf::from("/site/nvidia/cuda_nvrtc/lib");
        let c = candidates(None, std::slice::from_ref(&wheel));
        assert_eq!(c[0], PathBuf::from("libnvrtc.so.12"));
        assert_eq!(c.last(), Some(&PathBuf::from("libnvrtc.so")));
        let first_wheel = c.iter().position(|p| p.starts_with(&wheel)).unwrap();
        let unversioned = c
            .iter()
            .position(|p| p == &PathBuf::from("libnvrtc.so"))
            .unwrap();
        assert!(first_wheel < unversioned, "{c:?}");
        assert_eq!(c[first_wheel], wheel.join("libnvrtc.so.12"));
    }

    #[test]
    fn an_explicit_library_is_the_only_candidate() {
        let p = PathBuf::from("/opt/nvrtc/libnvrtc.so.12.9");
        assert_eq!(candidates(Some(p.clone()), &[]), vec![p]);
    }
}
