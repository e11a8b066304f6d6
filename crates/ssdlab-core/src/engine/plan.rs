//! Plan: how the resolved configuration's flows share the device — each flow's range of the
//! logical blocks, the sets of dies they are confined to (one FTL each) and the requests in all.

use crate::config::{Capacity, Config};
use crate::error::{Result, SimError};
use crate::units::Geometry;

/// Each flow's range of the device's logical blocks, in flow order: its share of them, an
/// equal split, or (an "auto"-sized device without shares) its own need.
fn ranges(cfg: &Config, geo: &Geometry, needs: &[(u64, u64)]) -> Result<Vec<u64>> {
    let total = geo.logical_blocks();
    // Flows of one namespace share its first flow's range (that flow comes before them).
    let leader: Vec<usize> = (0..cfg.flows.len())
        .map(|i| cfg.namespace_leader(i))
        .collect();
    let n = leader.iter().enumerate().filter(|&(i, &l)| i == l).count() as u64;
    let block_bytes = geo.page_bytes * geo.pages_per_block;
    let mut blocks = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        if leader[i] != i {
            blocks.push(blocks[leader[i]]);
            continue;
        }
        let b = match (f.share, cfg.device.logical_bytes) {
            (Some(s), _) => (s * total as f64).floor() as u64,
            (None, Capacity::Auto) => needs
                .get(i)
                .map_or(total / n, |(b, _)| b.div_ceil(block_bytes).max(1)),
            (None, Capacity::Bytes(_)) => total / n,
        };
        if b == 0 {
            return Err(SimError::config(
                format!("flows[{i}]"),
                format!(
                    "its range of the device would hold no logical block ({total} blocks for {n} flows); \
                     raise device.logical_bytes or its share"
                ),
            ));
        }
        blocks.push(b);
    }
    Ok(blocks)
}

/// How the flows share the device: each one's range of logical blocks, and whether one runs
/// alone (`run.alone`). `total`: requests in all (0 = unknown), for progress.
pub(super) struct FlowPlan {
    /// Each flow's range: its first logical block and its blocks.
    pub(super) bases: Vec<u64>,
    pub(super) ranges: Vec<u64>,
    pub(super) only: Option<usize>,
    pub(super) total: u64,
    /// With flows confined to channels or dies: each set of dies with the logical blocks of its
    /// flows (their ranges lie together, in the sets' order); None: every flow uses every die.
    pub(super) parts: Option<Vec<(Vec<u32>, u64)>>,
    /// The blocks' ranges on those sets once their FTLs are built: (end block, dies).
    pub(super) stripes: Vec<(u64, Vec<u32>)>,
}

/// The sets of dies the flows use, in the order of their first flow, each with its flows.
fn die_sets(cfg: &Config) -> Vec<(Vec<u32>, Vec<usize>)> {
    let mut sets: Vec<(Vec<u32>, Vec<usize>)> = Vec::new();
    for i in 0..cfg.flows.len() {
        let dies = cfg.flow_dies(i);
        match sets.iter_mut().find(|(d, _)| *d == dies) {
            Some((_, flows)) => flows.push(i),
            None => sets.push((dies, vec![i])),
        }
    }
    sets
}

/// The plan of `cfg`'s flows on a device of `geo` (`only`: that flow alone); notes about keys
/// the flows do not use go into `warnings`.
pub(super) fn plan(
    cfg: &Config,
    geo: &Geometry,
    needs: &[(u64, u64)],
    only: Option<usize>,
    warnings: &mut Vec<String>,
) -> Result<FlowPlan> {
    let ranges = ranges(cfg, geo, needs)?;
    // Ranges lie together by set of dies (one FTL each), in flow order within a set.
    let sets = die_sets(cfg);
    let mut bases = vec![0; ranges.len()];
    let mut next = 0;
    let mut parts = Vec::new();
    for (dies, flows) in &sets {
        let first = next;
        for &i in flows {
            match cfg.namespace_leader(i) {
                l if l == i => {
                    bases[i] = next;
                    next += ranges[i];
                }
                l => bases[i] = bases[l], // its namespace's range, laid out before it
            }
        }
        parts.push((dies.clone(), next - first));
    }
    let everywhere = sets.len() == 1 && sets[0].0.len() as u64 == cfg.device.dies();
    let run = crate::config::RunConfig::default();
    if only.is_none() {
        for (k, set) in [
            ("run.queue_depth", cfg.run.queue_depth != run.queue_depth),
            ("run.max_inflight", cfg.run.max_inflight != run.max_inflight),
        ] {
            if set {
                warnings.push(format!(
                    "{k} is not used with [[flows]]: each flow has its own (flows[i].{})",
                    k.trim_start_matches("run.")
                ));
            }
        }
        let default = crate::config::FlowConfig::default();
        if cfg.host.arbitration == "round-robin" {
            for (i, f) in cfg.flows.iter().enumerate() {
                if f.weight != default.weight || f.priority != default.priority {
                    warnings.push(format!(
                        "flows[{i}]: priority and weight are not used by host.arbitration = \"round-robin\" (use \"weighted-round-robin\")"
                    ));
                }
            }
        } else if cfg.host.device_queue_depth == 0 {
            // Without a limit every command is fetched as it is submitted: arbitration only
            // orders submissions at the same instant, so the urgent class changes nothing.
            for (i, f) in cfg.flows.iter().enumerate() {
                if f.priority == "urgent" {
                    warnings.push(format!(
                        "flows[{i}]: the urgent class changes nothing with host.device_queue_depth = 0 \
                         (no limit: every command is fetched when it is submitted); set \
                         host.device_queue_depth, e.g. 32, for the controller to fetch urgent commands first"
                    ));
                }
            }
        }
    }
    let total = (0..cfg.flows.len())
        .filter(|&i| only.is_none_or(|o| o == i))
        .map(|i| {
            let w = &cfg.flows[i].workload;
            (w.kind != "trace").then_some(w.requests)
        })
        .sum::<Option<u64>>()
        .map_or(0, |n| n * cfg.run.repeat as u64);
    Ok(FlowPlan {
        bases,
        ranges,
        only,
        total,
        parts: (!everywhere).then_some(parts),
        stripes: Vec::new(),
    })
}
