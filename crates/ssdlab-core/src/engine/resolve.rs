//! Resolution of "auto" and derived values (device capacity, buffer size, the FTL's auto
//! settings through the registry) and the memory check.

use super::source::{no_requests, scan_trace, seed_of, Scan};
use crate::config::{Capacity, Config};
use crate::error::{Result, SimError};
use crate::registry;
use crate::units::Geometry;

/// Resolve "auto" and derived values; returns the resolved config, geometry and buffer pages.
/// `flow_needs`: several flows' needs ([`flow_needs`]). What was accepted but probably
/// not meant goes into `warnings`.
pub(super) fn resolve(
    cfg: &Config,
    flow_needs: &[(u64, u64)],
    warnings: &mut Vec<String>,
) -> Result<(Config, Geometry, u64, Option<Scan>)> {
    let mut r = cfg.clone();
    let page_bytes = cfg.device.page_bytes.0;
    let ppb = cfg.device.pages_per_block;
    let is_trace = cfg.workload.kind == "trace" && cfg.flows.is_empty();
    let need_scan =
        is_trace && (cfg.device.logical_bytes == Capacity::Auto || cfg.buffer.fraction.is_some());
    let scan = if need_scan {
        Some(scan_trace(cfg, page_bytes, ppb)?)
    } else {
        None
    };
    if let Some(s) = &scan {
        if s.requests == 0 {
            return Err(no_requests(cfg, s.lines, s.format));
        }
    }
    let logical_bytes = match cfg.device.logical_bytes {
        Capacity::Bytes(b) => b,
        Capacity::Auto if !cfg.flows.is_empty() => auto_blocks(cfg, flow_needs) * ppb * page_bytes,
        Capacity::Auto => match (&scan, cfg.workload.address_map.as_str()) {
            (Some(s), "compact") => s.distinct_lbns * ppb * page_bytes,
            (Some(s), _) => s.max_end_bytes,
            (None, _) => cfg.workload.footprint_bytes.0,
        },
    };
    if logical_bytes == 0 {
        return Err(SimError::config(
            "device.logical_bytes",
            "the device would have no logical pages",
        ));
    }
    let mut logical_blocks = logical_bytes.div_ceil(page_bytes).div_ceil(ppb);
    if cfg.device.logical_bytes == Capacity::Auto {
        // An auto-sized device is also large enough for the FTL's reserve and open blocks at
        // this ρ (a tiny trace would otherwise leave no spare block to run GC with).
        // The spare-block need comes from the FTL's registry entry (it may grow with the device).
        for _ in 0..64 {
            let spare_needed = registry::ftl_spare_blocks(&r, logical_blocks)?;
            let need = (spare_needed as f64 / cfg.device.op()).ceil() as u64;
            if need <= logical_blocks {
                break;
            }
            logical_blocks = need;
        }
    }
    registry::resolve_ftl(&mut r, logical_blocks)?;
    let logical_pages = logical_blocks * ppb;
    // The FTL may over-provision by rules of its own (the line FTL paced as pblk); the
    // resolved configuration holds the ρ used.
    let (op, physical_blocks) = registry::provision(&r, logical_blocks, warnings)?;
    r.device.op = Some(op);
    let geo = Geometry {
        page_bytes,
        pages_per_block: ppb,
        logical_pages,
        physical_blocks,
    };
    r.device.logical_bytes = Capacity::Bytes(geo.logical_bytes());
    let footprint_pages = match &scan {
        _ if !cfg.flows.is_empty() => flow_needs.iter().map(|(_, p)| p).sum(),
        Some(s) => s.footprint_pages,
        None if is_trace => 0,
        None => cfg.workload.footprint_bytes.0.div_ceil(page_bytes),
    };
    let buffer_pages = match cfg.buffer.fraction {
        Some(f) => (footprint_pages as f64 * f).floor() as u64,
        None => cfg.buffer.bytes.0 / page_bytes,
    };
    if cfg.buffer.kind != "none" && buffer_pages == 0 {
        return Err(SimError::config(
            if cfg.buffer.fraction.is_some() { "buffer.fraction" } else { "buffer.bytes" },
            format!("the buffer holds less than one {page_bytes}-byte page (use buffer.kind = \"none\" for no buffer)"),
        ));
    }
    r.buffer.bytes = crate::units::Size(buffer_pages * page_bytes);
    let g = crate::units::grouped;
    if cfg.buffer.kind != "none" && cfg.buffer.fraction.is_none() {
        let asked = cfg.buffer.bytes.0;
        if !asked.is_multiple_of(page_bytes) {
            warnings.push(format!(
                "buffer.bytes = {} bytes is rounded down to {} page{} = {} bytes",
                g(asked),
                g(buffer_pages),
                if buffer_pages == 1 { "" } else { "s" },
                g(buffer_pages * page_bytes)
            ));
        }
    }
    if cfg.buffer.kind != "none" && buffer_pages >= logical_pages {
        warnings.push(format!(
            "the buffer ({} pages) is as large as the device ({} logical pages): every write can stay in it",
            g(buffer_pages),
            g(logical_pages)
        ));
    }
    if cfg.run.mode == "timed" && cfg.device.dies() == 1 {
        warnings.push(single_die_note());
    }
    if cfg.run.mode == "timed" {
        warnings.extend(short_stripe_note(cfg));
    }
    // A whole-device fill followed by a trace that touches a sliver of it measures almost no GC
    // (compact sizing already fits the device to the trace).
    if let Some(s) = &scan {
        if cfg.device.logical_bytes == Capacity::Auto
            && cfg.workload.address_map != "compact"
            && cfg.run.fills()
            && s.footprint_pages.saturating_mul(100) < logical_pages
        {
            let bytes = geo.logical_bytes() as f64;
            let size = if bytes >= (1u64 << 30) as f64 {
                format!("{:.1} GiB", bytes / (1u64 << 30) as f64)
            } else {
                format!("{:.1} MiB", bytes / (1u64 << 20) as f64)
            };
            warnings.push(format!(
                "the trace writes {} pages, under 1% of the automatically sized device ({} pages = {size}, \
                 sized from the highest address); set workload.address_map = \"compact\" to size the device \
                 to the blocks the trace touches",
                g(s.footprint_pages),
                g(logical_pages),
            ));
        }
    }
    if let (Some(_), Capacity::Auto) = (&scan, cfg.device.logical_bytes) {
        warnings.extend(oversized_device_warning(cfg, geo.logical_bytes()));
    }
    if !is_trace && cfg.flows.is_empty() {
        r.workload.seed = Some(seed_of(cfg));
    }
    for i in 0..cfg.flows.len() {
        if cfg.flows[i].workload.kind != "trace" {
            r.flows[i].workload.seed = cfg.flow_view(i).workload.seed;
        }
    }
    Ok((r, geo, buffer_pages, scan))
}

