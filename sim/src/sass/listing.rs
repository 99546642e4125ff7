//! The SASS of a module as `nvdisasm -gp -c` prints it for a cubin that ptxas assembled with
//! `-lineinfo`: per function, its instructions in address order, each with the PTX line it came
//! from (the `.nv_debug_line_sass` section: `//## File ".nv_debug_ptx_txt", line 628` before the
//! first instruction of each run of one line) and, for a branch, the instruction it goes to.
//!
//! ```text
//! .text.sgemm_tiled16:
//!         //## File ".nv_debug_ptx_txt", line 659
//!         /*0010*/                   LDC R12, c[0x0][0x218] ;
//! .L_x_0:
//!         /*00a0*/              @!P0 BRA `(.L_x_0) ;
//! ```
//!
//! Line numbers are the PTX text's as given to ptxas, counted from 1 (`sim`'s own numbering of
//! the module); an instruction before the first line comment has line 0 (none).

use std::collections::HashMap;

/// One SASS instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inst {
    /// Its byte offset in the function (`/*00a0*/`).
    pub offset: u32,
    /// Its guard predicate as written (`@!P0`, `@UP1`), empty when it has none.
    pub guard: String,
    /// The opcode with its modifiers (`LDS.128`, `BRA.DIV`, `ISETP.GE.AND`).
    pub opcode: String,
    /// The operands as written, without the closing `;`.
    pub operands: String,
    /// The PTX line it was assembled from (0: none).
    pub ptx_line: u32,
    /// For a branch, the index of the instruction it goes to (`None`: not a branch, or a
    /// target outside the function).
    pub target: Option<usize>,
}

impl Inst {
    /// Whether it is a load, store or atomic of global, shared, local or generic memory (`LDG`,
    /// `STS`, `LDL`, `LD`, `ATOMS`, `RED`, ...; not `LDC`).
    pub fn is_memory_access(&self) -> bool {
        matches!(
            self.base(),
            "LDG"
                | "STG"
                | "LDS"
                | "STS"
                | "LDL"
                | "STL"
                | "LD"
                | "ST"
                | "ATOM"
                | "ATOMS"
                | "ATOMG"
                | "RED"
        )
    }

    /// The opcode without modifiers: `LDS` for `LDS.128`.
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or(&self.opcode)
    }

    /// Whether it reads the constant bank at a register-indexed address (`c[0x0][R0+0x224]`:
    /// lanes may differ), not a fixed one (`c[0x0][0x218]`, `c[0x0][RZ+0x10]`); `false` for an
    /// instruction without a constant-bank operand.
    pub fn constant_indexed(&self) -> bool {
        (self.operands.split("c[").nth(1))
            .and_then(|r| r.split_once("]["))
            .is_some_and(|(_, addr)| addr.contains('R') && !addr.starts_with("RZ"))
    }

    /// Whether it ends a basic block: a branch, an exit, a return, an indirect branch.
    pub fn ends_block(&self) -> bool {
        matches!(
            self.base(),
            "BRA" | "BRX" | "JMP" | "JMX" | "EXIT" | "RET" | "KILL"
        )
    }
}

/// One function (a kernel entry, or a `.func` ptxas kept).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Function {
    /// Its name, the PTX entry's (`sgemm_tiled16`).
    pub name: String,
    /// Its instructions in address order.
    pub insts: Vec<Inst>,
    /// The indices of the instructions that a label names (branch targets), ascending.
    pub labels: Vec<usize>,
}

/// All functions of a cubin, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// The functions in the listing's order.
    pub functions: Vec<Function>,
}

