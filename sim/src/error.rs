//! The simulator's one error type.
//!
//! Every variant carries what a user needs to find the problem: the file, the key or PTX line, the
//! offending text and what would have been accepted. The library never panics on bad input and
//! never exits; the `sim` binary prints the chain on one line and exits with code 2.

use std::path::PathBuf;

/// A location in a PTX source: 1-based line and column, plus the source line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLoc {
    /// The PTX file (or bundled path) the line comes from.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Everything that can go wrong in `sim`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A GPU config file is malformed, lacks a key, has an unknown key or an out-of-range value.
    #[error("{path}: {key}: {message}")]
    Config {
        /// The config file.
        path: String,
        /// Dotted key (`l1.sector_bytes`), or `-` when the file as a whole is wrong.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A workload file is malformed or refers to something that does not exist.
    #[error("{path}: {key}: {message}")]
    Workload {
        /// The workload file (or bundled name).
        path: String,
        /// Dotted key (`launch[0].grid`), or `-`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A sweep file (`sim sweep FILE.toml`) is malformed or has an unknown or empty key.
    #[error("{path}: {key}: {message}")]
    Sweep {
        /// The sweep file.
        path: String,
        /// Dotted key (`params.n`), or `-`.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A config argument that is neither an existing file nor a bundled config's name.
    #[error("config `{name}`: {message}")]
    UnknownConfig {
        /// What the user typed.
        name: String,
        /// Why it is not a config, and the bundled names.
        message: String,
    },
    /// A workload name that is neither bundled nor an existing file.
    #[error("unknown workload `{name}`: not a bundled workload ({known}) and no such file")]
    UnknownWorkload {
        /// What the user typed.
        name: String,
        /// The bundled names, comma-separated.
        known: String,
    },
    /// PTX that does not lex or parse, or uses something the simulator does not support.
    #[error("{loc}: {message}: `{text}`")]
    Ptx {
        /// Where.
        loc: SourceLoc,
        /// What is wrong (and, for unsupported instructions, what is supported).
        message: String,
        /// The offending source text (the instruction or token).
        text: String,
    },
    /// A kernel did something a real GPU would fault on (out-of-bounds or misaligned access).
    #[error("launch `{launch}`: {message}")]
    Fault {
        /// The launch label.
        launch: String,
        /// Memory-checker style report: instruction, PTX line, thread, address, nearest buffer.
        message: String,
    },
    /// The launch executed more warp instructions than its budget.
    #[error("launch `{launch}`: instruction budget of {budget} warp instructions exhausted (runaway kernel?); raise it with --max-warp-instructions")]
    Budget {
        /// The launch label.
        launch: String,
        /// The budget in warp instructions.
        budget: u64,
    },
    /// A CUDA source that could not be compiled to PTX (no compiler, or the compiler's errors).
    #[error("{file}: {message}")]
    Compile {
        /// The `.cu` file.
        file: String,
        /// What went wrong, with the compiler's log and how to get a compiler when none was found.
        message: String,
    },
    /// A ptxas named explicitly (`--ptxas PATH`, `$GPUMEMSIM_PTXAS`) that does not run as one.
    #[error("ptxas {}: {message}", path.display())]
    Ptxas {
        /// The ptxas asked for.
        path: PathBuf,
        /// Why it cannot be used, and how to get one.
        message: String,
    },
    /// A launch that cannot run on the configured GPU (block too large, too much shared memory...).
    #[error("launch `{launch}`: {message}")]
    Launch {
        /// The launch label.
        launch: String,
        /// Why.
        message: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
