//! The engine: one simulation, as a pipeline of steps, each a module taking what the step
//! before produced (`simulate_one` runs them in this order):
//! - `parse`: a configuration from TOML (each error at its file:line) or JSON, each key's value
//!   checked on its own as it is read (`--set` overrides apply to the parsed configuration);
//! - `check`: each section's fields (`config`), each component's name and its own table (its
//!   parameters' checks), then the relations: between sections (`Config::check_relations`),
//!   between components (placement against the FTL; the FTL's rules for the shared keys it
//!   reads) and each flow's keys;
//! - `resolve`: "auto" capacity from the workload's footprint (several flows' needs), buffer
//!   size, every component's defaults filled into its table and the FTL's automatic settings
//!   (its entry's `resolve`): the resolved configuration `config show` prints;
//! - `plan`: how flows share the device (their ranges of logical blocks and sets of dies);
//! - `build`: the components from the registry (placement, FTL, padding, write buffer) and the
//!   simulated device they make (`sim`), with the workload's `source` and `address` map;
//! - `replay`: precondition, warm-up, repeats, time-series samples, final flush, integrity —
//!   one loop, whatever submits the requests: one flow's passes, or several flows on the clock
//!   (`flows`); timed mode's request path is `timed` (its clock optionally on its own thread,
//!   `clock_thread`);
//! - `assemble`: the metrics of the measured window, into a [`RunResult`].
//!
//! Below them: `sim` (the device: address map → write buffer → `flush` path → FTL → NAND).
//! Policy statistics stay with their layer: the flushed-group statistics are the buffer layer's
//! (`crate::buffer::accounting`), fed by the flush path.

mod address;
mod assemble;
mod build;
mod check;
mod clock_thread;
mod flows;
mod flush;
mod parse;
mod plan;
mod precondition;
mod readahead;
mod readahead_path;
mod replay;
mod resolve;
mod sim;
mod source;
mod timed;

pub use check::validate;
pub use parse::{parse_json, parse_toml_file};
pub use precondition::{
    cache_hits as precondition_cache_hits, clear_cache as clear_precondition_cache,
};
pub use replay::SERIES_METRICS;
pub use resolve::fill_params;

use crate::config::Config;
use crate::error::Result;
use crate::registry;
use std::collections::BTreeMap;

/// Progress callback: `done` requests of `total` (0 = unknown). Return false to cancel.
pub trait Progress {
    fn update(&mut self, done: u64, total: u64) -> bool;
    /// A warning worth showing before the run ends (it is also in the result's warnings):
    /// a request so large that the run will show no progress for minutes.
    fn note(&mut self, _message: &str) {}
}

impl<F: FnMut(u64, u64) -> bool> Progress for F {
    fn update(&mut self, done: u64, total: u64) -> bool {
        self(done, total)
    }
}

