//! Occupancy: how many blocks of a launch an SM holds at once, and which resource limits it.
//!
//! The rules are the CUDA occupancy calculator's (`cuda_occupancy.h`,
//! `cudaOccMaxActiveBlocksPerMultiprocessor`, with partitioned global caching off): the tightest of
//! the SM's thread and warp slots, its block slots, its shared memory and its register file.

use crate::config::{GpuConfig, Sm};

use super::Dims;

/// Blocks resident per SM and what limits them, as the CUDA occupancy calculator
/// (`cuda_occupancy.h`, `cudaOccMaxActiveBlocksPerMultiprocessor`) and Nsight Compute
/// (`launch__occupancy_limit_*`) report them: each limit is the number of blocks per SM that
/// resource alone allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Occupancy {
    /// Blocks resident per SM: the smallest of the limits (at least 1).
    pub blocks: u32,
    /// Blocks the thread and warp slots allow (`launch__occupancy_limit_warps`).
    pub limit_warps: u32,
    /// The SM's block slots (`launch__occupancy_limit_blocks`).
    pub limit_blocks: u32,
    /// Blocks shared memory allows (`launch__occupancy_limit_shared_mem`); [`NO_LIMIT`] for a
    /// launch without shared memory.
    pub limit_shared_mem: u32,
    /// Blocks the register file allows (`launch__occupancy_limit_registers`); [`NO_LIMIT`] for a
    /// kernel of 0 registers.
    pub limit_registers: u32,
}

/// A limit of a resource the launch does not use (`cuda_occupancy.h` says `INT_MAX`).
pub const NO_LIMIT: u32 = u32::MAX;

impl Occupancy {
    /// The names of the limits that set [`Occupancy::blocks`] (several when they tie), in
    /// Nsight Compute's words: `warps`, `registers`, `shared_mem`, `blocks`.
    pub fn limiters(&self) -> Vec<&'static str> {
        [
            ("warps", self.limit_warps),
            ("registers", self.limit_registers),
            ("shared_mem", self.limit_shared_mem),
            ("blocks", self.limit_blocks),
        ]
        .into_iter()
        .filter(|&(_, n)| n == self.blocks)
        .map(|(name, _)| name)
        .collect()
    }
}

/// Blocks of `dims` resident per SM at once, for `shared_bytes` of shared memory per block and
/// `registers` per thread: the tightest of the thread, warp, block, shared memory and register
/// limits of the config (CUDA C++ Programming Guide, "Occupancy"; the register rule is
/// [`blocks_by_registers`]). `Err` when one block cannot fit at all.
pub fn occupancy(
    cfg: &GpuConfig,
    dims: &Dims,
    shared_bytes: u64,
    registers: u32,
) -> std::result::Result<Occupancy, String> {
    let threads = dims.block_threads();
    if threads == 0 {
        return Err("the block has no threads".into());
    }
    if threads > cfg.sm.max_threads_per_block {
        return Err(format!(
            "{threads} threads per block exceed the GPU's limit of {}",
            cfg.sm.max_threads_per_block
        ));
    }
    // The opt-in rule (48 KB without it) is the launch's: run::resolve checks it first.
    if shared_bytes > cfg.shared_per_block_optin_bytes() {
        return Err(format!(
            "{shared_bytes} bytes of shared memory per block exceed the GPU's limit of {}",
            cfg.shared_per_block_optin_bytes()
        ));
    }
    let warps = threads.div_ceil(32);
    let limit_blocks = cfg.sm.max_blocks;
    let limit_warps = (cfg.sm.max_threads / threads).min(cfg.sm.max_warps / warps);
    let major = cfg.compute_capability().0;
    let limit_shared_mem = match (cfg.shared.size_per_sm_bytes as u64)
        .checked_div(shared_allocated_per_block(major, shared_bytes))
    {
        Some(n) => u32::try_from(n).unwrap_or(NO_LIMIT),
        None => NO_LIMIT,
    };
    let limit_registers = blocks_by_registers(&cfg.sm, major, warps, registers);
    if limit_registers == 0 {
        return Err(format!(
            "{registers} registers per thread do not fit a block of {threads} threads: {} \
             registers per block, the SM has {} (registers per thread are allocated in units of {} \
             per {}); use smaller blocks, or tell ptxas to use fewer registers and give their \
             number (`registers = N` in the launch, or --registers N)",
            registers_per_block(&cfg.sm, major, warps, registers),
            cfg.sm.registers,
            cfg.sm.register_allocation_unit,
            if major < 2 { "block" } else { "warp" },
        ));
    }
    let blocks = limit_blocks
        .min(limit_warps)
        .min(limit_shared_mem)
        .min(limit_registers)
        .max(1);
    Ok(Occupancy {
        blocks,
        limit_warps,
        limit_blocks,
        limit_shared_mem,
        limit_registers,
    })
}

