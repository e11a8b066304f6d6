//! Build: the components of the resolved configuration from the registry — placement
//! classifier, FTL (one per set of dies where flows are confined to them), padding policy,
//! write buffer — and the simulated device they make, with the workload's source.

use super::address::AddressMap;
use super::flush::Backend;
use super::plan::FlowPlan;
use super::readahead::ReadAhead;
use super::sim::Sim;
use super::source::{self, Scan, Source};
use crate::buffer::BufferParams;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::registry;
use crate::units::Geometry;

/// The simulated device of `resolved` on `geo` (a partitioned FTL where the plan confines flows
/// to dies: `geo` and `resolved` become their sum) and the workload's source.
pub(super) fn build(
    resolved: &mut Config,
    mut geo: Geometry,
    plan: Option<&mut FlowPlan>,
    scan: Option<&Scan>,
    buffer_pages: u64,
    check: bool,
) -> Result<(Sim, Source)> {
    // The components first, so that a configuration error (a device too small for its FTL)
    // is reported before a trace error: FTL, padding policy and write buffer.
    let ftl = match plan.filter(|p| p.parts.is_some()) {
        Some(plan) => partitioned_ftl(resolved, &mut geo, plan)?,
        None => {
            let placement = placement(resolved, &geo, scan)?;
            registry::build_ftl(resolved, &geo, placement)?
        }
    };
    let padding = registry::build_padding(resolved)?;
    let buffer = registry::build_buffer(
        resolved,
        BufferParams {
            capacity_pages: buffer_pages,
            pages_per_block: geo.pages_per_block,
            padding,
        },
    )?;
    // The data flow: workload source → address mapping → write buffer → flush path → FTL →
    // NAND counters.
    let src = source::reopen(resolved, scan.and_then(|s| s.parsed.as_ref()))?;
    if let Some(name) = src.format_name() {
        resolved.workload.format = Some(name.to_string());
    }
    let map = AddressMap::new(&resolved.workload.address_map, &geo);
    let mut be = Backend::new(ftl, &geo, resolved.buffer.padding_fill == "all")?;
    be.readahead = ReadAhead::new(&resolved.readahead);
    let mut sim = Sim::new(geo, map, buffer, be, check)?;
    sim.buffer_pages = buffer_pages;
    Ok((sim, src))
}

/// The placement classifier; the oracle's future knowledge comes from a pre-pass over the
/// workload (every pass of `run.repeat`), through the same address map the replay uses.
fn placement(
    cfg: &Config,
    geo: &Geometry,
    scan: Option<&Scan>,
) -> Result<Box<dyn crate::placement::Classifier>> {
    let classes = registry::ftl_frontiers(cfg)?;
    let future = if cfg.placement.kind == "oracle" {
        let mut src = source::reopen(cfg, scan.and_then(|s| s.parsed.as_ref()))?;
        let mut map = AddressMap::new(&cfg.workload.address_map, geo);
        let shift = geo.sectors_per_page().trailing_zeros();
        let mut lpns = Vec::new();
        let filled = if cfg.run.fills() {
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
    geo: &mut Geometry,
    plan: &mut FlowPlan,
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