/// Progress sink that never cancels.
pub struct NoProgress;
impl Progress for NoProgress {
    fn update(&mut self, _: u64, _: u64) -> bool {
        true
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    /// The fully resolved configuration (defaults filled in, "auto" values replaced).
    pub config: Config,
    pub metrics: BTreeMap<String, f64>,
    /// Distributions over the measured window, as (value, count) pairs in ascending value:
    /// "buffer.flushed_group_pages" (exact) and "buffer.group_update_interval" (log2 buckets:
    /// the value is the bucket's lower bound), timed mode's latencies, and the FTL's own
    /// (hybrid FTLs: "ftl.log.*", docs/metrics.md).
    pub histograms: BTreeMap<String, Vec<(u64, u64)>>,
    /// Time series (`run.sample_every`), as columns of equal length: "requests", "measured" and
    /// the [`SERIES_METRICS`] plus FTL counters and gauges and the buffer's policy gauges
    /// (docs/metrics.md). Empty when sampling is off.
    pub series: BTreeMap<String, Vec<f64>>,
    /// Non-fatal notes (e.g. skipped malformed records).
    pub warnings: Vec<String>,
}

/// Run one simulation (with `[[flows]]` and `run.alone`, also each flow alone: its slowdown
/// and the fairness between flows, docs/metrics.md).
pub fn simulate(cfg: &Config, progress: &mut dyn Progress) -> Result<RunResult> {
    let mut shared = simulate_one(cfg, progress, None)?;
    if cfg.run.alone && !cfg.flows.is_empty() {
        let mut slowdowns = Vec::new();
        for i in 0..cfg.flows.len() {
            let alone = simulate_one(cfg, progress, Some(i))?;
            let key = format!("flow.{i}.latency.all.mean_us");
            let mean = |r: &RunResult| r.metrics.get(&key).copied().unwrap_or(f64::NAN);
            let (s, a) = (mean(&shared), mean(&alone));
            shared
                .metrics
                .insert(format!("flow.{i}.alone.latency.all.mean_us"), a);
            shared.metrics.insert(format!("flow.{i}.slowdown"), s / a);
            slowdowns.push(s / a);
        }
        let min = slowdowns.iter().copied().fold(f64::INFINITY, f64::min);
        let max = slowdowns.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        shared.metrics.insert("fairness".into(), min / max);
    }
    Ok(shared)
}

/// One simulation (`only`: flow `i` alone, the other flows idle).
fn simulate_one(
    cfg: &Config,
    progress: &mut dyn Progress,
    only: Option<usize>,
) -> Result<RunResult> {
    cfg.validate()?;
    let mut warnings = cfg.warnings.clone();
    // Resolution: "auto" values (a trace may be scanned for its footprint), then the memory check.
    // Several flows: each one's need of an "auto" device, its traces scanned once.
    let needs = resolve::flow_needs(cfg)?;
    let (mut resolved, geo, buffer_pages, scan) = resolve::resolve(cfg, &needs, &mut warnings)?;
    let mut flows = if cfg.flows.is_empty() {
        None
    } else {
        Some(plan::plan(cfg, &geo, &needs, only, &mut warnings)?)
    };
    // Show the padding policy actually used ("auto" = the buffer's default).
    resolved.buffer.padding = registry::resolved_padding(&resolved).to_string();
    // Every selected component's parameters, defaults filled in.
    fill_params(&mut resolved)?;
    let check = cfg.run.check_integrity;
    resolve::check_memory(&geo, check)?;
    let (mut sim, src) = build::build(
        &mut resolved,
        geo,
        flows.as_mut(),
        scan.as_ref(),
        buffer_pages,
        check,
    )?;
    // Replay, then the metrics of the measured window.
    let run = replay(
        &mut sim,
        src,
        &resolved,
        scan.as_ref(),
        progress,
        &mut warnings,
        flows.as_ref(),
    )?;
    Ok(assemble::assemble(
        &mut sim,
        run,
        resolved,
        buffer_pages,
        warnings,
    ))
}

/// Replay `src` (one flow) or the `flows`' workloads (several): see [`replay::drive`]. `scan` (the
/// sizing pre-pass, if any) gives a trace's length for progress.
fn replay(
    sim: &mut sim::Sim,
    src: source::Source,
    resolved: &Config,
    scan: Option<&source::Scan>,
    progress: &mut dyn Progress,
    warnings: &mut Vec<String>,
    flows: Option<&plan::FlowPlan>,
) -> Result<replay::Replayed> {
    let per_pass = match (&src, scan) {
        (source::Source::Synth(s), _) => s.len(),
        (_, Some(s)) => s.requests,
        _ => 0,
    };
    let total = per_pass * resolved.run.repeat as u64;
    match flows {
        None => {
            let one = replay::OneFlow { src, resolved };
            replay::drive(sim, one, resolved, total, total, progress, warnings)
        }
        // Progress counts the flows' requests; the sample limit is checked, as it always was,
        // on the top-level workload's.
        Some(plan) => {
            let flows = flows::Flows { plan, resolved };
            replay::drive(sim, flows, resolved, total, plan.total, progress, warnings)
        }
    }
}
