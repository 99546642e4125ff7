//! ptxas's logs kept between runs, so a module is assembled once per machine, ptxas release and
//! target.
//!
//! One file per assembly, `<dir>/ptxas/<key>.log`: the key is the SHA-256 of the ptxas version
//! (`12.9.86`), its arguments (`-v -arch=sm_86`) and the PTX text as given to it. The directory is
//! [`CacheDir::resolve`]'s: `$GPUMEMSIM_CACHE_DIR` (`off`: none), else
//! `$XDG_CACHE_HOME/gpumemsim`, else `~/.cache/gpumemsim`. Files are written whole under a
//! temporary name and renamed, so concurrent runs never read half a log; a cache that cannot be
//! created, read or written is skipped without a word (ptxas then runs again), and a file that
//! does not carry its key's header is ignored.
//!
//! Within a process the logs are also kept in memory, so the plans of one test run or of many
//! workloads of one `sim run` share them even without a writable cache directory.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where the logs are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CacheDir {
    /// `$GPUMEMSIM_CACHE_DIR` (`off`: none), else `$XDG_CACHE_HOME/gpumemsim`, else
    /// `$HOME/.cache/gpumemsim`.
    #[default]
    Default,
    /// Nowhere on disk.
    Off,
    /// This directory.
    Dir(PathBuf),
}

impl CacheDir {
    /// The directory, `None` when there is none.
    pub fn resolve(&self) -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        match self {
            CacheDir::Off => None,
            CacheDir::Dir(d) => Some(d.clone()),
            CacheDir::Default => match var("GPUMEMSIM_CACHE_DIR") {
                Some(v) if v == "off" => None,
                Some(v) => Some(PathBuf::from(v)),
                None => var("XDG_CACHE_HOME")
                    .map(|x| PathBuf::from(x).join("gpumemsim"))
                    .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/gpumemsim"))),
            },
        }
    }
}

/// The key of one assembly: hex SHA-256 of the ptxas version, its arguments and the PTX.
pub fn key(version: &str, args: &[String], ptx: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"gpumemsim ptxas log 1\0");
    h.update(version.as_bytes());
    h.update(b"\0");
    h.update(args.join(" ").as_bytes());
    h.update(b"\0");
    h.update(ptx.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn memory() -> &'static Mutex<HashMap<String, String>> {
    static LOGS: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    LOGS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn header(key: &str) -> String {
    format!("# gpumemsim ptxas log {key}\n")
}

fn file(dir: &Path, key: &str) -> PathBuf {
    dir.join("ptxas").join(format!("{key}.log"))
}

/// The log kept under `key`: from this process's memory, else from `dir`.
pub fn read(dir: Option<&Path>, key: &str) -> Option<String> {
    if let Some(log) = memory().lock().ok().and_then(|m| m.get(key).cloned()) {
        return Some(log);
    }
    let text = std::fs::read_to_string(file(dir?, key)).ok()?;
    let log = text.strip_prefix(&header(key))?.to_string();
    if let Ok(mut m) = memory().lock() {
        m.insert(key.to_string(), log.clone());
    }
    Some(log)
}

/// Keeps `log` under `key` in memory and, where it can, in `dir`.
pub fn write(dir: Option<&Path>, key: &str, log: &str) {
    if let Ok(mut m) = memory().lock() {
        m.insert(key.to_string(), log.to_string());
    }
    if let Some(dir) = dir {
        let _ = write_file(&file(dir, key), &format!("{}{log}", header(key)));
    }
}

/// The text kept under `key` ([`read`]), else what `make` gives, kept ([`write`]); `make`'s
/// error is returned and nothing is kept.
pub fn read_or_make(
    dir: Option<&Path>,
    key: &str,
    make: impl FnOnce() -> Result<String, String>,
) -> Result<String, String> {
    if let Some(text) = read(dir, key) {
        return Ok(text);
    }
    let text = make()?;
    write(dir, key, &text);
    Ok(text)
}

fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), unique()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// A number no other call of this process gets.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A new, empty directory under the system's temporary directory, for one ptxas run (its input
/// and its output); the caller removes it.
pub fn scratch_dir() -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "gpumemsim-ptxas-{}-{}-{nanos}",
        std::process::id(),
        unique()
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_version_arguments_and_text_and_logs_round_trip() {
        let args = |a: &str| vec!["-v".to_string(), format!("-arch={a}")];
        let k = key("12.9.86", &args("sm_86"), ".version 8.0");
        assert_eq!(k.len(), 64);
        assert_ne!(k, key("12.9.41", &args("sm_86"), ".version 8.0"));
        assert_ne!(k, key("12.9.86", &args("sm_90"), ".version 8.0"));
        assert_ne!(k, key("12.9.86", &args("sm_86"), ".version 8.1"));

        let dir = std::env::temp_dir().join(format!("gpumemsim-cache-test-{}", std::process::id()));
        let k = key("test", &args("sm_86"), &format!("{dir:?}"));
        write(Some(&dir), &k, "ptxas info    : Used 10 registers\n");
        let on_disk = std::fs::read_to_string(file(&dir, &k)).unwrap();
        assert!(on_disk.starts_with("# gpumemsim ptxas log "), "{on_disk}");
        memory().lock().unwrap().clear();
        assert_eq!(
            read(Some(&dir), &k).as_deref(),
            Some("ptxas info    : Used 10 registers\n")
        );
        // A file without its key's header (another program's, or torn) is not a log.
        memory().lock().unwrap().clear();
        std::fs::write(file(&dir, &k), "Used 99 registers\n").unwrap();
        assert_eq!(read(Some(&dir), &k), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_unwritable_cache_is_skipped() {
        // A regular file where the directory should be: nothing can be created under it.
        let blocker =
            std::env::temp_dir().join(format!("gpumemsim-cache-file-{}", std::process::id()));
        std::fs::write(&blocker, "not a directory").unwrap();
        let k = key("test", &[], "unwritable");
        write(Some(&blocker), &k, "log");
        assert!(!file(&blocker, &k).exists());
        std::fs::remove_file(&blocker).ok();
        assert_eq!(CacheDir::Off.resolve(), None);
        assert_eq!(
            CacheDir::Dir("/x".into()).resolve(),
            Some(PathBuf::from("/x"))
        );
    }
}
