//! CUDA errors as one readable line: `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was
//! encountered) while synchronizing after launch `constant``. cudarc's `DriverError` prints as a
//! Debug tuple; this asks the driver for the error's name and description instead, and adds what
//! validate was doing.

use anyhow::anyhow;
use cudarc::driver::DriverError;

/// `CUDA_ERROR_NAME (description)`, or the numeric code when the driver cannot name it.
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("CUresult {:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Adds context to the `Result` of a cudarc call.
pub trait CudaResultExt<T> {
    /// Turns a [`DriverError`] into `"<error> while <what>"`.
    fn cuda(self, what: impl FnOnce() -> String) -> anyhow::Result<T>;
}

impl<T> CudaResultExt<T> for Result<T, DriverError> {
    fn cuda(self, what: impl FnOnce() -> String) -> anyhow::Result<T> {
        self.map_err(|e| anyhow!("{} while {}", describe(&e), what()))
    }
}
