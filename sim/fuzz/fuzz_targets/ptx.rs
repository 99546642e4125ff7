//! Arbitrary bytes as PTX text: parse, inline calls and decode every function, then estimate its
//! registers and build its SASS profile, as `plan` does.
//! Any outcome but a panic (or a hang) is fine: bad PTX must come back as an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim::exec::SymbolAddr;
use sim::ptx::StateSpace;
use std::collections::HashMap;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let Ok(module) = sim::ptx::parse_all(&src, "fuzz.ptx") else {
        return;
    };
    for f in &module.functions {
        let Ok(f) = sim::ptx::inline::inline_calls(&module, f, &src, "fuzz.ptx") else {
            continue;
        };
        // Symbols laid out as run.rs does (addresses only matter for their kind here).
        let mut symbols = HashMap::new();
        let mut at = 0u64;
        for p in &f.params {
            let _ = p.size_bytes();
            symbols.insert(p.name.clone(), SymbolAddr::Param(at));
            at += 8;
        }
        for v in module.globals.iter().chain(&f.locals) {
            let _ = v.size_bytes();
            let a = match v.space {
                StateSpace::Const => SymbolAddr::Const(0),
                StateSpace::Global => SymbolAddr::Global(0x1000),
                StateSpace::Shared => SymbolAddr::Shared(0),
                StateSpace::Local => SymbolAddr::Local(0),
                _ => continue,
            };
            symbols.insert(v.name.clone(), a);
        }
        if let Ok(program) = sim::exec::decode(&f, &symbols, &src, "fuzz.ptx") {
            // What planning does with a decoded kernel: the register estimate (liveness over its
            // control flow) and the SASS profile the timing model reads.
            let _ = sim::exec::regs::estimate(&program);
            let _ = sim::timing::sass::Profile::new(&program);
        }
    }
});
