//! The one list of components. Each entry names a component, says what it is, lists the
//! configuration keys it reads, and (for buffers, FTLs and padding) holds its constructor.
//! The CLI choices, `ssdlab policies`, config validation and docs/components.md come from here.
//! Adding a policy = its file + one entry below.

use crate::buffer::{self, BufferParams, WriteBuffer};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::ftl::{self, Ftl};
use crate::gc::VictimPolicy;
use crate::padding::{self, Padding};
use crate::units::Geometry;

#[derive(Clone, Copy, Debug)]
pub struct Component {
    /// workload | ftl | gc | buffer | padding
    pub category: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// Dotted configuration keys this component reads (defaults come from `Config::default()`).
    pub params: &'static [&'static str],
}

pub type BufferCtor = fn(&Config, BufferParams) -> Result<Box<dyn WriteBuffer>>;
pub type FtlCtor = fn(&Config, &Geometry) -> Result<Box<dyn Ftl>>;
pub type PaddingCtor = fn(&Config) -> Result<Box<dyn Padding>>;

pub struct Entry<C> {
    pub info: Component,
    pub build: C,
}

const fn c(
    category: &'static str,
    name: &'static str,
    summary: &'static str,
    params: &'static [&'static str],
) -> Component {
    Component {
        category,
        name,
        summary,
        params,
    }
}

