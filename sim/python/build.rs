//! The linker flags of an extension module that does not link libpython (macOS needs
//! `-undefined dynamic_lookup`; elsewhere this adds nothing), so that a plain `cargo build` links.
fn main() {
    pyo3_build_config::add_extension_module_link_args();
}
