//! End-to-end specification of what `sim run` shows of a user's own kernel (issue 41): the
//! counts per CUDA source line (`--per-line`), and the output buffers as files
//! (`--save-outputs`).
//!
//! 1. The fixture `tests/fixtures/lineinfo/lines.ptx` is written by hand from `lines.cu` with
//!    `.loc` directives: one block of 64 threads (two warps) runs a loop of 32 coalesced loads
//!    (line 7), a scattered store (line 8), a shared store with a 2-way bank conflict (line 9)
//!    and an RGBA store (line 10). Every per-line count below is derived by hand in its test.
//! 2. The same PTX without its `.loc` lines falls back to PTX lines.
//! 3. `--save-outputs` writes `.npy` files that read back to the kernel's results with the
//!    workload's shape, and a PNG of an image buffer; it never replaces a file without
//!    `--force`.
//!
//! The binary runs from the workspace root, so paths read as a user types them.

use serde_json::Value;
mod common;

use common::{root, sim};
use std::path::{Path, PathBuf};

const FIXTURE: &str = "tests/fixtures/lineinfo/lines.toml";

/// `sim ARGS...`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = sim(args);
    assert_eq!(code, Some(0), "sim {args:?}\n{out}\n{err}");
    out
}

/// A fresh empty directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-lineinfo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The one launch of the JSON document `out`.
fn launch(out: &str) -> Value {
    let doc: Value = serde_json::from_str(out).expect("JSON");
    doc["workloads"][0]["launches"][0].clone()
}

/// The 1-based line of the PTX file that holds `needle`.
fn ptx_line(file: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u64 + 1)
        .unwrap_or_else(|| panic!("`{needle}` not in {file}"))
}