pub static BUFFERS: &[Entry<BufferCtor>] = &[
    Entry {
        info: c("buffer", "none", "No write buffer: every page write goes straight to the FTL.", &[]),
        build: |_, p| Ok(Box::new(buffer::none::NoBuffer::new(p.pages_per_block))),
    },
    Entry {
        info: c(
            "buffer",
            "lru",
            "Page-level LRU; write hits move to MRU, the LRU page is flushed alone.",
            &["buffer.bytes", "buffer.fraction"],
        ),
        build: |_, p| Ok(Box::new(buffer::lru::LruBuffer::new(p.capacity_pages, p.pages_per_block))),
    },
    Entry {
        info: c(
            "buffer",
            "block-lru",
            "Pages grouped by LBN, LRU over groups; the victim group is flushed whole in ascending offset.",
            &["buffer.bytes", "buffer.fraction", "buffer.padding"],
        ),
        build: |_, p| Ok(Box::new(buffer::block_lru::BlockLruBuffer::new(p))),
    },
    Entry {
        info: c(
            "buffer",
            "fab",
            "FAB: pages grouped by LBN; victim = the group with the most pages (ties: least recently written), flushed whole. Reads are not cached. Default padding: none.",
            &["buffer.bytes", "buffer.fraction", "buffer.padding"],
        ),
        build: |_, p| Ok(Box::new(buffer::fab::FabBuffer::new(p))),
    },
    Entry {
        info: c(
            "buffer",
            "bplru",
            "BPLRU: block-level LRU; victim = a full group first, else the LRU group; LRU compensation moves sequentially filled groups to the LRU end. Default padding: fixed at 0.5 of a block.",
            &["buffer.bytes", "buffer.fraction", "buffer.padding", "buffer.padding_threshold", "buffer.bplru_compensation"],
        ),
        build: |cfg, p| {
            let comp = buffer::bplru::Compensation::from_name(&cfg.buffer.bplru_compensation)?;
            Ok(Box::new(buffer::bplru::BplruBuffer::new(p, comp)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "hitstat",
            "HitStat (seed 000): victim = a full group, else a group older than the age threshold, else the smallest AgeRank/weight among the oldest group of each of 18 weight classes; AgeRank from the hit log, levels adapted to minimise group misses. Default padding: model.",
            HITSTAT_KEYS,
        ),
        build: |cfg, p| Ok(Box::new(buffer::hitstat::HitStatBuffer::new(p, hitstat_params(cfg, false)))),
    },
    Entry {
        info: c(
            "buffer",
            "hitstat-adj",
            "HitStat(adj): HitStat with weights below the current padding threshold counted as the threshold (small cold groups leave earlier; the thesis's choice on FAST). Default padding: model.",
            HITSTAT_KEYS,
        ),
        build: |cfg, p| Ok(Box::new(buffer::hitstat::HitStatBuffer::new(p, hitstat_params(cfg, true)))),
    },
];

const HITSTAT_KEYS: &[&str] = &[
    "buffer.bytes",
    "buffer.fraction",
    "buffer.padding",
    "buffer.padding_threshold",
    "buffer.hitstat_hit_log",
    "buffer.hitstat_levels",
    "buffer.hitstat_period",
    "buffer.hitstat_age_threshold",
];

fn hitstat_params(cfg: &Config, adj: bool) -> buffer::hitstat::HitStatParams {
    let b = &cfg.buffer;
    buffer::hitstat::HitStatParams {
        sectors_per_page: (cfg.device.page_bytes.0 / crate::units::SECTOR_BYTES) as u32,
        hit_log: b.hitstat_hit_log as usize,
        levels: b.hitstat_levels,
        period: b.hitstat_period,
        age_threshold: b.hitstat_age_threshold,
        adj,
    }
}

/// The padding policy `buffer.padding = "auto"` stands for, per buffer kind: none for
/// none/lru/block-lru/fab, fixed (at `buffer.padding_threshold`, default 0.5) for bplru, model
/// for hitstat and hitstat-adj.
pub fn default_padding(buffer_kind: &str) -> &'static str {
    match buffer_kind {
        "bplru" => "fixed",
        "hitstat" | "hitstat-adj" => "model",
        _ => "none",
    }
}

/// The padding policy actually used: `buffer.padding`, with "auto" resolved.
pub fn resolved_padding(cfg: &Config) -> &str {
    if cfg.buffer.padding == "auto" {
        default_padding(&cfg.buffer.kind)
    } else {
        &cfg.buffer.padding
    }
}

/// Physical blocks an FTL needs beyond the logical blocks (given the resolved config and the
/// logical block count): engine `resolve()` sizes auto-capacity devices with it.
pub type SpareFn = fn(&Config, u64) -> u64;

pub struct FtlEntry {
    pub info: Component,
    pub build: FtlCtor,
    pub spare_blocks: SpareFn,
    /// Replace the FTL's automatic (0) settings by the values it will use, for a device of the
    /// given logical blocks, so that a result's configuration says exactly what produced it.
    pub resolve: ResolveFn,
}

pub type ResolveFn = fn(&mut Config, u64);

fn resolve_page(cfg: &mut Config, _logical_blocks: u64) {
    let f = &mut cfg.ftl;
    if f.gc_free_blocks == 0 {
        f.gc_free_blocks = f.streams as u64 + f.separate_gc_frontier as u64 + 2;
    }
}

fn resolve_hybrid(cfg: &mut Config, logical_blocks: u64) {
    cfg.ftl.log_blocks = ftl::hybrid::log_blocks(cfg.ftl.log_blocks, logical_blocks);
}

fn page_spare(cfg: &Config, _logical_blocks: u64) -> u64 {
    let f = &cfg.ftl;
    let frontiers = f.streams as u64 + f.separate_gc_frontier as u64;
    let threshold = if f.gc_free_blocks == 0 {
        frontiers + 2
    } else {
        f.gc_free_blocks
    };
    threshold + frontiers + 1
}

fn hybrid_logs(cfg: &Config, geo: &Geometry) -> u64 {
    ftl::hybrid::log_blocks(cfg.ftl.log_blocks, geo.logical_blocks())
}

pub static FTLS: &[FtlEntry] = &[
    FtlEntry {
        info: c(
            "ftl",
            "page",
            "Page-mapped FTL: L2P/P2L, write frontiers per stream, GC by free-block threshold, trim.",
            &[
                "ftl.gc",
                "ftl.gc_free_blocks",
                "ftl.streams",
                "ftl.separate_gc_frontier",
            ],
        ),
        build: |cfg, geo| {
            let f = &cfg.ftl;
            Ok(Box::new(ftl::page::PageFtl::new(
                geo,
                VictimPolicy::from_name(&f.gc)?,
                f.gc_free_blocks,
                f.streams,
                f.separate_gc_frontier,
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: page_spare,
        resolve: resolve_page,
    },
    FtlEntry {
        info: c(
            "ftl",
            "block",
            "Block-mapped FTL: pages at fixed offsets; a flush unit overwriting any page rewrites its block once.",
            &[],
        ),
        build: |cfg, geo| Ok(Box::new(ftl::block::BlockFtl::new(geo, cfg.run.check_integrity)?)),
        spare_blocks: |_, _| ftl::block::spare_blocks(),
        resolve: |_, _| {},
    },
    FtlEntry {
        info: c(
            "ftl",
            "bast",
            "BAST: per-LBN log blocks (chain variant: chains merged beyond a limit, victim = longest of the \
             next look-ahead chains; single: one log block per LBN, LRU victim); switch/partial/full merges.",
            &[
                "ftl.log_blocks",
                "ftl.bast_variant",
                "ftl.bast_chain_limit",
                "ftl.bast_lookahead",
                "ftl.model_stats",
            ],
        ),
        build: |cfg, geo| {
            let f = &cfg.ftl;
            Ok(Box::new(ftl::bast::BastFtl::new(
                geo,
                hybrid_logs(cfg, geo),
                &f.bast_variant,
                f.bast_chain_limit,
                f.bast_lookahead,
                ftl::hybrid::ModelStats::parse(&f.model_stats)?,
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: |cfg, lb| {
            ftl::bast::spare_blocks(ftl::hybrid::log_blocks(cfg.ftl.log_blocks, lb))
        },
        resolve: resolve_hybrid,
    },
    FtlEntry {
        info: c(
            "ftl",
            "fast",
            "FAST: one sequential (SW) log block + fully associative RW log blocks in FIFO order; the \
             oldest RW log block is reclaimed by full-merging every LBN with a valid page in it.",
            &["ftl.log_blocks", "ftl.model_stats"],
        ),
        build: |cfg, geo| {
            Ok(Box::new(ftl::fast::FastFtl::new(
                geo,
                hybrid_logs(cfg, geo),
                ftl::hybrid::ModelStats::parse(&cfg.ftl.model_stats)?,
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: |cfg, lb| {
            ftl::fast::spare_blocks(ftl::hybrid::log_blocks(cfg.ftl.log_blocks, lb))
        },
        resolve: resolve_hybrid,
    },
];

pub static GC_POLICIES: &[Component] = &[
    c(
        "gc",
        "greedy",
        "Victim = sealed block with the fewest valid pages.",
        &[],
    ),
    c(
        "gc",
        "cost-benefit",
        "Victim maximises (1−u)·age/(1+u); age = host page writes since sealing.",
        &[],
    ),
    c("gc", "fifo", "Victim = oldest sealed block.", &[]),
];

pub static PADDINGS: &[Entry<PaddingCtor>] = &[
    Entry {
        info: c("padding", "none", "Never pad: flushed groups go to the FTL as they are.", &[]),
        build: |_| Ok(Box::new(padding::NoPadding)),
    },
    Entry {
        info: c(
            "padding",
            "fixed",
            "Pad a flushed group (read its missing pages, write the whole block) when it holds at least \
             padding_threshold of a block.",
            &["buffer.padding_threshold", "buffer.padding_fill"],
        ),
        build: |cfg| Ok(Box::new(padding::FixedPadding { threshold: cfg.buffer.padding_threshold })),
    },
    Entry {
        info: c(
            "padding",
            "model",
            "Seed 000's Padding Model: pad a group holding at least B_w pages, B_w computed at every flush from the FTL's running r_db, r_lb, u_lb and nand.erase_us / program_us; until the FTL reports them, 1.00 of a block (BAST, page and other FTLs: no padding) or 0.33 (FAST).",
            &["nand.erase_us", "nand.program_us", "ftl.kind", "ftl.model_stats", "buffer.padding_fill"],
        ),
        build: |cfg| {
            Ok(Box::new(padding::ModelPadding {
                erase_us: cfg.nand.erase_us,
                program_us: cfg.nand.program_us,
                initial: padding::ModelPadding::initial_for(&cfg.ftl.kind),
            }))
        },
    },
];

pub static WORKLOADS: &[Component] = &[
    c("workload", "trace", "Replay a block I/O trace file (see `ssdlab trace info`).",
      &["workload.path", "workload.format", "workload.device", "workload.address_map", "workload.skip_invalid", "workload.blkparse_action", "workload.generic"]),
    c("workload", "uniform", "Uniformly random requests over the footprint.",
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.read_fraction", "workload.seed"]),
    c("workload", "zipf", "Zipf(θ)-distributed requests over the footprint (hot addresses scattered).",
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.seed"]),
    c("workload", "sequential", "Interleaved sequential streams over the footprint, wrapping around.",
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.streams", "workload.read_fraction", "workload.seed"]),
    c("workload", "fio", "fio-like job: rw = write, randwrite or randrw; bs, footprint, Zipf θ (0 = uniform), read share, streams.",
      &["workload.rw", "workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.streams", "workload.seed"]),
    c("workload", "desktop", "Desktop profile calibrated to seed 000 Table 4: file bursts at an allocation cursor, sequential rewrites, clustered updates of Zipf-hot regions, very hot metadata sectors (docs/workloads.md).",
      &["workload.requests", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.desktop_written_fraction", "workload.desktop_first_write_fraction", "workload.desktop_cluster_pages", "workload.desktop_hot_sectors", "workload.desktop_hot_write_fraction", "workload.desktop_hot_zipf_theta", "workload.seed"]),
];

/// Every registered component, in category order.
pub fn components() -> Vec<Component> {
    let mut v: Vec<Component> = WORKLOADS.to_vec();
    v.extend(FTLS.iter().map(|e| e.info));
    v.extend(GC_POLICIES.iter().copied());
    v.extend(BUFFERS.iter().map(|e| e.info));
    v.extend(PADDINGS.iter().map(|e| e.info));
    v
}

pub fn names(category: &str) -> Vec<&'static str> {
    components()
        .into_iter()
        .filter(|c| c.category == category)
        .map(|c| c.name)
        .collect()
}

/// Error naming `field` and listing the valid names unless `name` is registered in `category`.
pub fn check_name(category: &str, field: &str, name: &str) -> Result<()> {
    let valid = names(category);
    if valid.contains(&name) {
        Ok(())
    } else {
        Err(SimError::config(
            field,
            format!("unknown {category} `{name}`; valid: {}", valid.join(", ")),
        ))
    }
}

fn find<'a, C>(
    table: &'a [Entry<C>],
    category: &str,
    field: &str,
    name: &str,
) -> Result<&'a Entry<C>> {
    check_name(category, field, name)?;
    table
        .iter()
        .find(|e| e.info.name == name)
        .ok_or_else(|| SimError::config(field, format!("`{name}` has no constructor")))
}

pub fn build_buffer(cfg: &Config, p: BufferParams) -> Result<Box<dyn WriteBuffer>> {
    (find(BUFFERS, "buffer", "buffer.kind", &cfg.buffer.kind)?.build)(cfg, p)
}

fn find_ftl(cfg: &Config) -> Result<&'static FtlEntry> {
    check_name("ftl", "ftl.kind", &cfg.ftl.kind)?;
    FTLS.iter()
        .find(|e| e.info.name == cfg.ftl.kind)
        .ok_or_else(|| {
            SimError::config("ftl.kind", format!("`{}` has no constructor", cfg.ftl.kind))
        })
}

pub fn build_ftl(cfg: &Config, geo: &Geometry) -> Result<Box<dyn Ftl>> {
    (find_ftl(cfg)?.build)(cfg, geo)
}

/// Physical blocks the configured FTL needs beyond `logical_blocks` logical blocks.
pub fn ftl_spare_blocks(cfg: &Config, logical_blocks: u64) -> Result<u64> {
    Ok((find_ftl(cfg)?.spare_blocks)(cfg, logical_blocks))
}

/// Fill in the FTL's automatic settings (see [`FtlEntry::resolve`]).
pub fn resolve_ftl(cfg: &mut Config, logical_blocks: u64) -> Result<()> {
    let resolve = find_ftl(cfg)?.resolve;
    resolve(cfg, logical_blocks);
    Ok(())
}

pub fn build_padding(cfg: &Config) -> Result<Box<dyn Padding>> {
    (find(PADDINGS, "padding", "buffer.padding", resolved_padding(cfg))?.build)(cfg)
}
