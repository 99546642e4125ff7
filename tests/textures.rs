//! Texture and surface objects end to end (issue 39): the kernels of `tests/fixtures/texture/`
//! (texture.cu, compiled by NVRTC 12.9 for sm_90; make_ptx.sh) run over the objects that
//! texture.toml declares, and every output is recomputed here from the CUDA C++ Programming
//! Guide's formulas (appendix "Texture Fetching"): nearest-point and linear filtering with
//! weights in 9-bit fixed point (8 fractional bits, rounded to nearest: the simulator's
//! documented assumption), clamp and border addressing, `tld4`'s order (PTX ISA: "counter-
//! clockwise order starting at lower left"), and the surface instructions' `.trap`, `.clamp`
//! and `.zero` modes (PTX ISA §9.7.11). The texture-pipe counts are derived here from the
//! kernels' coordinates: one request per warp instruction, the distinct 32-byte sectors of
//! every texel of each active lane's footprint.

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, LaunchResult, Options};
use sim::workload::{Source, Workload};
use std::collections::BTreeSet;

const W: i64 = 40;
const H: i64 = 24;

fn fixture() -> (String, std::path::PathBuf) {
    let p = root().join("tests/fixtures/texture/texture.toml");
    (std::fs::read_to_string(&p).unwrap(), p)
}

fn run_text(text: &str) -> sim::Result<Vec<LaunchResult>> {
    run_with(text, Default::default())
}

fn run_with(text: &str, compiler: sim::compile::Compiler) -> sim::Result<Vec<LaunchResult>> {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::from_toml_str(text, Source::File(fixture().1))?;
    let opts = Options {
        keep_outputs: true,
        compiler,
        ..Default::default()
    };
    Ok(run_workload(&cfg, &w, &opts)?.launches)
}

fn run() -> Vec<LaunchResult> {
    run_text(&fixture().0).unwrap_or_else(|e| panic!("{e}"))
}

fn words(l: &LaunchResult, name: &str) -> Vec<u32> {
    common::output_words(l, name)
}

fn floats(l: &LaunchResult, name: &str) -> Vec<f32> {
    words(l, name).into_iter().map(f32::from_bits).collect()
}

fn bytes(l: &LaunchResult, name: &str) -> Vec<u8> {
    l.outputs.iter().find(|(n, _)| n == name).unwrap().1.clone()
}

fn metric(l: &LaunchResult, name: &str) -> u64 {
    l.counters
        .metric_counts()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .1
}

/// The guide's linear filter footprint of (x, y) in texels: the four (i, j) with their weights,
/// α and β in 9-bit fixed point.
fn taps(x: f32, y: f32) -> [(i64, i64, f64); 4] {
    let (xb, yb) = (f64::from(x) - 0.5, f64::from(y) - 0.5);
    let (i, j) = (xb.floor() as i64, yb.floor() as i64);
    let a = ((xb - xb.floor()) * 256.0).round() / 256.0;
    let b = ((yb - yb.floor()) * 256.0).round() / 256.0;
    [
        (i, j, (1.0 - a) * (1.0 - b)),
        (i + 1, j, a * (1.0 - b)),
        (i, j + 1, (1.0 - a) * b),
        (i + 1, j + 1, a * b),
    ]
}

/// The threads of the 2-D launches (grid 3x3 of 16x8), warp by warp: (x, y) of active lanes.
fn warps_2d() -> Vec<Vec<(i64, i64)>> {
    let mut out = vec![];
    for by in 0..3 {
        for bx in 0..3 {
            for k in 0..4 {
                let lanes: Vec<(i64, i64)> = (0..32)
                    .map(|l| (bx * 16 + l % 16, by * 8 + 2 * k + l / 16))
                    .filter(|&(x, y)| x < W && y < H)
                    .collect();
                if !lanes.is_empty() {
                    out.push(lanes);
                }
            }
        }
    }
    out
}

/// Distinct 32-byte sectors of `texels` (byte offsets from a 256-byte aligned base).
fn sectors(texels: impl Iterator<Item = u64>) -> u64 {
    texels.map(|a| a / 32).collect::<BTreeSet<_>>().len() as u64
}