#[test]
fn per_line_json_attributes_every_count_to_its_cuda_line_most_costly_first() {
    // PTX counts (`--ptxas off`): the ranking below is by PTX warp instructions; with ptxas the
    // lines count their SASS ones (the_source_view_counts_the_sass_of_each_line).
    let out = ok(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--per-line",
        "--format",
        "json",
        "--ptxas",
        "off",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let files = &doc["workloads"][0]["source_files"];
    assert_eq!(files[0]["index"], 1);
    assert_eq!(files[0]["name"], "/lines.cu");
    assert_eq!(files[0]["path"], "tests/fixtures/lineinfo/lines.cu");
    let lines = launch(&out)["per_source_line"].as_array().unwrap().clone();
    let places: Vec<&str> = lines.iter().map(|l| l["place"].as_str().unwrap()).collect();
    let mov = ptx_line("tests/fixtures/lineinfo/lines.ptx", "mov.u32 \t%r1, %tid.x");
    let ptx = format!("PTX {mov}");
    // Costs: line 7 256 sectors, line 8 64, line 10 8, line 9 4 wavefronts; then the lines
    // without memory work by warp instructions executed (6: 192, 4: 8, 5: 4), then 11 and the
    // PTX line (2 each: a source line before a PTX line).
    assert_eq!(
        places,
        [
            "lines.cu:7",
            "lines.cu:8",
            "lines.cu:10",
            "lines.cu:9",
            "lines.cu:6",
            "lines.cu:4",
            "lines.cu:5",
            "lines.cu:11",
            ptx.as_str()
        ]
    );
    let get = |place: &str| lines.iter().find(|l| l["place"] == place).unwrap().clone();
    // Line 7: mul.wide and add once per warp, then ld, add, add 32 times per warp: 2 x (2 + 96)
    // warp instructions; 64 loads of 128 contiguous bytes: 4 sectors each, every one a miss
    // (the 8 KB of `a` are read once).
    let l7 = get("lines.cu:7");
    assert_eq!(l7["warp_inst_executed"], 196);
    assert_eq!(l7["threads"], 196 * 32);
    assert_eq!(l7["requests"], 64);
    assert_eq!(l7["sectors"], 256);
    assert_eq!(l7["l1_hits"], 0);
    assert_eq!(l7["l1_misses"], 256);
    assert_eq!(l7["l1_hit_rate"], 0.0);
    assert_eq!(l7["cost"], 256);
    assert_eq!(l7["line"], 7);
    assert_eq!(l7["file"], "/lines.cu");
    assert_eq!(l7["source"], "sum += a[t + 64 * i];");
    assert_eq!(l7["ptx_lines"].as_array().unwrap().len(), 5);
    // Line 8: b[8 * t], 32 bytes apart: a sector per lane, 2 x 32.
    let l8 = get("lines.cu:8");
    assert_eq!(
        (&l8["warp_inst_executed"], &l8["requests"], &l8["sectors"]),
        (&6.into(), &2.into(), &64.into())
    );
    // Line 9: s[2 * t]: lanes l and l + 16 share a bank, 2 wavefronts per warp, 1 conflict.
    let l9 = get("lines.cu:9");
    assert_eq!(
        (
            &l9["warp_inst_executed"],
            &l9["requests"],
            &l9["wavefronts"]
        ),
        (&8.into(), &2.into(), &4.into())
    );
    assert_eq!(l9["bank_conflicts"], 2);
    assert_eq!(l9["sectors"], 0);
    assert_eq!(l9["l1_hit_rate"], Value::Null);
    // Line 10: 64 x 4 contiguous bytes, 4 sectors per warp.
    let l10 = get("lines.cu:10");
    assert_eq!(
        (
            &l10["warp_inst_executed"],
            &l10["requests"],
            &l10["sectors"]
        ),
        (&10.into(), &2.into(), &8.into())
    );
    // Line 6, the loop's add, setp, bra: 3 x 32 x 2; no memory work.
    let l6 = get("lines.cu:6");
    assert_eq!(
        (&l6["warp_inst_executed"], &l6["cost"]),
        (&192.into(), &0.into())
    );
    assert_eq!(get("lines.cu:4")["warp_inst_executed"], 8);
    assert_eq!(get("lines.cu:5")["warp_inst_executed"], 4);
    assert_eq!(get("lines.cu:11")["warp_inst_executed"], 2);
    let p = get(&ptx);
    assert_eq!((&p["file"], &p["line"]), (&Value::Null, &mov.into()));
    assert_eq!(p["source"], Value::Null);
    // Shares: of 428 warp instructions and of 332 cost units.
    let total: u64 = lines
        .iter()
        .map(|l| l["warp_inst_executed"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 428);
    assert_eq!(l7["inst_share"].as_f64().unwrap(), 196.0 / 428.0);
    assert_eq!(l7["cost_share"].as_f64().unwrap(), 256.0 / 332.0);
    assert_eq!(l6["cost_share"].as_f64().unwrap(), 0.0);
}

#[test]
fn per_line_table_names_the_lines_with_their_source_text() {
    let out = ok(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--per-line",
        "--ptxas",
        "off",
    ]);
    let at = out.find("source lines, most costly first").expect(&out);
    let view = &out[at..];
    let first = view
        .lines()
        .find(|l| l.contains("lines.cu:"))
        .unwrap_or_else(|| panic!("{view}"));
    assert!(
        first.contains("lines.cu:7") && first.contains("sum += a[t + 64 * i];"),
        "{first}"
    );
    let cells: Vec<&str> = first.split('│').map(str::trim).collect();
    // line, source, warp insts, inst %, requests, sectors, wavefronts, conflicts, L1 hit, cost,
    // cost %, time %, top stalls (the loop's loads wait for L2: tests/html.rs checks the
    // shares add up).
    assert_eq!(
        cells[1..cells.len() - 1],
        [
            "lines.cu:7",
            "sum += a[t + 64 * i];",
            "196",
            "46%",
            "64",
            "256",
            "-",
            "-",
            "0%",
            "256",
            "77%",
            "99%",
            "long_scoreboard 99.6%, misc 0.1%"
        ],
        "{view}"
    );
    assert!(
        view.contains("time %: share of the launch's warp-cycles"),
        "{view}"
    );
    assert!(
        view.contains("banks") || !view.contains("lines.cu:9 "),
        "{view}"
    );
}

#[test]
fn per_instruction_names_the_source_line_and_ranks_by_total_cost() {
    let out = ok(&["run", "configs/h200.toml", FIXTURE, "--per-instruction"]);
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("lines.cu:")).collect();
    // The loop's load (32 x 2 executions, 4 sectors each: 256) above the scattered store (2
    // executions, 32 sectors each: 64), though the store costs more per execution.
    assert!(
        rows[0].contains("lines.cu:7") && rows[0].contains("ld.global.u32"),
        "{out}"
    );
    assert!(
        rows[1].contains("lines.cu:8") && rows[1].contains("st.global.u32"),
        "{out}"
    );
    let json = ok(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--per-instruction",
        "--format",
        "json",
    ]);
    let insts = launch(&json)["per_instruction"].as_array().unwrap().clone();
    let ld = insts
        .iter()
        .find(|i| i["ptx"].as_str().unwrap().starts_with("ld.global"))
        .unwrap();
    assert_eq!(ld["source"]["file"], "/lines.cu");
    assert_eq!(ld["source"]["line"], 7);
    assert_eq!(insts[0]["source"], Value::Null, "mov %tid.x has no .loc");
}

