//! Running a plan on the GPU: once for the outputs, then timed with CUDA events.
//!
//! 1. Outputs: the launches run once each, in order, on freshly initialised buffers (as the
//!    simulator runs them, on one memory image), and after each one the `output = true` buffers
//!    are copied back.
//! 2. Time, per launch, on whatever the buffers hold by then: `warmup` launches; then `repeat`
//!    launches, each alone between two events and waited for (median, min, max, p10, p90); then
//!    `repeat` launches back to back between two events, divided by `repeat` (workloads.md's
//!    convention, which hides the launch gaps).

use super::error::CudaResultExt;
use super::{guard, Gpu, Program};
use crate::backend::{Backend, Run};
use crate::stats::TimeStats;
use anyhow::{anyhow, bail, Result};
use cudarc::driver::sys::CUevent_flags;
use sim::run::Plan;

/// The GPU as a [`Backend`].
pub struct GpuBackend<'g> {
    /// The device.
    pub gpu: &'g Gpu,
    /// Untimed launches before the timed ones (per launch).
    pub warmup: u32,
    /// Timed launches (per launch); 0 skips timing.
    pub repeat: u32,
    /// After [`Backend::run`]: every buffer's device address and size in bytes
    /// ([`Program::addresses`]).
    pub addresses: Vec<(String, u64, usize)>,
}

impl Backend for GpuBackend<'_> {
    fn name(&self) -> String {
        format!("GPU {}", self.gpu.ordinal)
    }

    fn run(&mut self, plan: &Plan) -> Result<Vec<Run>> {
        guard(|| {
            let program = Program::load(self.gpu, plan)?;
            self.addresses = program.addresses();
            let outputs: Vec<String> = plan
                .workload
                .buffers
                .iter()
                .filter(|b| b.output)
                .map(|b| b.name.clone())
                .collect();
            let mut runs = vec![];
            for (i, l) in plan.launches.iter().enumerate() {
                program.run(i)?;
                runs.push(Run {
                    label: l.label.clone(),
                    kernel: l.kernel.clone(),
                    outputs: program.read(&outputs)?,
                    ..Run::default()
                });
            }
            if self.repeat > 0 {
                for (i, run) in runs.iter_mut().enumerate() {
                    run.time_us = Some(time(self.gpu, &program, i, self.warmup, self.repeat)?);
                }
            }
            Ok(runs)
        })
    }
}

/// Times launch `i` of `program` (see the module docs).
pub fn time(gpu: &Gpu, program: &Program, i: usize, warmup: u32, repeat: u32) -> Result<TimeStats> {
    if repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let event = || {
        gpu.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .cuda(|| "creating a CUDA event".into())
    };
    let (start, end) = (event()?, event()?);
    let stream = program.stream();
    let what = || format!("timing {}", program.describe(i));
    for _ in 0..warmup {
        program.enqueue(i)?;
    }
    program.sync(i)?;
    let mut samples = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat {
        start.record(stream).cuda(what)?;
        program.enqueue(i)?;
        end.record(stream).cuda(what)?;
        end.synchronize().cuda(what)?;
        samples.push(f64::from(start.elapsed_ms(&end).cuda(what)?) * 1e3);
    }
    start.record(stream).cuda(what)?;
    for _ in 0..repeat {
        program.enqueue(i)?;
    }
    end.record(stream).cuda(what)?;
    end.synchronize().cuda(what)?;
    let total_us = f64::from(start.elapsed_ms(&end).cuda(what)?) * 1e3;
    program.sync(i)?;
    TimeStats::from_samples(&samples, total_us / f64::from(repeat))
        .ok_or_else(|| anyhow!("no timings for {}", program.describe(i)))
}

/// `validate profile-once`: uploads the inputs and runs each launch once, for Nsight Compute.
pub fn profile_once(gpu: &Gpu, plan: &Plan) -> Result<()> {
    guard(|| {
        let program = Program::load(gpu, plan)?;
        for i in 0..program.len() {
            program.run(i)?;
        }
        Ok(())
    })
}