impl Listing {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// Reads `nvdisasm -gp -c` text. Lines it does not know (headers, section directives, other
/// comments) are skipped; an error names a line that looks like an instruction and does not
/// parse, or a branch to a label the function does not have.
pub fn parse(text: &str) -> Result<Listing, String> {
    let mut functions: Vec<Function> = vec![];
    // Per function: label name -> instruction index, and the pending labels' names.
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut branch_labels: Vec<(usize, String)> = vec![];
    let mut line = 0u32;
    let finish = |f: &mut Function,
                  labels: &mut HashMap<String, usize>,
                  branches: &mut Vec<(usize, String)>|
     -> Result<(), String> {
        for (i, name) in branches.drain(..) {
            match labels.get(&name) {
                Some(&t) => f.insts[i].target = Some(t),
                // A call or a branch into another function: no edge inside this one.
                None if name.starts_with(".L_") => {
                    return Err(format!(
                        "{}: branch at /*{:04x}*/ to {name}, which the function does not define",
                        f.name, f.insts[i].offset
                    ))
                }
                None => {}
            }
        }
        let mut at: Vec<usize> = labels.values().copied().collect();
        at.sort_unstable();
        at.dedup();
        f.labels = at;
        labels.clear();
        Ok(())
    };
    for (n, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if let Some(name) = t.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            if let Some(f) = functions.last_mut() {
                finish(f, &mut labels, &mut branch_labels)?;
            }
            functions.push(Function {
                name: name.to_string(),
                ..Function::default()
            });
            line = 0;
            continue;
        }
        let Some(f) = functions.last_mut() else {
            continue;
        };
        if let Some(rest) = t.strip_prefix("//## File ") {
            if let Some(l) = rest.rsplit("line ").next().and_then(|v| {
                v.split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse().ok())
            }) {
                line = l;
            }
            continue;
        }
        if t.starts_with(".L_") && t.ends_with(':') {
            labels.insert(t.trim_end_matches(':').to_string(), f.insts.len());
            continue;
        }
        let Some(rest) = t.strip_prefix("/*") else {
            continue;
        };
        let (offset, body) = rest
            .split_once("*/")
            .ok_or_else(|| format!("line {}: no `*/` after the offset: {t}", n + 1))?;
        let offset = u32::from_str_radix(offset.trim(), 16)
            .map_err(|_| format!("line {}: offset `{offset}` is not hex: {t}", n + 1))?;
        let body = body.trim().trim_end_matches(';').trim();
        if body.is_empty() {
            continue;
        }
        let (guard, body) = match body.strip_prefix('@') {
            Some(b) => {
                let (g, r) = b.split_once(char::is_whitespace).unwrap_or((b, ""));
                (format!("@{g}"), r.trim_start())
            }
            None => (String::new(), body),
        };
        let (opcode, operands) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        if opcode.is_empty() || !opcode.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(format!("line {}: no opcode: {t}", n + 1));
        }
        let operands = operands.trim().to_string();
        // `(.L_x_3)` (a branch), `(func)` (a call).
        if let Some(name) = operands
            .split("`(")
            .nth(1)
            .and_then(|r| r.split(')').next())
        {
            branch_labels.push((f.insts.len(), name.to_string()));
        }
        f.insts.push(Inst {
            offset,
            guard,
            opcode: opcode.to_string(),
            operands,
            ptx_line: line,
            target: None,
        });
    }
    if let Some(f) = functions.last_mut() {
        finish(f, &mut labels, &mut branch_labels)?;
    }
    Ok(Listing { functions })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An excerpt of `nvdisasm -gp -c` 13.5 of tests/fixtures/suite37/reduce-like code, verbatim
    /// in form (offsets, guards, labels, line comments, a BRA.DIV).
    const TEXT: &str = "\
//--------------------- .text.k                  --------------------------
\t.section\t.text.k,\"ax\",@progbits
k:
.text.k:
\t//## File \".nv_debug_ptx_txt\", line 12
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
\t//## File \".nv_debug_ptx_txt\", line 15
        /*0020*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        /*0030*/               @P0 BRA `(.L_x_1) ;
        /*0040*/                   BRA.DIV UR6, `(.L_x_2) ;
.L_x_1:
        /*0050*/                   LDS.128 R4, [R0+0x10] ;
\t//## File \".nv_debug_ptx_txt\", line 20
        /*0060*/                   EXIT ;
.L_x_2:
        /*0070*/                   BRA `(.L_x_2);
";

    #[test]
    fn instructions_lines_and_branch_targets_parse() {
        let l = parse(TEXT).unwrap();
        let f = l.function("k").unwrap();
        let ops: Vec<&str> = f.insts.iter().map(|i| i.opcode.as_str()).collect();
        assert_eq!(
            ops,
            [
                "LDC",
                "S2R",
                "ISETP.GE.AND",
                "BRA",
                "BRA.DIV",
                "LDS.128",
                "EXIT",
                "BRA"
            ]
        );
        let lines: Vec<u32> = f.insts.iter().map(|i| i.ptx_line).collect();
        assert_eq!(lines, [12, 12, 15, 15, 15, 15, 20, 20]);
        assert_eq!(f.insts[3].guard, "@P0");
        assert_eq!(f.insts[3].target, Some(5));
        assert_eq!(f.insts[4].target, Some(7));
        assert_eq!(f.insts[7].target, Some(7));
        assert_eq!(f.insts[5].operands, "R4, [R0+0x10]");
        assert_eq!(f.insts[5].base(), "LDS");
        assert_eq!(f.labels, [5, 7]);
        assert_eq!(f.insts[6].offset, 0x60);
    }

    #[test]
    fn a_branch_to_a_missing_label_is_an_error() {
        let bad = TEXT.replace(".L_x_2:\n", "");
        let e = parse(&bad).unwrap_err();
        assert!(e.contains(".L_x_2") && e.contains("k:"), "{e}");
    }
}