#[test]
fn ptx_without_line_info_falls_back_to_ptx_lines() {
    let dir = temp_dir("noloc");
    let ptx = std::fs::read_to_string(root().join("tests/fixtures/lineinfo/lines.ptx")).unwrap();
    let stripped: String = ptx
        .lines()
        .filter(|l| !l.trim_start().starts_with(".loc") && !l.trim_start().starts_with(".file"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("lines.ptx"), &stripped).unwrap();
    let toml = std::fs::read_to_string(root().join(FIXTURE)).unwrap();
    std::fs::write(dir.join("lines.toml"), toml).unwrap();
    let w = dir.join("lines.toml");
    let out = ok(&[
        "run",
        "configs/h200.toml",
        w.to_str().unwrap(),
        "--per-line",
        "--format",
        "json",
    ]);
    let lines = launch(&out)["per_source_line"].as_array().unwrap().clone();
    let ld = stripped
        .lines()
        .position(|l| l.contains("ld.global.u32"))
        .unwrap() as u64
        + 1;
    assert_eq!(lines[0]["place"], format!("PTX {ld}"));
    assert_eq!(lines[0]["sectors"], 256);
    assert_eq!(lines[0]["warp_inst_executed"], 64);
    assert!(lines.iter().all(|l| l["file"].is_null()));
    let table = ok(&[
        "run",
        "configs/h200.toml",
        w.to_str().unwrap(),
        "--per-line",
    ]);
    assert!(table.contains("no .loc line info: PTX lines"), "{table}");
    assert!(table.contains(&format!("PTX {ld}")), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `.npy` file's header dict and data.
fn npy(path: &Path) -> (String, Vec<u8>) {
    let f = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&f[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let len = u16::from_le_bytes([f[8], f[9]]) as usize;
    assert_eq!((10 + len) % 64, 0);
    let header = String::from_utf8(f[10..10 + len].to_vec()).unwrap();
    (header.trim_end().to_string(), f[10 + len..].to_vec())
}

#[test]
fn save_outputs_writes_npy_arrays_of_the_buffers_type_and_shape_and_a_png_of_an_image() {
    let dir = temp_dir("save");
    let d = dir.to_str().unwrap();
    let (code, _, err) = sim(&["run", "configs/h200.toml", FIXTURE, "--save-outputs", d]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("lines.main.b.npy (64x8 i32 array)"), "{err}");
    // b[8 t] = the sum over i of a[t + 64 i] = 32 t + 64 (0 + 1 + ... + 31) = 32 t + 31,744.
    let (header, data) = npy(&dir.join("lines.main.b.npy"));
    assert_eq!(
        header,
        "{'descr': '<i4', 'fortran_order': False, 'shape': (64, 8), }"
    );
    let b: Vec<i32> = data
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(b.len(), 512);
    for (i, v) in b.iter().enumerate() {
        let want = if i % 8 == 0 {
            32 * (i as i32 / 8) + 31_744
        } else {
            0
        };
        assert_eq!(*v, want, "b[{i}]");
    }
    // img[t] = (t, 0, 0, 255): an 8x8 RGBA image, row 0 the pixels 0 to 7.
    let (header, data) = npy(&dir.join("lines.main.img.npy"));
    assert_eq!(
        header,
        "{'descr': '|u1', 'fortran_order': False, 'shape': (8, 8, 4), }"
    );
    let want: Vec<u8> = (0..64u8).flat_map(|t| [t, 0, 0, 255]).collect();
    assert_eq!(data, want);
    let png = std::fs::read(dir.join("lines.main.img.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        8,
        "width"
    );
    assert_eq!(
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
        8,
        "height"
    );
    assert_eq!((png[24], png[25]), (8, 6), "8-bit RGBA");
    assert!(err.contains("lines.main.img.png (8x8 RGBA image)"), "{err}");
    assert!(!dir.join("lines.main.b.png").exists(), "b is not an image");

    // Again: every file exists, nothing is replaced without --force.
    std::fs::write(dir.join("lines.main.b.npy"), b"mine").unwrap();
    let (code, out, err) = sim(&["run", "configs/h200.toml", FIXTURE, "--save-outputs", d]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.starts_with("error: ") && err.contains("pass --force"),
        "{err}"
    );
    assert!(out.is_empty());
    assert_eq!(
        std::fs::read(dir.join("lines.main.b.npy")).unwrap(),
        b"mine"
    );
    let (code, _, err) = sim(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--save-outputs",
        d,
        "--force",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(npy(&dir.join("lines.main.b.npy")).1.len(), 2048);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_outputs_refuses_a_file_as_the_directory_and_force_alone() {
    let dir = temp_dir("refuse");
    let file = dir.join("f");
    std::fs::write(&file, b"x").unwrap();
    let (code, _, err) = sim(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--save-outputs",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    let (code, _, err) = sim(&["run", "configs/h200.toml", FIXTURE, "--force"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--force replaces the files of --out, --html or --save-outputs"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shape_that_does_not_hold_count_elements_is_an_error_naming_the_key() {
    let dir = temp_dir("shape");
    let toml = std::fs::read_to_string(root().join(FIXTURE))
        .unwrap()
        .replace("shape = [64, 8]", "shape = [64, 7]")
        .replace("ptx = \"lines.ptx\"", "ptx = \"PTX\"");
    let ptx = root().join("tests/fixtures/lineinfo/lines.ptx");
    std::fs::write(
        dir.join("bad.toml"),
        toml.replace("\"PTX\"", &format!("{:?}", ptx.to_str().unwrap())),
    )
    .unwrap();
    let (code, _, err) = sim(&[
        "run",
        "configs/h200.toml",
        dir.join("bad.toml").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("buffer[1].shape")
            && err.contains("[64, 7] holds 448 elements; the buffer's count is 512"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_teaches_per_line_and_save_outputs() {
    let help = ok(&["run", "--help"]);
    assert!(help.contains("--per-line"), "{help}");
    assert!(help.contains("--save-outputs <DIR>"), "{help}");
    assert!(help.contains("sim run h200 ray --per-line"), "{help}");
}

/// Where the launch is counted on its SASS (ptxas and nvdisasm found), each line counts the SASS
/// instructions ptxas attributed to its PTX lines, as Nsight Compute's Source page does: the
/// lines add up to the launch's `smsp__inst_executed.sum`, not to the PTX's executions.
#[test]
fn the_source_view_counts_the_sass_of_each_line() {
    let out = ok(&[
        "run",
        "configs/h200.toml",
        FIXTURE,
        "--per-line",
        "--format",
        "json",
    ]);
    let l = launch(&out);
    if l["instructions_source"] != "sass" {
        println!("skipped: no ptxas or nvdisasm (pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm)");
        return;
    }
    let lines = l["per_source_line"].as_array().unwrap();
    let sum: u64 = (lines.iter())
        .map(|x| x["warp_inst_executed"].as_u64().unwrap())
        .sum();
    assert_eq!(
        sum,
        l["metrics"]["smsp__inst_executed.sum"].as_u64().unwrap()
    );
    // ptxas unrolled the loop of line 6 (its PTX runs 192 times a launch): fewer SASS.
    let six = lines.iter().find(|x| x["place"] == "lines.cu:6").unwrap();
    assert!(six["warp_inst_executed"].as_u64().unwrap() < 192, "{six}");
}