/// A device sized over 1 TiB from a trace file under 100 MB: a few hundred thousand requests
/// rarely span a terabyte, offsets in bytes read as 512-byte sectors do.
fn oversized_device_warning(cfg: &Config, logical_bytes: u64) -> Option<String> {
    let path = cfg.workload.path.as_deref()?;
    let file_bytes = std::fs::metadata(path).ok()?.len();
    if logical_bytes <= 1 << 40 || file_bytes >= 100_000_000 {
        return None;
    }
    let how = if cfg.workload.address_map == "compact" {
        "from the logical blocks it touches"
    } else {
        "from its highest address"
    };
    Some(format!(
        "the automatically sized device is {} ({how}) for a trace file of {}: are its offsets \
         in the unit the format says (bytes read as 512-byte sectors are 512 times too far)? \
         `ssdlab trace info` shows how the file reads; workload.format chooses the format",
        crate::units::human_bytes(logical_bytes),
        crate::units::human_bytes(file_bytes),
    ))
}

/// Timed mode with blocks too short to stripe over every die: a block's page offset decides its
/// die, so the dies past the block's last NAND page row never hold data.
fn short_stripe_note(cfg: &Config) -> Option<String> {
    let d = &cfg.device;
    let per_row = cfg.nand.units_per_page(d.page_bytes.0) * d.planes_per_die as u64;
    let rows = d.pages_per_block / per_row.max(1);
    (rows < d.dies()).then(|| {
        format!(
            "a block's {} pages fill {rows} NAND page rows, one per die, so only {rows} of the {} dies              ever hold data; set device.pages_per_block to at least {} to stripe every block over every die",
            d.pages_per_block,
            d.dies(),
            d.dies() * per_row
        )
    })
}

