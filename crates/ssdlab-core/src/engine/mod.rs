//! Counts-mode engine: replays a workload through buffer → FTL → NAND and sums costs (no clock).
//!
//! One file per stage, in the order `simulate()` runs them (after `resolve`, the data flow):
//! - `resolve`: validate and resolve the configuration ("auto" capacity from the workload's
//!   footprint, buffer size, the FTL's auto settings) and check that the device fits in memory;
//! - `source`: the workload (a trace, optionally parsed on a reader thread, or a synthetic one);
//! - `address`: host LPNs → device LPNs (none / fold / compact);
//! - the write buffer (built through the registry; `crate::buffer`);
//! - `flush`: the flush path below the buffer (padding and read-modify-write reads, cause tags)
//!   into the FTL and the NAND counters;
//! - `replay`: precondition, warm-up, repeats, time-series samples, final flush, integrity;
//! - `assemble`: the metrics of the measured window, into a [`RunResult`].
//!
//! Policy statistics stay with their layer: the flushed-group statistics are the buffer layer's
//! (`crate::buffer::accounting`), fed by the flush path.

mod address;
mod assemble;
mod clock_thread;
mod flows;
mod flush;
mod replay;
mod resolve;
mod source;
mod timed;

pub use replay::SERIES_METRICS;

use crate::buffer::BufferParams;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::registry;
use address::AddressMap;
use flush::Backend;
use replay::Sim;
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

/// The placement classifier; the oracle's future knowledge comes from a pre-pass over the
/// workload (every pass of `run.repeat`), through the same address map the replay uses.
fn placement(
    cfg: &Config,
    geo: &crate::units::Geometry,
    scan: Option<&source::Scan>,
) -> Result<Box<dyn crate::placement::Classifier>> {
    let classes = match cfg.ftl.kind.as_str() {
        "lines" => registry::lines_classes(cfg)?,
        "page" => registry::page_streams(cfg)?,
        _ => 1,
    };
    let future = if cfg.placement.kind == "oracle" {
        let mut src = match scan.and_then(|s| s.parsed.as_ref()) {
            Some(p) => source::Source::Kept(source::Kept::new(p)),
            None => source::open_source(cfg)?,
        };
        let mut map = AddressMap::new(&cfg.workload.address_map, geo);
        let shift = geo.sectors_per_page().trailing_zeros();
        let mut lpns = Vec::new();
        let filled = if cfg.run.precondition == "fill" {
            geo.logical_pages
        } else {
            0
        };
        while let Some(req) = src.next() {
            let req = req?;
            if req.op != crate::request::Op::Write {
                continue;
            }
            let at = src.at();
            for (lpn, _) in crate::units::PageSpan::new(req.offset_bytes, req.len_bytes, shift) {
                lpns.push(map.map_lpn(geo, lpn, &req, at)?);
            }
        }
        let one_pass = lpns.len();
        for _ in 1..cfg.run.repeat {
            lpns.extend_from_within(..one_pass);
        }
        // The precondition fill comes first: every LPN once, in order.
        if filled > 0 {
            lpns.splice(0..0, 0..filled);
        }
        Some(crate::placement::oracle::Future::from_writes(
            &lpns,
            geo.logical_pages,
        ))
    } else {
        None
    };
    registry::build_placement(
        cfg,
        crate::placement::PlacementInput {
            logical_pages: geo.logical_pages,
            line_pages: geo.pages_per_block,
            classes,
            future,
        },
    )
}