/// Shared memory one block of a kernel using `shared_bytes` (static plus dynamic) takes from the
/// SM, in bytes, on compute capability `major`: its own plus the driver's reservation per block
/// (`cudaDevAttrReservedSharedMemoryPerBlock`: 1 KiB from 8.0 on, 0 before; Nsight Compute's
/// `launch__shared_mem_per_block_driver` reads 1024 on the H200,
/// validate/measurements/h200/ubench/carveout_ncu.csv), rounded up to the allocation granularity
/// (128 bytes from 8.0 on, 256 on 3.x to 7.x: `cuda_occupancy.h`,
/// `cudaOccSMemAllocationGranularity`; 128 on 2.x and 512 on 1.x, the CUDA 4.2 occupancy
/// calculator). 0 for a kernel without shared memory (no limit, as Nsight Compute's limit is
/// then the block slots).
pub fn shared_allocated_per_block(major: u32, shared_bytes: u64) -> u64 {
    if shared_bytes == 0 {
        return 0;
    }
    let (reserved, granularity) = match major {
        0 | 1 => (0, 512),
        2 => (0, 128),
        3..=7 => (0, 256),
        _ => (1024, 128),
    };
    (shared_bytes + reserved).div_ceil(granularity) * granularity
}

/// Registers one block of `warps` warps holds: per warp from compute 2.x on, the warp's
/// `registers x 32` rounded up to the allocation unit; on 1.x per block, for the warps rounded up
/// to an even number (`cuda_occupancy.h`, `cudaOccMaxBlocksPerSMRegsLimit`,
/// `cudaOccWarpAllocationGranularity`).
pub fn registers_per_block(sm: &Sm, major: u32, warps: u32, registers: u32) -> u64 {
    let unit = u64::from(sm.register_allocation_unit);
    let per_thread = u64::from(registers);
    if major < 2 {
        (per_thread * 32 * u64::from(warps.next_multiple_of(2))).next_multiple_of(unit)
    } else {
        (per_thread * 32).next_multiple_of(unit) * u64::from(warps)
    }
}

