//! Arbitrary bytes as a GPU config and a workload (split at the first NUL byte): both loaders must
//! return an error or a value, never panic. A workload that loads is planned (PTX parsed, memory
//! laid out, kernels decoded; nothing executed) against the config, or the bundled H200 config
//! when the config text does not load; its `ptx` names a bundled kernel (e.g. `ptx/reduce.ptx`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim::config::GpuConfig;
use sim::run::{plan, Options};
use sim::workload::{Source, Workload};

const H200: &str = include_str!("../../../configs/h200.toml");

fuzz_target!(|data: &[u8]| {
    let (cfg_bytes, wl_bytes) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let cfg_text = String::from_utf8_lossy(cfg_bytes);
    let wl_text = String::from_utf8_lossy(wl_bytes);
    let cfg = GpuConfig::from_toml_str(&cfg_text, "fuzz.toml");
    let Ok(w) = Workload::from_toml_str(&wl_text, Source::Bundled("fuzz.toml".into())) else {
        return;
    };
    if w.cuda.is_some() {
        return; // would run NVRTC or clang
    }
    let cfg = match cfg {
        Ok(c) => c,
        Err(_) => GpuConfig::from_toml_str(H200, "configs/h200.toml").unwrap(),
    };
    let _ = plan(&cfg, &w, &Options::default());
});