/// Timed mode on one die: no two flash operations overlap, so latencies and throughput are a
/// single die's (right for a queueing check, misleading for an SSD).
fn single_die_note() -> String {
    "timed mode on a device with one die (device.channels × chips_per_channel × dies_per_chip = 1) \
     models no parallelism: every flash operation waits for the one before it; set device.channels \
     and device.chips_per_channel (e.g. 8 and 4) for an SSD's dies"
        .to_string()
}

/// MemAvailable from /proc/meminfo, in bytes (None where unknown).
fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuse a device whose mapping tables cannot fit in memory, before the OS kills the process.
pub(super) fn check_memory(geo: &Geometry, check: bool) -> Result<()> {
    let per_page = if check { 8 } else { 4 };
    let need = per_page * (geo.logical_pages + geo.physical_pages());
    if let Some(avail) = mem_available_bytes() {
        if need > avail {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            return Err(SimError::config(
                "device.logical_bytes",
                format!(
                    "a {:.1} GiB device needs about {:.1} GiB of mapping tables, but only {:.1} GiB of memory is \
                     available; use a smaller device or workload.address_map = \"compact\"",
                    gib(geo.logical_bytes()),
                    gib(need),
                    gib(avail)
                ),
            ));
        }
    }
    Ok(())
}

/// What each flow needs of an "auto"-sized device: logical bytes (its highest address, or its
/// distinct blocks under `compact`) and footprint pages; traces are scanned. Only where
/// `device.logical_bytes = "auto"` or a `buffer.fraction` asks (else empty).
pub(super) fn flow_needs(cfg: &Config) -> Result<Vec<(u64, u64)>> {
    if cfg.device.logical_bytes != Capacity::Auto && cfg.buffer.fraction.is_none() {
        return Ok(Vec::new());
    }
    let (page_bytes, ppb) = (cfg.device.page_bytes.0, cfg.device.pages_per_block);
    (0..cfg.flows.len())
        .map(|i| {
            let v = cfg.flow_view(i);
            if v.workload.kind != "trace" {
                let b = v.workload.footprint_bytes.0;
                return Ok((b, b.div_ceil(page_bytes)));
            }
            let s = scan_trace(&v, page_bytes, ppb)?;
            if s.requests == 0 {
                return Err(no_requests(&v, s.lines, s.format));
            }
            let bytes = if v.workload.address_map == "compact" {
                s.distinct_lbns * ppb * page_bytes
            } else {
                s.max_end_bytes
            };
            Ok((bytes, s.footprint_pages))
        })
        .collect::<Result<Vec<_>>>()
        .map(|needs| namespace_needs(cfg, needs))
}

/// Flows of one namespace share its first flow's range: it needs the most any of them needs
/// (a footprint that overlaps theirs), and the others need nothing more.
fn namespace_needs(cfg: &Config, mut needs: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    for i in 0..needs.len() {
        let leader = cfg.namespace_leader(i);
        if leader != i {
            let (b, p) = std::mem::take(&mut needs[i]);
            let l = &mut needs[leader];
            *l = (l.0.max(b), l.1.max(p));
        }
    }
    needs
}