#[test]
fn tex1dfetch_gathers_and_reads_zero_outside_a_linear_texture() {
    check_gather1d(&run());
}

fn check_gather1d(ls: &[LaunchResult]) {
    let l = &ls[0];
    let (line, got) = (floats(l, "line"), floats(l, "gathered"));
    let n = 100i64;
    for i in 0..n + 8 {
        let k = (i * 7) % (n + 8) - 4;
        let want = if (0..n).contains(&k) {
            line[k as usize]
        } else {
            0.0
        };
        assert_eq!(
            got[i as usize].to_bits(),
            want.to_bits(),
            "gathered[{i}] (index {k})"
        );
    }
    // 108 threads: 4 warps; the fetched texels' sectors per warp.
    assert_eq!(metric(l, "smsp__inst_executed_op_texture.sum"), 4);
    assert_eq!(metric(l, "l1tex__t_requests_pipe_tex_mem_texture.sum"), 4);
    let want: u64 = (0..4)
        .map(|wi| {
            sectors(
                (wi * 32..(wi * 32 + 32).min(n + 8))
                    .map(|i| (i * 7) % (n + 8) - 4)
                    .filter(|k| (0..n).contains(k))
                    .map(|k| k as u64 * 4),
            )
        })
        .sum();
    assert_eq!(metric(l, "l1tex__t_sectors_pipe_tex_mem_texture.sum"), want);
    let hit = metric(l, "l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum");
    let miss = metric(l, "l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss.sum");
    assert_eq!(hit + miss, want);
    // The misses go on to L2 as the L1's reads (cold caches; the launch reads nothing else).
    assert_eq!(metric(l, "lts__t_sectors_srcunit_tex_op_read.sum"), miss);
    // Not the LSU pipe's.
    assert_eq!(
        metric(l, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        0
    );
}

#[test]
fn tex2d_bilinear_over_pitched_memory_follows_the_guide() {
    check_bilinear(&run());
}

fn check_bilinear(ls: &[LaunchResult]) {
    // f32, one channel, rows of 48 texels, clamp.
    let l = &ls[1];
    let (img, got) = (floats(l, "image"), floats(l, "filtered"));
    let texel =
        |i: i64, j: i64| f64::from(img[(j.clamp(0, H - 1) * 48 + i.clamp(0, W - 1)) as usize]);
    let coord = |x: i64, y: i64| {
        (
            (x as f32).mul_add(0.37, 0.1),
            (y as f32).mul_add(0.61, -0.2),
        )
    };
    for y in 0..H {
        for x in 0..W {
            let (u, v) = coord(x, y);
            let want: f64 = taps(u, v).iter().map(|&(i, j, w)| w * texel(i, j)).sum();
            let g = got[(y * W + x) as usize];
            assert_eq!(
                g.to_bits(),
                (want as f32).to_bits(),
                "filtered[{y}][{x}]: {g} vs {want}"
            );
        }
    }
    // Every warp has active lanes: 36 fetches; sectors of the four taps of each lane.
    let warps = warps_2d();
    assert_eq!(
        metric(l, "smsp__inst_executed_op_texture.sum"),
        warps.len() as u64
    );
    assert_eq!(metric(l, "l1tex__t_requests_pipe_tex_mem_texture.sum"), 36);
    let want: u64 = warps
        .iter()
        .map(|lanes| {
            sectors(lanes.iter().flat_map(|&(x, y)| {
                let (u, v) = coord(x, y);
                taps(u, v).map(|(i, j, _)| (j.clamp(0, H - 1) * 192 + i.clamp(0, W - 1) * 4) as u64)
            }))
        })
        .sum();
    assert_eq!(metric(l, "l1tex__t_sectors_pipe_tex_mem_texture.sum"), want);

    // RGBA8 read as normalized floats, border: outside texels are zero.
    let l = &ls[2];
    let (rgba, got) = (bytes(l, "rgba"), floats(l, "filtered_rgba"));
    let texel = |i: i64, j: i64, c: usize| {
        if (0..W).contains(&i) && (0..H).contains(&j) {
            f64::from(rgba[(j * 192 + i * 4) as usize + c]) / 255.0
        } else {
            0.0
        }
    };
    for y in 0..H {
        for x in 0..W {
            let (u, v) = (
                (x as f32).mul_add(0.77, -0.6),
                (y as f32).mul_add(1.13, 0.3),
            );
            for c in 0..4 {
                let want: f64 = taps(u, v).iter().map(|&(i, j, w)| w * texel(i, j, c)).sum();
                let g = got[(4 * (y * W + x)) as usize + c];
                assert_eq!(g.to_bits(), (want as f32).to_bits(), "rgba[{y}][{x}].{c}");
            }
        }
    }
}

#[test]
fn tld4_returns_one_component_of_the_footprint_counter_clockwise() {
    check_gather4(&run());
}

fn check_gather4(ls: &[LaunchResult]) {
    let l = &ls[3];
    let (pairs, got) = (floats(l, "pairs"), floats(l, "quads"));
    let g_of =
        |i: i64, j: i64| pairs[(2 * (j.clamp(0, H - 1) * W + i.clamp(0, W - 1)) + 1) as usize];
    for y in 0..H {
        for x in 0..W {
            let (u, v) = ((x as f32).mul_add(0.5, 0.3), y as f32 + 0.8);
            let t = taps(u, v);
            let (i, j) = (t[0].0, t[0].1);
            // Lower left (i, j+1), lower right, upper right, upper left (i, j).
            let want = [
                g_of(i, j + 1),
                g_of(i + 1, j + 1),
                g_of(i + 1, j),
                g_of(i, j),
            ];
            let k = (4 * (y * W + x)) as usize;
            assert_eq!(&got[k..k + 4], &want, "quads[{y}][{x}]");
        }
    }
    assert_eq!(metric(l, "smsp__inst_executed_op_texture.sum"), 36);
}

#[test]
fn surfaces_round_trip_with_clamp_and_zero_modes() {
    check_surfaces(&run());
}

fn check_surfaces(ls: &[LaunchResult]) {
    let before: Vec<i32> = words(&ls[3], "cells")
        .into_iter()
        .map(|v| v as i32)
        .collect();
    let after: Vec<i32> = words(&ls[4], "cells")
        .into_iter()
        .map(|v| v as i32)
        .collect();
    for (k, (&a, &b)) in after.iter().zip(&before).enumerate() {
        assert_eq!(a, b.wrapping_mul(3).wrapping_add(1), "cells[{k}]");
    }
    let l = &ls[4];
    assert_eq!(metric(l, "smsp__inst_executed_op_surface_ld.sum"), 36);
    assert_eq!(metric(l, "smsp__inst_executed_op_surface_st.sum"), 36);
    assert_eq!(
        metric(l, "l1tex__t_requests_pipe_tex_mem_surface_op_st.sum"),
        36
    );
    let want: u64 = warps_2d()
        .iter()
        .map(|lanes| sectors(lanes.iter().map(|&(x, y)| (y * W * 4 + x * 4) as u64)))
        .sum();
    assert_eq!(
        metric(l, "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum"),
        want
    );
    assert_eq!(
        metric(l, "l1tex__t_sectors_pipe_tex_mem_surface_op_st.sum"),
        want
    );
    // Loads' misses read from L2, stores write through to it.
    let hits = metric(
        l,
        "l1tex__t_sectors_pipe_tex_mem_surface_op_ld_lookup_hit.sum",
    );
    assert_eq!(
        metric(l, "lts__t_sectors_srcunit_tex_op_read.sum"),
        want - hits
    );
    assert_eq!(metric(l, "lts__t_sectors_srcunit_tex_op_write.sum"), want);

    let edges: Vec<i32> = words(&ls[5], "edges")
        .into_iter()
        .map(|v| v as i32)
        .collect();
    for y in 0..H {
        for x in 0..W {
            let (sx, sy) = (x + 5, y - 2);
            let clamped = after[(sy.clamp(0, H - 1) * W + sx.clamp(0, W - 1)) as usize];
            let inside = (0..W).contains(&sx) && (0..H).contains(&sy);
            let zeroed = if inside {
                after[(sy * W + sx) as usize]
            } else {
                0
            };
            let k = (2 * (y * W + x)) as usize;
            assert_eq!(
                (edges[k], edges[k + 1]),
                (clamped, zeroed),
                "edges[{y}][{x}]"
            );
        }
    }
    // The zero-mode read fetches only the lanes inside; the clamped one every lane's element.
    assert_eq!(metric(&ls[5], "smsp__inst_executed_op_surface_ld.sum"), 72);
}

#[test]
fn a_trapping_surface_store_out_of_range_is_a_memory_error() {
    let (text, _) = fixture();
    let (head, _) = text.split_once("[[launch]]").unwrap();
    let text = format!(
        "{head}[[launch]]\nlabel = \"trap\"\nkernel = \"surface_trap\"\ngrid = [1, 1, 1]\nblock = [32, 1, 1]\nargs = [\"cells_surf\", \"w - 8\"]\n"
    );
    // x = (w - 8 + lane) * 4 bytes: lanes 8 and up store past the 40-element row.
    let e = run_text(&text).unwrap_err().to_string();
    assert!(
        e.contains("invalid global surface write out of range of 4 bytes"),
        "{e}"
    );
    assert!(e.contains("thread (8,0,0)"), "{e}");
}

#[test]
fn bad_declarations_name_their_key() {
    let (text, _) = fixture();
    let cases = [
        (
            "buffer = \"pairs\"",
            "buffer = \"nothing\"",
            "texture[3].buffer",
            "no [[buffer]] named `nothing`",
        ),
        (
            "pitch_bytes = 192\nfilter_mode = \"linear\"\naddress_mode = \"clamp\"",
            "pitch_bytes = 128\nfilter_mode = \"linear\"\naddress_mode = \"clamp\"",
            "texture[1].pitch_bytes",
            "below the row's 160 bytes",
        ),
        (
            "format = \"u8\"",
            "format = \"rgb9\"",
            "texture[2].format",
            "unknown format `rgb9`",
        ),
        (
            "address_mode = \"border\"",
            "address_mode = \"wrap\"",
            "texture[2].address_mode",
            "needs normalized_coords = true",
        ),
        (
            "buffer = \"cells\"",
            "buffer = \"line\"",
            "surface[0].height",
            "buffer `line` has 400",
        ),
    ];
    for (from, to, key, message) in cases {
        assert!(text.contains(from), "{from}");
        let bad = text.replacen(from, to, 1);
        let e = run_text(&bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(key) && e.contains(message), "{key}: {e}");
    }
}

/// `l1.texture_latency_cycles` is the load-to-use latency of a fetch served by L1: a launch
/// bound by its one fetch's latency (gather1d: each warp fetches, then stores) takes the extra
/// cycles once more per dependent fetch, here about 100 for 100 more.
#[test]
fn the_texture_latency_delays_the_fetch_s_result() {
    let text = std::fs::read_to_string(root().join("configs/h200.toml")).unwrap();
    let cycles = |extra: u32| {
        let t = text.replace(
            "texture_latency_cycles = 88",
            &format!("texture_latency_cycles = {}", 88 + extra),
        );
        let cfg = GpuConfig::from_toml_str(&t, "h200.toml").unwrap();
        let (fixture, path) = fixture();
        let w = Workload::from_toml_str(&fixture, Source::File(path)).unwrap();
        let opts = Options {
            only: vec!["gather1d".into()],
            ..Default::default()
        };
        run_workload(&cfg, &w, &opts).unwrap().launches[0]
            .timing
            .cycles
    };
    let (base, slow) = (cycles(0), cycles(100));
    assert!(
        (95.0..=105.0).contains(&(slow - base)),
        "{base} cycles, then {slow}"
    );
}

/// The same kernels compiled by clang with `sim`'s CUDA shim (its texture and surface functions
/// are inline PTX of the forms NVRTC emits) pass the same checks; skipped without clang.
#[test]
fn clang_s_ptx_of_the_fixture_passes_the_same_checks() {
    if sim::compile::find_clang().is_none() {
        eprintln!("no clang: skipped");
        return;
    }
    let (text, _) = fixture();
    let text = text.replace("ptx = \"texture.ptx\"", "cuda = \"texture.cu\"");
    let ls = run_with(&text, sim::compile::Compiler::Clang).unwrap_or_else(|e| panic!("{e}"));
    check_gather1d(&ls);
    check_bilinear(&ls);
    check_gather4(&ls);
    check_surfaces(&ls);
}
