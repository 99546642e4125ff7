//! The memory path of the warp loop: address generation, the functional load or store, and the
//! warp-level access handed to the `memory` models, whose outcome is counted here.
//!
//! One file per part, each adding its methods to [`Ctx`](super::step::Ctx): `address` (lane
//! addresses, state spaces, the global allocation an access falls in, alignment and bounds
//! checks, faults), `load` and `store` (the functional access: common cases first, then lane by
//! lane), `word` (the fast path's whole-warp 32-bit word accesses), `atomic` (`atom` and `red`),
//! `model` (the access handed to the memory models: the dispatch on the state space, constant,
//! shared and parameter loads) and `global` (the L1 part of a global or local access and its
//! counts).

mod address;
mod atomic;
pub mod bulk;
mod global;
mod load;
mod model;
mod store;
mod tensor;
mod texture;
mod wmma;
mod word;

pub use address::resolve;
// For `atomic`.
use address::resolved;
use model::note_worst;