/// The logical blocks an "auto"-sized device needs for every flow's range.
fn auto_blocks(cfg: &Config, needs: &[(u64, u64)]) -> u64 {
    let block_bytes = cfg.device.page_bytes.0 * cfg.device.pages_per_block;
    // A namespace's range is its first flow's.
    let blocks = needs
        .iter()
        .zip(&cfg.flows)
        .enumerate()
        .filter(|(i, _)| cfg.namespace_leader(*i) == *i)
        .map(|(_, ((b, _), f))| (b.div_ceil(block_bytes).max(1), f));
    if cfg.flows[0].share.is_some() {
        // Each flow's share must hold its need.
        blocks
            .map(|(b, f)| (b as f64 / f.share.unwrap_or(1.0)).ceil() as u64)
            .max()
            .unwrap_or(1)
    } else {
        blocks.map(|(b, _)| b).sum()
    }
}

/// Write the selected components' parameters into their tables with every default filled in,
/// so that a result's configuration says exactly what produced it.
pub fn fill_params(cfg: &mut Config) -> Result<()> {
    super::check::validate(cfg)?;
    let mut filled = Vec::new();
    for (category, tables, selected) in registry::selections(cfg) {
        if category == "workload" && !cfg.flows.is_empty() {
            continue; // each flow's own, below
        }
        if let Some(v) = filled_params(category, tables, &selected)? {
            filled.push((category, selected, v));
        }
    }
    for (category, name, v) in filled {
        let tables = match category {
            "workload" => &mut cfg.workload.tables,
            "ftl" => &mut cfg.ftl.tables,
            "gc" => &mut cfg.gc,
            "buffer" => &mut cfg.buffer.tables,
            "scheduler" => &mut cfg.scheduler,
            "placement" => &mut cfg.placement.tables,
            _ => &mut cfg.padding,
        };
        tables.insert(name, v);
    }
    for f in &mut cfg.flows {
        let w = &mut f.workload;
        if let Some(v) = filled_params("workload", &w.tables, &w.kind)? {
            w.tables.insert(w.kind.clone(), v);
        }
    }
    // An unset device.op is DEFAULT_OP, unless the FTL over-provisions by its own rule from
    // the device it is given (the line FTL paced as pblk: `ftl::lines::provision`).
    if cfg.device.op.is_none() && (registry::ftl(cfg)?.default_op)(cfg)? {
        cfg.device.op = Some(crate::config::DEFAULT_OP);
    }
    Ok(())
}

/// Component `name`'s parameters in `tables` with every default filled in (None: it has none).
fn filled_params(
    category: &str,
    tables: &crate::params::Tables,
    name: &str,
) -> Result<Option<serde_json::Value>> {
    match registry::component(category, name) {
        Some(comp) if !(comp.params.fields)().is_empty() => Ok(Some((comp.params.resolve)(
            tables.get(name),
            &comp.table(),
        )?)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terabyte_device_from_a_small_trace_warns() {
        let dir = std::env::temp_dir().join(format!("ssdlab-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("far.trace");
        std::fs::write(&path, "1.0 0 2362232012 8 0\n").unwrap();
        let mut cfg = Config::default();
        cfg.workload.kind = "trace".into();
        cfg.workload.path = Some(path.display().to_string());
        let w = oversized_device_warning(&cfg, 1_209_462_790_144).unwrap();
        assert!(
            w.starts_with(
                "the automatically sized device is 1.1 TiB (from its highest address) for a trace file of 21 B"
            ),
            "{w}"
        );
        // 1 TiB exactly, or a file of 100 MB, is not suspicious.
        assert_eq!(oversized_device_warning(&cfg, 1 << 40), None);
        cfg.workload.address_map = "compact".into();
        assert!(oversized_device_warning(&cfg, 2 << 40)
            .unwrap()
            .contains("(from the logical blocks it touches)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