/// Flows confined to sets of dies: a page FTL per set over its flows' logical blocks, with the
/// same over-provisioning, side by side ([`crate::ftl::partitioned`]); the device is their sum
/// (`geo` and `device.logical_bytes` become it) and `plan.stripes` where their blocks lie.
fn partitioned_ftl(
    resolved: &mut Config,
    geo: &mut crate::units::Geometry,
    plan: &mut flows::FlowPlan,
) -> Result<Box<dyn crate::ftl::Ftl>> {
    use crate::ftl::partitioned::{Part, Partitioned};
    let ppb = geo.pages_per_block;
    let (mut lpn_base, mut pbn_base) = (0, 0u64);
    let mut parts = Vec::new();
    for (dies, blocks) in plan.parts.iter().flatten() {
        let physical = crate::units::physical_blocks(*blocks, resolved.device.op());
        let spare = registry::ftl_spare_blocks(resolved, *blocks)?;
        if physical < blocks + spare {
            return Err(SimError::config(
                "flows",
                format!(
                    "the flows on dies {dies:?} have {blocks} logical blocks: with device.op = {} their FTL gets {physical} physical blocks, fewer than the {} it needs; give them a larger share or raise device.op",
                    resolved.device.op(),
                    blocks + spare
                ),
            ));
        }
        let g = crate::units::Geometry {
            logical_pages: blocks * ppb,
            physical_blocks: physical,
            ..*geo
        };
        let placement = placement(resolved, &g, None)?;
        parts.push(Part {
            ftl: registry::build_ftl(resolved, &g, placement)?,
            lpn_base,
            lpns: blocks * ppb,
            pbn_base: pbn_base as u32,
            blocks: physical as u32,
        });
        lpn_base += blocks * ppb;
        pbn_base += physical;
        plan.stripes.push((pbn_base, dies.clone()));
    }
    geo.logical_pages = lpn_base;
    geo.physical_blocks = pbn_base;
    resolved.device.logical_bytes = crate::config::Capacity::Bytes(geo.logical_bytes());
    Ok(Box::new(Partitioned::new(
        parts,
        ppb as u32,
        resolved.run.check_integrity,
    )))
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
    let needs = flows::needs(cfg)?;
    let (mut resolved, mut geo, buffer_pages, scan) = resolve::resolve(cfg, &needs, &mut warnings)?;
    let mut flows = if cfg.flows.is_empty() {
        None
    } else {
        Some(flows::plan(cfg, &geo, &needs, only, &mut warnings)?)
    };
    // Show the padding policy actually used ("auto" = the buffer's default).
    resolved.buffer.padding = registry::resolved_padding(&resolved).to_string();
    // Every selected component's parameters, defaults filled in.
    registry::fill_params(&mut resolved)?;
    let check = cfg.run.check_integrity;
    resolve::check_memory(&geo, check)?;
    // The components first, so that a configuration error (a device too small for its FTL)
    // is reported before a trace error: FTL, padding policy and write buffer.
    let ftl = match flows.as_mut().filter(|p| p.parts.is_some()) {
        Some(plan) => partitioned_ftl(&mut resolved, &mut geo, plan)?,
        None => {
            let placement = placement(&resolved, &geo, scan.as_ref())?;
            registry::build_ftl(&resolved, &geo, placement)?
        }
    };
    let padding = registry::build_padding(&resolved)?;
    let buffer = registry::build_buffer(
        &resolved,
        BufferParams {
            capacity_pages: buffer_pages,
            pages_per_block: geo.pages_per_block,
            padding,
        },
    )?;
    // The data flow: workload source → address mapping → write buffer → flush path → FTL →
    // NAND counters.
    let src = match scan.as_ref().and_then(|s| s.parsed.as_ref()) {
        Some(p) => source::Source::Kept(source::Kept::new(p)),
        None => source::open_source(&resolved)?,
    };
    if let Some(name) = src.format_name() {
        resolved.workload.format = Some(name.to_string());
    }
    let map = AddressMap::new(&resolved.workload.address_map, &geo);
    let be = Backend::new(ftl, &geo, resolved.buffer.padding_fill == "all")?;
    let mut sim = Sim::new(geo, map, buffer, be, check)?;
    sim.buffer_pages = buffer_pages;
    // Replay, then the metrics of the measured window.
    let run = replay::replay(
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