/// Blocks of `warps` warps of `registers` registers per thread that an SM's register file holds,
/// as the CUDA occupancy calculator computes it (`cuda_occupancy.h`,
/// `cudaOccMaxBlocksPerSMRegsLimit`, partitioned global caching off). From compute 2.x on:
/// registers per warp = `ceil(registers x 32 / unit) x unit`; the register file is split evenly
/// among the SM's `schedulers` sub-partitions, each holding `floor(registers / schedulers /
/// per warp)` warps; blocks = `floor(warps per SM / warps per block)`. The hardware also refuses
/// a block whose registers, for its warps rounded up to a multiple of the sub-partitions, exceed
/// what one block may hold (`sm.registers` here). On compute 1.x registers are allocated per
/// block ([`registers_per_block`]): blocks = `floor(registers / per block)`.
///
/// 0 when one block does not fit; [`NO_LIMIT`] for a kernel of 0 registers.
pub fn blocks_by_registers(sm: &Sm, major: u32, warps: u32, registers: u32) -> u32 {
    if registers == 0 {
        return NO_LIMIT;
    }
    let file = u64::from(sm.registers);
    let per_block = registers_per_block(sm, major, warps, registers);
    let blocks = if major < 2 {
        file / per_block
    } else {
        let partitions = u64::from(sm.schedulers.max(1));
        let per_warp = per_block / u64::from(warps.max(1));
        // The hardware checks a block as if it took registers in every partition at once.
        if per_warp * u64::from(warps).next_multiple_of(partitions) > file {
            return 0;
        }
        file / partitions / per_warp * partitions / u64::from(warps.max(1))
    };
    u32::try_from(blocks).unwrap_or(NO_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> GpuConfig {
        let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
        GpuConfig::load(std::path::Path::new(&path)).unwrap()
    }

    /// Blocks the register file allows for `threads`-thread blocks of `registers` per thread.
    fn by_registers(cfg: &GpuConfig, threads: u32, registers: u32) -> u32 {
        let major = cfg.compute_capability().0;
        blocks_by_registers(&cfg.sm, major, threads.div_ceil(32), registers)
    }

    fn dims(threads: u32) -> Dims {
        Dims {
            grid: [1000, 1, 1],
            block: [threads, 1, 1],
        }
    }

    #[test]
    fn textbook_register_limits_on_a_64k_register_sm() {
        let h200 = config("h200.toml");
        // 64 registers: 2048 per warp, 32 warps; 8-warp blocks: 4.
        assert_eq!(by_registers(&h200, 256, 64), 4);
        // 32 registers x 1024 threads: 1024 per warp, 64 warps, 2 blocks of 32 warps.
        assert_eq!(by_registers(&h200, 1024, 32), 2);
        // 33 registers round up to 40 (1056 -> 1280 per warp): 12 warps per sub-partition, 48
        // warps, 6 blocks of 8 warps (with 32 it would be 8).
        assert_eq!(by_registers(&h200, 256, 33), 6);
        assert_eq!(by_registers(&h200, 256, 40), 6);
        assert_eq!(by_registers(&h200, 256, 32), 8);
        // 200 registers (6400 per warp): 2 warps in each sub-partition's 16384, 8 warps, 4 blocks
        // of 2 warps; the whole file divided by 6400 would say 10 warps, 5 blocks.
        assert_eq!(by_registers(&h200, 64, 200), 4);
        // 255 registers (8192 per warp) x 1024 threads: 32 warps need 4 register files.
        assert_eq!(by_registers(&h200, 1024, 255), 0);
        // The hardware's check rounds warps up to the 4 sub-partitions: 5 warps of 8192 count
        // as 8, 65536: fits; 9 warps as 12: does not, though 9 x 8192 alone would not either.
        assert_eq!(by_registers(&h200, 160, 255), 1);
        assert_eq!(by_registers(&h200, 288, 255), 0);
        // No registers: no limit.
        assert_eq!(by_registers(&h200, 256, 0), NO_LIMIT);
    }

    #[test]
    fn fermi_allocates_64_per_warp_over_two_sub_partitions() {
        let c2050 = config("c2050.toml");
        // 20 registers: 640 per warp; 16384 per sub-partition hold 25 warps: 50, 6 blocks of 8.
        assert_eq!(by_registers(&c2050, 256, 20), 6);
        // 63 registers: 2016 -> 2048 per warp, 8 per sub-partition, 16 warps: 2 blocks of 8.
        assert_eq!(by_registers(&c2050, 256, 63), 2);
    }

    #[test]
    fn compute_1x_allocates_per_block_for_an_even_number_of_warps() {
        let c1060 = config("c1060.toml");
        // 16 registers x 256 threads: 4096 per block, 4 blocks in 16384.
        assert_eq!(by_registers(&c1060, 256, 16), 4);
        // 3 warps count as 4: 20 x 32 x 4 = 2560 per block, 6 blocks.
        assert_eq!(by_registers(&c1060, 96, 20), 6);
        // 17 x 32 x 6 = 3264, rounded up to 3584 (7 x 512): 4 blocks.
        assert_eq!(by_registers(&c1060, 192, 17), 4);
    }

    #[test]
    fn each_block_s_shared_memory_includes_the_driver_s_reservation() {
        // H200: 1 KiB reserved per block, 128-byte granules (cuda_occupancy.h). 57 KiB blocks
        // would fit 4 times in 228 KiB; with 1 KiB each reserved, 3 (Nsight Compute on the H200:
        // launch__shared_mem_per_block_driver = 1024, carveout_ncu.csv).
        let h200 = config("h200.toml");
        assert_eq!(shared_allocated_per_block(9, 1), 1152);
        assert_eq!(shared_allocated_per_block(9, 4096), 5120);
        assert_eq!(shared_allocated_per_block(9, 0), 0);
        let o = occupancy(&h200, &dims(32), 57 * 1024, 16).unwrap();
        assert_eq!((o.limit_shared_mem, o.blocks), (3, 3));
        // The opt-in maximum (227 KiB) plus the reservation is the whole 228 KiB: one block.
        let o = occupancy(&h200, &dims(32), 227 * 1024, 16).unwrap();
        assert_eq!(o.limit_shared_mem, 1);
        // Volta and before reserve nothing; Kepler's granule is 256 bytes.
        assert_eq!(shared_allocated_per_block(7, 4096), 4096);
        assert_eq!(shared_allocated_per_block(3, 4097), 4352);
    }

    #[test]
    fn occupancy_is_the_tightest_limit_and_names_it() {
        let h200 = config("h200.toml");
        // 256 threads, 16 registers, no shared memory: 8 blocks by threads.
        let o = occupancy(&h200, &dims(256), 0, 16).unwrap();
        assert_eq!(
            o,
            Occupancy {
                blocks: 8,
                limit_warps: 8,
                limit_blocks: 32,
                limit_shared_mem: NO_LIMIT,
                limit_registers: 16,
            }
        );
        assert_eq!(o.limiters(), ["warps"]);
        // 64 registers: 4 blocks, by registers.
        let o = occupancy(&h200, &dims(256), 0, 64).unwrap();
        assert_eq!((o.blocks, o.limiters()), (4, vec!["registers"]));
        // 40 KB of shared memory each: 228 KB hold 5 blocks; 64 registers hold 4.
        let shared = 40 * 1024;
        let o = occupancy(&h200, &dims(256), shared, 64).unwrap();
        assert_eq!((o.limit_shared_mem, o.blocks), (5, 4));
        let o = occupancy(&h200, &dims(256), shared, 32).unwrap();
        assert_eq!((o.blocks, o.limiters()), (5, vec!["shared_mem"]));
        // 32-thread blocks of 10 registers: the 32 block slots.
        let o = occupancy(&h200, &dims(32), 0, 10).unwrap();
        assert_eq!((o.blocks, o.limiters()), (32, vec!["blocks"]));
    }

    #[test]
    fn a_block_that_cannot_fit_is_an_error_not_a_panic() {
        let h200 = config("h200.toml");
        let e = occupancy(&h200, &dims(1024), 0, 255).unwrap_err();
        assert!(
            e.contains("255 registers per thread do not fit a block of 1024 threads"),
            "{e}"
        );
        assert!(
            e.contains("262144 registers per block, the SM has 65536"),
            "{e}"
        );
        assert!(occupancy(&h200, &dims(2048), 0, 10)
            .unwrap_err()
            .contains("threads per block"));
        let e = occupancy(&h200, &dims(0), 0, 10).unwrap_err();
        assert_eq!(e, "the block has no threads");
    }
}
