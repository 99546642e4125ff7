//! The PTX front end: lexer, parser, module IR, and the decoded program the simulator runs
//! ([`decode`]).
//!
//! `parse(text, file)` turns PTX text from nvcc, NVRTC or clang into a [`Module`]; every
//! instruction's opcode and modifiers are checked against what the simulator models
//! ([`inst::decode`]), so an unsupported one is an error naming the PTX line and the instruction
//! before anything runs.

pub mod ast;
pub mod decode;
pub mod float16;
pub mod inline;
pub mod inst;
pub mod lexer;
pub mod parser;

pub use ast::*;
pub use parser::{parse, parse_all};
