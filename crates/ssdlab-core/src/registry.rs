//! The one list of components. Each entry names a component, says what it is, names its
//! parameter type (declared in the component's own file; its table is `[<category>.<name>]`),
//! lists the shared section keys it reads, and holds its constructor. Config validation, the
//! resolved configuration of every result, the CLI choices, `ssdlab policies` and
//! docs/components.md all come from here: a new component is its file plus one entry below.

use crate::buffer::{self, BufferParams, WriteBuffer};
use crate::config::{Config, FtlConfig};
use crate::error::{nearest, suggestion, Result, SimError};
use crate::ftl::{self, Ftl};
use crate::gc::VictimPolicy;
use crate::padding::{self, Padding};
use crate::params::{self, spec, ParamInfo, ParamSpec, Tables, NONE};
use crate::placement::{self, Classifier, PlacementInput};
use crate::synth::{DesktopParams, FioParams};
use crate::timed::scheduler::{self, Scheduler};
use crate::units::Geometry;

#[derive(Clone, Copy, Debug)]
pub struct Component {
    /// workload | ftl | gc | buffer | padding | scheduler | placement
    pub category: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// The component's own parameters, in `[<category>.<name>]`.
    pub params: ParamSpec,
    /// Shared section keys it reads (defaults come from `Config::default()`).
    pub reads: &'static [&'static str],
}

impl Component {
    /// Dotted name of the component's parameter table, e.g. `buffer.hitstat`.
    pub fn table(&self) -> String {
        format!("{}.{}", self.category, self.name)
    }

    /// Its own parameters with dotted keys (`buffer.hitstat.hit_log`), defaults and docs.
    pub fn own_params(&self) -> Vec<ParamInfo> {
        (self.params.fields)()
    }
}

pub type BufferCtor = fn(&Config, BufferParams) -> Result<Box<dyn WriteBuffer>>;
/// An FTL from the config, the geometry and the placement classifier (FTLs without several
/// frontiers take `none` only; validation says so).
pub type FtlCtor = fn(&Config, &Geometry, Box<dyn Classifier>) -> Result<Box<dyn Ftl>>;
pub type PlacementCtor = fn(&Config, PlacementInput) -> Result<Box<dyn Classifier>>;
pub type PaddingCtor = fn(&Config) -> Result<Box<dyn Padding>>;
pub type SchedulerCtor = fn(&Config) -> Result<Box<dyn Scheduler>>;

pub struct Entry<C> {
    pub info: Component,
    pub build: C,
}

const fn c(
    category: &'static str,
    name: &'static str,
    summary: &'static str,
    params: ParamSpec,
    reads: &'static [&'static str],
) -> Component {
    Component {
        category,
        name,
        summary,
        params,
        reads,
    }
}

const BUFFER_KEYS: &[&str] = &["buffer.bytes", "buffer.fraction"];
const GROUP_KEYS: &[&str] = &[
    "buffer.bytes",
    "buffer.fraction",
    "buffer.padding",
    "buffer.padding_fill",
];

pub static BUFFERS: &[Entry<BufferCtor>] = &[
    Entry {
        info: c("buffer", "none", "No write buffer: every page write goes straight to the FTL.", NONE, &[]),
        build: |_, p| Ok(Box::new(buffer::none::NoBuffer::new(p.pages_per_block))),
    },
    Entry {
        info: c(
            "buffer",
            "lru",
            "Page-level LRU; write hits move to MRU, the LRU page is flushed alone.",
            NONE,
            BUFFER_KEYS,
        ),
        build: |_, p| Ok(Box::new(buffer::lru::LruBuffer::new(p.capacity_pages, p.pages_per_block))),
    },
    Entry {
        info: c(
            "buffer",
            "block-lru",
            "Pages grouped by LBN, LRU over groups; the victim group is flushed whole in ascending offset.",
            NONE,
            GROUP_KEYS,
        ),
        build: |_, p| Ok(Box::new(buffer::block_lru::BlockLruBuffer::new(p))),
    },
    Entry {
        info: c(
            "buffer",
            "fab",
            "FAB (seed 000 Table 2): pages grouped by LBN; victim = the group holding the most sectors (`weight`; ties: least recently written), flushed whole. Reads are not cached. Default padding: none.",
            spec::<buffer::fab::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::fab::Params = params::of(&cfg.buffer.tables, "buffer", "fab")?;
            let by_sectors = buffer::fab::by_sectors(&q.weight, "buffer.fab")?;
            Ok(Box::new(buffer::fab::FabBuffer::new(p, by_sectors)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "bplru",
            "BPLRU: block-level LRU; victim = a full group first, else the LRU group; LRU compensation moves sequentially filled groups to the LRU end. Default padding: fixed at 0.5 of a block.",
            spec::<buffer::bplru::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::bplru::Params = params::of(&cfg.buffer.tables, "buffer", "bplru")?;
            let comp = buffer::bplru::Compensation::from_name(&q.compensation, "buffer.bplru")?;
            Ok(Box::new(buffer::bplru::BplruBuffer::new(p, comp)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "clc",
            "CLC (seed 002): clusters of an LBN's pages; writes move a cluster to an LRU list holding `hot_fraction` of the buffer, whose overflow goes to a cold list ordered by size; victim = the largest cold cluster (ties: least recently written), else the LRU cluster, flushed whole. Default padding: none.",
            spec::<buffer::clc::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::clc::Params = params::of(&cfg.buffer.tables, "buffer", "clc")?;
            Ok(Box::new(buffer::clc::ClcBuffer::new(p, q.hot_fraction)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "integrated",
            "Seed 002's three criteria: CLC's hot LRU and size-ordered cold cluster lists; the victim is the best of CLC's \
             (the largest cold cluster) and the oldest `candidates` cold clusters whose LBN has a log record, scored \
             (1 − h)·S_c/N_p + h·u (u = the utilisation the flush brings the LBN's log block to, 0 on a log-block miss; \
             h = the observed log-block hit ratio of recent flushes), so it is CLC with few log blocks and favours live log \
             blocks, fullest first, with many. Default padding: reref.",
            spec::<buffer::integrated::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::integrated::Params = params::of(&cfg.buffer.tables, "buffer", "integrated")?;
            Ok(Box::new(buffer::integrated::buffer(p, &q)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "ref",
            "REF (seed 002): page-level LRU; the victim is an LBN with pages in the window at the LRU end, preferring those in the recently-evicted block list (K = the FTL's log blocks), else the one with the most window pages (ties: the least recently written page); its window pages (or all its pages: `evict_scope`) are flushed as one unit. Default padding: none.",
            spec::<buffer::r#ref::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::r#ref::Params = params::of(&cfg.buffer.tables, "buffer", "ref")?;
            let rp = buffer::r#ref::RefParams::new(&q, p.capacity_pages, logical_blocks(cfg, p.pages_per_block))?;
            Ok(Box::new(buffer::r#ref::RefBuffer::new(p, rp)))
        },
    },
    Entry {
        info: c(
            "buffer",
            "bpac",
            "BPAC (seed 003's PIRD/BIRD flow): new pages join their LBN's cluster in the block region; a rewrite within T_PIRD promotes the page to the page-level LRU region (target size adapted by ghost lists), whose overflow is demoted back; victim = the largest cluster idle beyond T_BIRD, else the LRU cluster, flushed whole. PIRD, BIRD and idle ages count distinct pages written in between (seed 003's re-use distance). Default padding: none.",
            spec::<buffer::bpac::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::bpac::Params = params::of(&cfg.buffer.tables, "buffer", "bpac")?;
            let bp = buffer::bpac::BpacParams::new(&q, p.capacity_pages, "buffer.bpac")?;
            Ok(Box::new(buffer::bpac::BpacBuffer::new(p, bp)))
        },
    },
    // Its tests are also the one-file proof: a component is its file plus this entry.
    Entry {
        info: c("buffer", "fifo", "Page FIFO: a full buffer flushes its batch_pages oldest pages, or every page (batch_pages = 0: \
                 a buffer that fills, then flushes as a whole over the parallel units, as on seed 004's platform).",
                spec::<buffer::fifo::Params>(), BUFFER_KEYS),
        build: |cfg, p| Ok(Box::new(buffer::fifo::Fifo::new(p.capacity_pages, p.pages_per_block, params::of(&cfg.buffer.tables, "buffer", "fifo")?))),
    },
    Entry {
        info: c(
            "buffer",
            "hitstat",
            "HitStat (seed 000): victim = a full group, else a group older than the age threshold, else the smallest AgeRank/weight among the oldest group of each of 18 weight classes; AgeRank from the hit log, levels adapted to minimise group misses. Default padding: model.",
            spec::<buffer::hitstat::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| Ok(Box::new(buffer::hitstat::HitStatBuffer::new(p, hitstat_params(cfg, "hitstat")?))),
    },
    Entry {
        info: c(
            "buffer",
            "hitstat-adj",
            "HitStat(adj): HitStat with weights below the current padding threshold counted as the threshold (small cold groups leave earlier; the thesis's choice on FAST). Default padding: model.",
            spec::<buffer::hitstat::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| Ok(Box::new(buffer::hitstat::HitStatBuffer::new(p, hitstat_params(cfg, "hitstat-adj")?))),
    },
    Entry {
        info: c(
            "buffer",
            "cflru",
            "CFLRU: one page-level LRU list of dirty pages and (with `cache_reads`) clean pages inserted on read misses; hits move to MRU; victim = the clean page nearest the LRU end among the last `window` × capacity pages (dropped, no write), else the LRU page (flushed alone).",
            spec::<buffer::cflru::Params>(),
            BUFFER_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::cflru::Params = params::of(&cfg.buffer.tables, "buffer", "cflru")?;
            Ok(Box::new(buffer::cflru::new(p.capacity_pages, p.pages_per_block, full_mask(cfg), &q)?))
        },
    },
    Entry {
        info: c(
            "buffer",
            "lru-wsr",
            "LRU-WSR: one page-level LRU list of dirty pages and (with `cache_reads`) clean pages inserted on read misses; a hit clears the page's cold flag and moves it to MRU; at the LRU end a clean page is dropped, a cold dirty page flushed alone, a dirty page not cold marked cold and moved to MRU (second chance).",
            spec::<buffer::lru_wsr::Params>(),
            BUFFER_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::lru_wsr::Params = params::of(&cfg.buffer.tables, "buffer", "lru-wsr")?;
            Ok(Box::new(buffer::lru_wsr::new(p.capacity_pages, p.pages_per_block, full_mask(cfg), &q)?))
        },
    },
    Entry {
        info: c(
            "buffer",
            "hwb",
            "HWB (seed 003): hot and warm regions of pages, a cold region of LBN blocks, sizes starting equal. A page's temperature \
             α·F_self/F_avg + (1−α)·D_avg/D_predict (D_predict = 2λ·D_last + β; metadata kept with buffered pages and in a ghost \
             buffer) decides the five insertion cases: new pages and ghost hits go to cold (a ghost hit to warm if hotter than the \
             warm tail), cold hits to warm and warm hits to hot if hotter than that region's tail, hot hits to the hot head. Room is made \
             only when a write finds the buffer full (evict_when; region sizes are targets): a full \
             hot region demotes its tail to warm (if hotter than the warm tail) or to its cold block, a full warm region its tail to \
             its cold block; a full cold region flushes its tail block whole in ascending offset (active eviction: also while its ED = Pt + \
             predicted distance < now). Hot and warm pages leave only through the cold region. A region pair's promotions or demotions above \
             resize_threshold move a page of size. Reads are not cached. Default padding: none.",
            spec::<buffer::hwb::Params>(),
            GROUP_KEYS,
        ),
        build: |cfg, p| {
            let q: buffer::hwb::Params = params::of(&cfg.buffer.tables, "buffer", "hwb")?;
            Ok(Box::new(buffer::hwb::HwbBuffer::new(p, &q)?))
        },
    },
];

/// Every sector of a page (clean pages are whole).
fn full_mask(cfg: &Config) -> crate::units::SectorMask {
    crate::units::full_mask(cfg.device.page_bytes.0 / crate::units::SECTOR_BYTES)
}

/// Logical blocks of the (resolved) device.
fn logical_blocks(cfg: &Config, pages_per_block: u64) -> u64 {
    match cfg.device.logical_bytes {
        crate::config::Capacity::Bytes(b) => b
            .div_ceil(cfg.device.page_bytes.0.max(1))
            .div_ceil(pages_per_block.max(1)),
        crate::config::Capacity::Auto => 0,
    }
}

fn hitstat_params(cfg: &Config, name: &str) -> Result<buffer::hitstat::HitStatParams> {
    let q: buffer::hitstat::Params = params::of(&cfg.buffer.tables, "buffer", name)?;
    Ok(buffer::hitstat::HitStatParams {
        sectors_per_page: (cfg.device.page_bytes.0 / crate::units::SECTOR_BYTES) as u32,
        hit_log: q.hit_log as usize,
        levels: q.initial_levels,
        period: q.period,
        age_threshold: q.age_threshold,
        adj: name == "hitstat-adj",
    })
}

/// The padding policy `buffer.padding = "auto"` stands for, per buffer kind: none for
/// none/lru/block-lru/fab/cflru/lru-wsr/clc/ref/bpac/hwb, fixed (at `buffer.padding_threshold`, default 0.5) for bplru, model
/// for hitstat and hitstat-adj, reref for integrated.
pub fn default_padding(buffer_kind: &str) -> &'static str {
    match buffer_kind {
        "bplru" => "fixed",
        "hitstat" | "hitstat-adj" => "model",
        "integrated" => "reref",
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
pub type SpareFn = fn(&Config, u64) -> Result<u64>;

/// The over-provisioning ρ used and the physical blocks for a device of the given logical
/// blocks; what was accepted but probably not meant goes into the warnings.
pub type ProvisionFn = fn(&Config, u64, &mut Vec<String>) -> Result<(f64, u64)>;

/// ⌈logical blocks · (1 + ρ)⌉ physical blocks at `device.op` (unset: its default).
fn op_provision(cfg: &Config, logical_blocks: u64, _: &mut Vec<String>) -> Result<(f64, u64)> {
    let op = cfg.device.op();
    Ok((op, crate::units::physical_blocks(logical_blocks, op)))
}

pub struct FtlEntry {
    pub info: Component,
    pub build: FtlCtor,
    pub spare_blocks: SpareFn,
    /// The device's physical blocks: [`op_provision`], or the FTL's own rule.
    pub provision: ProvisionFn,
    /// Replace the FTL's automatic (0) settings by the values it will use, for a device of the
    /// given logical blocks, so that a result's configuration says exactly what produced it.
    pub resolve: ResolveFn,
}

pub type ResolveFn = fn(&mut Config, u64) -> Result<()>;

fn page_params(cfg: &Config) -> Result<ftl::page::Params> {
    params::of(&cfg.ftl.tables, "ftl", "page")
}

fn dftl_params(cfg: &Config) -> Result<ftl::dftl::Params> {
    params::of(&cfg.ftl.tables, "ftl", "dftl")
}

fn lines_params(cfg: &Config) -> Result<ftl::lines::Params> {
    params::of(&cfg.ftl.tables, "ftl", "lines")
}

/// Classes the line FTL's placement writes to.
pub fn lines_classes(cfg: &Config) -> Result<u32> {
    let p = lines_params(cfg)?;
    Ok((lines_open(cfg, &p)? - p.gc_line as u64) as u32)
}

/// The page FTL's host streams (automatic class counts of placement under it).
pub fn page_streams(cfg: &Config) -> Result<u32> {
    Ok(page_params(cfg)?.streams)
}

/// Blocks a line spans: `ftl.lines.luns`, or the device's LUNs.
fn lines_luns(cfg: &Config, p: &ftl::lines::Params) -> u32 {
    if p.luns > 0 {
        p.luns
    } else {
        (cfg.device.channels * cfg.device.chips_per_channel * cfg.device.dies_per_chip).max(1)
    }
}

/// Open lines of the line FTL: the placement's classes, plus the GC line.
fn lines_open(cfg: &Config, p: &ftl::lines::Params) -> Result<u64> {
    let classes = placement_classes(cfg, p.open_lines)?;
    if classes == 0 || classes > 64 {
        return Err(SimError::config(
            "placement.kind",
            format!(
                "`{}` writes to {classes} classes; the line FTL keeps 1..=64 open lines",
                cfg.placement.kind
            ),
        ));
    }
    if p.open_lines != ftl::lines::Params::default().open_lines && p.open_lines != classes {
        return Err(SimError::config(
            "ftl.lines.open_lines",
            format!(
                "{} open lines, but placement `{}` writes to {classes} classes: leave it out or set it to {classes}",
                p.open_lines, cfg.placement.kind
            ),
        ));
    }
    Ok(classes as u64 + p.gc_line as u64)
}

/// The page FTL's parameters as placement changes them: a frontier per class (streams = its
/// classes, given `streams` for automatic counts) and GC copies where it says (no GC frontier).
fn placed_page_params(cfg: &Config) -> Result<ftl::page::Params> {
    let mut p = page_params(cfg)?;
    if cfg.placement.kind != "none" {
        p.streams = placement_classes(cfg, p.streams)?;
        p.separate_gc_frontier = false;
        if !(1..=64).contains(&p.streams) {
            return Err(SimError::config(
                "placement.kind",
                format!(
                    "`{}` writes to {} classes; the page FTL keeps 1..=64 frontiers",
                    cfg.placement.kind, p.streams
                ),
            ));
        }
    }
    Ok(p)
}

fn resolve_page(cfg: &mut Config, _logical_blocks: u64) -> Result<()> {
    let mut p = placed_page_params(cfg)?;
    p.gc_free_blocks = p.gc_threshold();
    cfg.ftl
        .tables
        .insert("page".into(), serde_json::to_value(p).unwrap_or_default());
    Ok(())
}

fn resolve_hybrid(cfg: &mut Config, logical_blocks: u64) -> Result<()> {
    cfg.ftl.log_blocks = ftl::hybrid::log_blocks(cfg.ftl.log_blocks, logical_blocks);
    Ok(())
}

fn hybrid_logs(cfg: &Config, geo: &Geometry) -> u64 {
    ftl::hybrid::log_blocks(cfg.ftl.log_blocks, geo.logical_blocks())
}

const HYBRID_KEYS: &[&str] = &["ftl.log_blocks", "ftl.model_stats", "ftl.log_utilisation"];

pub static FTLS: &[FtlEntry] = &[
    FtlEntry {
        info: c(
            "ftl",
            "page",
            "Page-mapped FTL: L2P/P2L, write frontiers per stream, GC by free-block threshold, trim. With a placement other \
             than none, one frontier per placement class (streams and separate_gc_frontier are resolved to it) and GC \
             copies where the placement says.",
            spec::<ftl::page::Params>(),
            &["ftl.gc", "placement.kind"],
        ),
        build: |cfg, geo, classifier| {
            let p = page_params(cfg)?;
            let f = ftl::page::PageFtl::new(
                geo,
                VictimPolicy::from_name(&cfg.ftl.gc)?,
                p.gc_free_blocks,
                p.streams,
                p.separate_gc_frontier,
                cfg.run.check_integrity,
            )?;
            Ok(Box::new(if cfg.placement.kind == "none" { f } else { f.with_placement(classifier)? }))
        },
        spare_blocks: |cfg, _| Ok(placed_page_params(cfg)?.spare_blocks()),
        provision: op_provision,
        resolve: resolve_page,
    },
    FtlEntry {
        info: c(
            "ftl",
            "dftl",
            "DFTL (demand-based): a page-mapped FTL whose map lives in translation pages on flash (a pool and frontier of \
             their own, located by a global translation directory); a cached mapping table of bounded size (entries or \
             whole translation pages, LRU) decides the map's cost: a miss reads a translation page, a dirty eviction \
             writes its page back with every dirty cached entry of it (batch update); GC updates cached entries lazily \
             and the others once per translation page. Map reads and programs have cause `map`.",
            spec::<ftl::dftl::Params>(),
            &["ftl.gc"],
        ),
        build: |cfg, geo, _| {
            let p = dftl_params(cfg)?;
            Ok(Box::new(ftl::dftl::DftlFtl::new(
                geo,
                VictimPolicy::from_name(&cfg.ftl.gc)?,
                &p,
                (cfg.nand.read_us, cfg.nand.program_us),
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: |cfg, logical_blocks| {
            let ppb = cfg.device.pages_per_block;
            dftl_params(cfg)?.spare_blocks(logical_blocks * ppb, cfg.device.page_bytes.0, ppb)
        },
        provision: op_provision,
        resolve: |_, _| Ok(()),
    },
    FtlEntry {
        info: c(
            "ftl",
            "lines",
            "Line-based FTL after LightNVM pblk (seed 001): a line is an FTL block spanning the LUNs (page p on LUN p mod LUNs), \
             host pages enter a ring write buffer carrying their placement tag and are programmed in batches of batch_pages by \
             the write thread, one open line per placement class (placement none = pblk's single line shared with GC) plus an \
             optional GC line; GC paced by pblk's rate limiter over a ring sized as pblk sizes it (or burst below \
             gc_free_lines free lines, or the SepBIT artifact's garbage-fraction trigger), its copies through the ring a GC \
             request at a time as pblk's pblk_write_gc_to_cache (or straight to their line), victim by pblk's lists (fewest \
             valid of the first non-empty list: < ¼, < ½, < full valid) or greedy / cost-benefit / FIFO; paced as pblk, the \
             device is over-provisioned by pblk's rule (device.op unset: pblk's default 11%, at least its reserve; given: \
             refused below ⌈100 / OP%⌉ lines). One erase = one line.",
            spec::<ftl::lines::Params>(),
            &["placement.kind"],
        ),
        build: |cfg, geo, classifier| {
            let mut p = lines_params(cfg)?;
            p.luns = lines_luns(cfg, &p);
            Ok(Box::new(ftl::lines::LinesFtl::new(geo, &p, classifier, cfg.run.check_integrity)?))
        },
        spare_blocks: |cfg, _| {
            let p = lines_params(cfg)?;
            Ok(p.spare_lines(lines_open(cfg, &p)?))
        },
        // Paced as pblk: pblk's over-provisioning rule (pblk_set_provision).
        provision: |cfg, logical_blocks, warnings| {
            if lines_params(cfg)?.gc == "pblk" {
                ftl::lines::provision(cfg.device.op, logical_blocks, warnings)
            } else {
                op_provision(cfg, logical_blocks, warnings)
            }
        },
        resolve: |cfg, _| {
            let mut p = lines_params(cfg)?;
            let open = lines_open(cfg, &p)?;
            p.gc_free_lines = p.gc_threshold(open);
            p.open_lines = open as u32 - p.gc_line as u32;
            // size-ema's `gc = "ring"` sends GC copies through the ring whatever gc_write says.
            let kind = cfg.placement.kind.clone();
            let forced = kind.starts_with("size-ema") && size_ema(cfg, &kind)?.gc == "ring";
            p.gc_write = if forced || p.gc_through_ring() { "ring" } else { "direct" }.into();
            p.luns = lines_luns(cfg, &p);
            cfg.ftl.tables.insert("lines".into(), serde_json::to_value(p).unwrap_or_default());
            Ok(())
        },
    },
    FtlEntry {
        info: c(
            "ftl",
            "block",
            "Block-mapped FTL: pages at fixed offsets; a flush unit overwriting any page rewrites its block once.",
            NONE,
            &[],
        ),
        build: |cfg, geo, _| Ok(Box::new(ftl::block::BlockFtl::new(geo, cfg.run.check_integrity)?)),
        spare_blocks: |_, _| Ok(ftl::block::spare_blocks()),
        provision: op_provision,
        resolve: |_, _| Ok(()),
    },
    FtlEntry {
        info: c(
            "ftl",
            "bast",
            "BAST: per-LBN log blocks (chain variant: chains merged beyond a limit, victim = longest of the \
             next look-ahead chains; single: one log block per LBN, LRU victim); switch/partial/full merges.",
            spec::<ftl::bast::Params>(),
            HYBRID_KEYS,
        ),
        build: |cfg, geo, _| {
            let p: ftl::bast::Params = params::of(&cfg.ftl.tables, "ftl", "bast")?;
            Ok(Box::new(ftl::bast::BastFtl::new(
                geo,
                hybrid_logs(cfg, geo),
                &p,
                ftl::hybrid::ModelStats::parse(&cfg.ftl.model_stats)?,
                ftl::log_stats::Utilisation::parse(&cfg.ftl.log_utilisation)?,
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: |cfg, lb| {
            Ok(ftl::bast::spare_blocks(ftl::hybrid::log_blocks(cfg.ftl.log_blocks, lb)))
        },
        provision: op_provision,
        resolve: resolve_hybrid,
    },
    FtlEntry {
        info: c(
            "ftl",
            "fast",
            "FAST: one sequential (SW) log block + fully associative RW log blocks in FIFO order; the \
             oldest RW log block is reclaimed by full-merging every LBN with a valid page in it.",
            NONE,
            HYBRID_KEYS,
        ),
        build: |cfg, geo, _| {
            Ok(Box::new(ftl::fast::FastFtl::new(
                geo,
                hybrid_logs(cfg, geo),
                ftl::hybrid::ModelStats::parse(&cfg.ftl.model_stats)?,
                ftl::log_stats::Utilisation::parse(&cfg.ftl.log_utilisation)?,
                cfg.run.check_integrity,
            )?))
        },
        spare_blocks: |cfg, lb| {
            Ok(ftl::fast::spare_blocks(ftl::hybrid::log_blocks(cfg.ftl.log_blocks, lb)))
        },
        provision: op_provision,
        resolve: resolve_hybrid,
    },
];

pub struct PlacementEntry {
    pub info: Component,
    pub build: PlacementCtor,
    /// The classes it writes to, given the FTL's open lines `k` (for automatic class counts).
    pub classes: fn(&Config, u32) -> Result<u32>,
}

fn size_ema(cfg: &Config, name: &str) -> Result<placement::size_ema::Params> {
    params::of(&cfg.placement.tables, "placement", name)
}

pub static PLACEMENTS: &[PlacementEntry] = &[
    PlacementEntry {
        info: c(
            "placement",
            "none",
            "No separation: one frontier for host and GC data (the line FTL: pblk's single open line; the page FTL keeps \
             its own streams and GC frontier).",
            NONE,
            &[],
        ),
        build: |_, _| Ok(Box::new(placement::none::NoSeparation)),
        classes: |_, _| Ok(1),
    },
    PlacementEntry {
        info: c(
            "placement",
            "size-ema-batch",
            "Seed 001 as implemented: a write request's size against an EMA of request sizes (weight 0.0001) gives its class \
             (≤ 0.5·mean → 0 hottest, ≤ mean → 1, ≤ 1.5·mean → 2, else 3), carried by its pages' ring entries; the write \
             thread writes each batch to the line of its entries' average class. GC copies carry the coldest class or their \
             source line's; the line FTL paced as pblk puts them in its ring as pblk's pblk_write_gc_to_cache, where they \
             count in a batch's average with the host entries (ring: the coldest class, through the ring under any pacing).",
            spec::<placement::size_ema::Params>(),
            &[],
        ),
        build: |cfg, _| Ok(Box::new(placement::size_ema::SizeEma::new(&size_ema(cfg, "size-ema-batch")?, true))),
        classes: |cfg, _| Ok(size_ema(cfg, "size-ema-batch")?.bounds.len() as u32 + 1),
    },
    PlacementEntry {
        info: c(
            "placement",
            "size-ema-entry",
            "Seed 001's future work: the size classes of size-ema-batch, but every page goes to its own class's line.",
            spec::<placement::size_ema::Params>(),
            &[],
        ),
        build: |cfg, _| Ok(Box::new(placement::size_ema::SizeEma::new(&size_ema(cfg, "size-ema-entry")?, false))),
        classes: |cfg, _| Ok(size_ema(cfg, "size-ema-entry")?.bounds.len() as u32 + 1),
    },
    PlacementEntry {
        info: c(
            "placement",
            "sep-gc",
            "Host writes to line 0, GC copies to line 1 (SepGC; a double write frontier).",
            NONE,
            &[],
        ),
        build: |_, _| Ok(Box::new(placement::sep_gc::SepGc)),
        classes: |_, _| Ok(2),
    },
    PlacementEntry {
        info: c(
            "placement",
            "dac",
            "DAC (Chiang, Lee & Chang 1999, as the SepBIT artifact runs it): each LPN's level is its line — a first write puts \
             it at level 0, each host rewrite one level up (capped at classes − 1), each GC copy one level down (floor 0).",
            spec::<placement::dac::Params>(),
            &[],
        ),
        build: |cfg, input| {
            let p: placement::dac::Params = params::of(&cfg.placement.tables, "placement", "dac")?;
            Ok(Box::new(placement::dac::Dac::new(&p, input.logical_pages)))
        },
        classes: |cfg, _| Ok(params::of::<placement::dac::Params>(&cfg.placement.tables, "placement", "dac")?.classes),
    },
    PlacementEntry {
        info: c(
            "placement",
            "warcip",
            "WARCIP (Yang, Pei & Yang 2019, as the SepBIT artifact runs it): host writes go to the user cluster whose centre \
             (a running mean) is nearest their rewrite interval (now − last write + GC penalty, in host page writes); clusters \
             split and merge every `period` sealed user lines. Every GC copy goes to line 0 and sets the page's penalty.",
            spec::<placement::warcip::Params>(),
            &[],
        ),
        build: |cfg, input| {
            let p: placement::warcip::Params = params::of(&cfg.placement.tables, "placement", "warcip")?;
            Ok(Box::new(placement::warcip::Warcip::new(&p, input.logical_pages)))
        },
        classes: |cfg, _| Ok(params::of::<placement::warcip::Params>(&cfg.placement.tables, "placement", "warcip")?.classes),
    },
    PlacementEntry {
        info: c(
            "placement",
            "sepbit",
            "SepBIT (Wang et al., FAST'22, as its artifact runs it): a host rewrite whose previous copy lived less than ℓ (the \
             mean lifespan of the last 16 collected class-0 lines, +∞ at first; with the artifact's FIFO window) goes to line \
             0, other host writes to line 1; GC copies out of line 0 go to 2, others to 3, 4 or 5 by age against 4ℓ and 16ℓ. \
             Six lines.",
            spec::<placement::sepbit::Params>(),
            &[],
        ),
        build: |cfg, input| {
            let p: placement::sepbit::Params = params::of(&cfg.placement.tables, "placement", "sepbit")?;
            Ok(Box::new(placement::sepbit::SepBit::new(&p, input.logical_pages)))
        },
        classes: |_, _| Ok(6),
    },
    PlacementEntry {
        info: c(
            "placement",
            "oracle",
            "Future knowledge, the lower bound: a pre-pass over the workload gives each host page write the time of its LPN's \
             next write; host writes and GC copies go by remaining lifetime (host page writes) against bounds doubling up to \
             the device's logical pages (or one line per class, SepBIT's FK); never-overwritten data to the last line.",
            spec::<placement::oracle::Params>(),
            &[],
        ),
        build: |cfg, input| {
            let p: placement::oracle::Params = params::of(&cfg.placement.tables, "placement", "oracle")?;
            let future = input.future.ok_or_else(|| SimError::Invalid("placement oracle built without its pre-pass".into()))?;
            let classes = p.classes_for(input.classes)?;
            Ok(Box::new(placement::oracle::Oracle::new(&p, classes, input.logical_pages, input.line_pages, future)))
        },
        classes: |cfg, k| {
            let p: placement::oracle::Params = params::of(&cfg.placement.tables, "placement", "oracle")?;
            p.classes_for(k)
        },
    },
];

fn find_placement(cfg: &Config) -> Result<&'static PlacementEntry> {
    check_name("placement", "placement.kind", &cfg.placement.kind)?;
    PLACEMENTS
        .iter()
        .find(|e| e.info.name == cfg.placement.kind)
        .ok_or_else(|| {
            SimError::config(
                "placement.kind",
                format!("`{}` has no constructor", cfg.placement.kind),
            )
        })
}

/// The classes placement writes to, given the FTL's open lines (or streams) `k`.
pub fn placement_classes(cfg: &Config, k: u32) -> Result<u32> {
    (find_placement(cfg)?.classes)(cfg, k)
}

/// The configured placement classifier.
pub fn build_placement(cfg: &Config, input: PlacementInput) -> Result<Box<dyn Classifier>> {
    (find_placement(cfg)?.build)(cfg, input)
}

pub static GC_POLICIES: &[Component] = &[
    c(
        "gc",
        "greedy",
        "Victim = sealed block with the fewest valid pages.",
        NONE,
        &[],
    ),
    c(
        "gc",
        "cost-benefit",
        "Victim maximises (1−u)·age/(1+u); age = host page writes since sealing.",
        NONE,
        &[],
    ),
    c("gc", "fifo", "Victim = oldest sealed block.", NONE, &[]),
];

pub static PADDINGS: &[Entry<PaddingCtor>] = &[
    Entry {
        info: c("padding", "none", "Never pad: flushed groups go to the FTL as they are.", NONE, &[]),
        build: |_| Ok(Box::new(padding::NoPadding)),
    },
    Entry {
        info: c(
            "padding",
            "fixed",
            "Pad a flushed group (read its missing pages, write the whole block) when it holds at least \
             `threshold` of a block.",
            spec::<padding::FixedParams>(),
            &["buffer.padding_fill"],
        ),
        build: |cfg| {
            let p: padding::FixedParams = params::of(&cfg.padding, "padding", "fixed")?;
            Ok(Box::new(padding::FixedPadding { threshold: p.threshold }))
        },
    },
    Entry {
        info: c(
            "padding",
            "model",
            "Seed 000's Padding Model: pad a group holding at least B_w pages, B_w computed at every flush from the FTL's running r_db, r_lb, u_lb and nand.erase_us / program_us; until the FTL reports them, 1.00 of a block (BAST, page and other FTLs: no padding) or 0.33 (FAST).",
            NONE,
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
    Entry {
        info: c(
            "padding",
            "reref",
            "Seed 002's second criterion: pad a partial group whose flush misses the log (its LBN has no log record) when a \
             per-LBN 2-bit counter predicts its log block would not be re-referenced; counters learn at each LBN's next flush \
             (did it hit the record, or, for a padded flush, come within `horizon` log-block allocations); LBNs without history \
             follow the global re-reference rate. Never pads on FTLs without log blocks.",
            spec::<padding::reref::Params>(),
            &["buffer.padding_fill"],
        ),
        build: |cfg| {
            let p: padding::reref::Params = params::of(&cfg.padding, "padding", "reref")?;
            Ok(Box::new(padding::reref::ReRefPadding::new(&p)))
        },
    },
];

/// Timed mode's schedulers between the host queue and the dies (`device.scheduler`).
pub static SCHEDULERS: &[Entry<SchedulerCtor>] = &[Entry {
    info: c(
        "scheduler",
        "fifo",
        "Timed mode: every die and channel serves operations in the order they become ready (the earliest free interval that fits).",
        NONE,
        &["nand.read_us", "nand.program_us", "nand.erase_us", "nand.command_us"],
    ),
    build: |_| Ok(Box::new(scheduler::Fifo)),
}];

const SYNTH_KEYS: &[&str] = &[
    "workload.requests",
    "workload.request_bytes",
    "workload.footprint_bytes",
    "workload.read_fraction",
    "workload.seed",
];

pub static WORKLOADS: &[Component] = &[
    c("workload", "trace", "Replay a block I/O trace file (see `ssdlab trace info`).", NONE,
      &["workload.path", "workload.format", "workload.device", "workload.volumes", "workload.address_map", "workload.skip_invalid", "workload.blkparse_action", "workload.timestamp", "workload.generic"]),
    c("workload", "uniform", "Uniformly random requests over the footprint.", NONE, SYNTH_KEYS),
    c("workload", "zipf", "Zipf(θ)-distributed requests over the footprint (hot addresses scattered).", NONE,
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.seed"]),
    c("workload", "sequential", "Interleaved sequential streams over the footprint, wrapping around.", NONE,
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.streams", "workload.read_fraction", "workload.seed"]),
    c("workload", "fio", "fio jobs with fio's defaults: one (rw = write, read, rw, randwrite, randread, randrw or randwrite-then-randread; bs or bssplit; rwmixread; random_distribution; fio's random map unless norandommap; streams) or several concurrent [[workload.fio.jobs]], each with its rw, bs or bssplit, region and share of the requests (docs/workloads.md).",
      spec::<FioParams>(),
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.streams", "workload.seed"]),
    c("workload", "desktop", "Desktop profile calibrated to seed 000 Table 4: file bursts at an allocation cursor, sequential rewrites, clustered updates of Zipf-hot regions, very hot metadata sectors (docs/workloads.md).",
      spec::<DesktopParams>(),
      &["workload.requests", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.seed"]),
];

/// Every registered component, in category order.
pub fn components() -> Vec<Component> {
    let mut v: Vec<Component> = WORKLOADS.to_vec();
    v.extend(FTLS.iter().map(|e| e.info));
    v.extend(GC_POLICIES.iter().copied());
    v.extend(BUFFERS.iter().map(|e| e.info));
    v.extend(PADDINGS.iter().map(|e| e.info));
    v.extend(SCHEDULERS.iter().map(|e| e.info));
    v.extend(PLACEMENTS.iter().map(|e| e.info));
    v
}

/// Every component as JSON (for `ssdlab policies` and docs/components.md): category, name,
/// summary, its table, its own parameters (dotted key, default, doc) and the shared keys it reads.
pub fn components_json() -> serde_json::Value {
    components()
        .iter()
        .map(|c| {
            let table = c.table();
            let params: Vec<_> = c
                .own_params()
                .into_iter()
                .map(|p| serde_json::json!({"key": format!("{table}.{}", p.name), "default": p.default, "doc": p.doc}))
                .collect();
            serde_json::json!({"category": c.category, "name": c.name, "summary": c.summary,
                               "table": table, "params": params, "reads": c.reads})
        })
        .collect()
}

/// The component reference, docs/components.md (`ssdlab policies --markdown`).
pub fn markdown() -> String {
    let defaults = serde_json::to_value(Config::default()).unwrap_or_default();
    let default_of = |key: &str| {
        key.split('.')
            .try_fold(&defaults, |v, k| v.get(k))
            .map_or("null".to_string(), |v| v.to_string())
    };
    let mut out = vec![
        "# Components".to_string(),
        String::new(),
        "Generated by `ssdlab policies --markdown` from the registry; do not edit by hand. A \
         component's own parameters live in its table, `[<category>.<name>]` (e.g. \
         `[buffer.hitstat]`); giving a table for a component that is not selected is an error. \
         The shared keys are the section's own (docs/config.md)."
            .to_string(),
    ];
    let mut category = "";
    for c in components() {
        if c.category != category {
            category = c.category;
            out.push(String::new());
            out.push(format!("## {category}"));
            out.push(String::new());
            out.push(
                "| name | what it does | parameters (default) | shared keys read (default) |"
                    .into(),
            );
            out.push("|---|---|---|---|".into());
        }
        let table = c.table();
        let own: Vec<String> = c
            .own_params()
            .iter()
            .map(|p| format!("`{table}.{}` = {}: {}", p.name, p.default, p.doc))
            .collect();
        let reads: Vec<String> = c
            .reads
            .iter()
            .map(|k| format!("`{k}` ({})", default_of(k)))
            .collect();
        let cell = |v: Vec<String>| {
            if v.is_empty() {
                "—".to_string()
            } else {
                v.join("<br>")
            }
        };
        out.push(format!(
            "| `{}` | {} | {} | {} |",
            c.name,
            c.summary,
            cell(own).replace('|', "&#124;"),
            cell(reads)
        ));
    }
    out.extend(["", "## trace formats", "", "| name | layout |", "|---|---|"].map(String::from));
    for f in crate::trace::Format::all() {
        out.push(format!(
            "| `{}` | {} |",
            f.name(),
            f.layout().replace('|', "&#124;")
        ));
    }
    out.join("\n") + "\n"
}

pub fn names(category: &str) -> Vec<&'static str> {
    components()
        .into_iter()
        .filter(|c| c.category == category)
        .map(|c| c.name)
        .collect()
}

/// Error naming `field` and suggesting the nearest valid name unless `name` is registered in
/// `category`.
pub fn check_name(category: &str, field: &str, name: &str) -> Result<()> {
    let valid = names(category);
    if valid.contains(&name) {
        Ok(())
    } else {
        Err(SimError::config(
            field,
            format!("unknown {category} `{name}`; {}", suggestion(name, &valid)),
        ))
    }
}

/// Every key a configuration can hold: the sections' own (`device.op`) and every component's
/// parameters (`workload.fio.rw`).
pub fn known_keys() -> Vec<String> {
    let mut keys = Vec::new();
    if let Ok(serde_json::Value::Object(sections)) = serde_json::to_value(Config::default()) {
        for (s, v) in sections {
            if let serde_json::Value::Object(m) = v {
                keys.extend(m.keys().map(|k| format!("{s}.{k}")));
            }
        }
    }
    for c in components() {
        let table = c.table();
        keys.extend(c.own_params().iter().map(|p| format!("{table}.{}", p.name)));
    }
    keys
}

/// `e` with every unknown key whose last part is a key elsewhere pointed to that key
/// (`workload.rw` → `workload.fio.rw`), rather than to a near key of its own table.
fn suggest_elsewhere(e: SimError) -> SimError {
    match e {
        SimError::Many(v) => SimError::Many(v.into_iter().map(suggest_elsewhere).collect()),
        SimError::Config { field, msg, at } if msg.starts_with("unknown key") => {
            let last = field.rsplit('.').next().unwrap_or("");
            let elsewhere: Vec<String> = known_keys()
                .into_iter()
                .filter(|k| *k != field && k.rsplit('.').next() == Some(last))
                .map(|k| format!("`{k}`"))
                .collect();
            let msg = match elsewhere.split_last() {
                None => msg,
                Some((one, [])) => format!("unknown key; did you mean {one}?"),
                Some((last, others)) => {
                    format!("unknown key; did you mean {} or {last}?", others.join(", "))
                }
            };
            SimError::Config { field, msg, at }
        }
        e => e,
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

pub fn build_ftl(
    cfg: &Config,
    geo: &Geometry,
    placement: Box<dyn Classifier>,
) -> Result<Box<dyn Ftl>> {
    (find_ftl(cfg)?.build)(cfg, geo, placement)
}

/// Physical blocks the configured FTL needs beyond `logical_blocks` logical blocks.
pub fn ftl_spare_blocks(cfg: &Config, logical_blocks: u64) -> Result<u64> {
    (find_ftl(cfg)?.spare_blocks)(cfg, logical_blocks)
}

/// The over-provisioning ρ used and the physical blocks for `logical_blocks` logical blocks
/// (see [`FtlEntry::provision`]).
pub fn provision(
    cfg: &Config,
    logical_blocks: u64,
    warnings: &mut Vec<String>,
) -> Result<(f64, u64)> {
    (find_ftl(cfg)?.provision)(cfg, logical_blocks, warnings)
}

/// Fill in the FTL's automatic settings (see [`FtlEntry::resolve`]).
pub fn resolve_ftl(cfg: &mut Config, logical_blocks: u64) -> Result<()> {
    let resolve = find_ftl(cfg)?.resolve;
    resolve(cfg, logical_blocks)
}

pub fn build_padding(cfg: &Config) -> Result<Box<dyn Padding>> {
    (find(PADDINGS, "padding", "buffer.padding", resolved_padding(cfg))?.build)(cfg)
}

pub fn build_scheduler(cfg: &Config) -> Result<Box<dyn Scheduler>> {
    (find(
        SCHEDULERS,
        "scheduler",
        "device.scheduler",
        &cfg.device.scheduler,
    )?
    .build)(cfg)
}

/// Each category's component tables and which component is selected there.
fn selections(cfg: &Config) -> [(&'static str, &Tables, String); 7] {
    [
        ("workload", &cfg.workload.tables, cfg.workload.kind.clone()),
        ("ftl", &cfg.ftl.tables, cfg.ftl.kind.clone()),
        ("gc", &cfg.gc, cfg.ftl.gc.clone()),
        ("buffer", &cfg.buffer.tables, cfg.buffer.kind.clone()),
        ("padding", &cfg.padding, resolved_padding(cfg).to_string()),
        ("scheduler", &cfg.scheduler, cfg.device.scheduler.clone()),
        (
            "placement",
            &cfg.placement.tables,
            cfg.placement.kind.clone(),
        ),
    ]
}

fn selector(category: &str) -> &'static str {
    match category {
        "workload" => "workload.kind",
        "ftl" => "ftl.kind",
        "gc" => "ftl.gc",
        "buffer" => "buffer.kind",
        "scheduler" => "device.scheduler",
        "placement" => "placement.kind",
        _ => "buffer.padding",
    }
}

fn component(category: &str, name: &str) -> Option<Component> {
    components()
        .into_iter()
        .find(|c| c.category == category && c.name == name)
}

/// Check a whole configuration: the sections' fields, the component names, and every component
/// table (a table must belong to the selected component and hold only its parameters, valid).
/// Every error found is reported.
pub fn validate(cfg: &Config) -> Result<()> {
    let mut errors = check_values(cfg);
    cfg.check_relations(&mut errors);
    if cfg.placement.kind != "none" && !matches!(cfg.ftl.kind.as_str(), "lines" | "page") {
        errors.push(SimError::config(
            "placement.kind",
            format!(
                "placement `{}` needs an FTL with several write frontiers (ftl.kind = \"lines\" or \"page\"), not \"{}\"",
                cfg.placement.kind, cfg.ftl.kind
            ),
        ));
    }
    if cfg.ftl.kind == "lines" && cfg.ftl.gc != FtlConfig::default().gc {
        errors.push(SimError::config(
            "ftl.gc",
            "the line FTL chooses victims by ftl.lines.victim (pblk | greedy | cost-benefit | fifo)",
        ));
    }
    if cfg.ftl.kind == "fast" && cfg.ftl.log_blocks == 1 {
        errors.push(SimError::config(
            "ftl.log_blocks",
            "FAST needs 0 (automatic) or ≥ 2 log blocks: 1 SW log plus ≥ 1 RW log",
        ));
    }
    check_selection(cfg, &mut errors);
    errors.extend(crate::synth::check(&cfg.workload).err());
    errors.extend(flow_errors(cfg));
    SimError::all(errors).map_err(suggest_elsewhere)
}

/// Each flow's workload, queue depth and cap checked as the single-flow keys are, the errors
/// renamed to the flow's keys (`flows[1].workload.kind`, `flows[1].queue_depth`); what is not
/// the flow's own is reported once, by the whole configuration's checks.
fn flow_errors(cfg: &Config) -> Vec<SimError> {
    let mut out = Vec::new();
    for i in 0..cfg.flows.len() {
        let fc = cfg.flow_view(i);
        let mut errors = check_values(&fc);
        fc.check_relations(&mut errors);
        errors.extend(crate::synth::check(&fc.workload).err());
        for e in errors.into_iter().flat_map(SimError::into_list) {
            if let SimError::Config { field, msg, at } = e {
                let own = field.starts_with("workload")
                    || field == "run.queue_depth"
                    || field == "run.max_inflight";
                if own {
                    let field = format!("flows[{i}].{}", field.trim_start_matches("run."));
                    out.push(SimError::Config { field, msg, at });
                }
            }
        }
    }
    out
}

/// The checks of each key on its own (a value, a component's name, a component's table), which
/// hold whatever the other keys say: what a configuration file is checked with before
/// overrides complete it.
fn check_values(cfg: &Config) -> Vec<SimError> {
    let mut errors = Vec::new();
    cfg.check_values(&mut errors);
    for (category, field, name) in [
        ("workload", "workload.kind", &cfg.workload.kind),
        ("ftl", "ftl.kind", &cfg.ftl.kind),
        ("gc", "ftl.gc", &cfg.ftl.gc),
        ("buffer", "buffer.kind", &cfg.buffer.kind),
        ("scheduler", "device.scheduler", &cfg.device.scheduler),
        ("placement", "placement.kind", &cfg.placement.kind),
    ] {
        errors.extend(check_name(category, field, name).err());
    }
    if cfg.buffer.padding != "auto" {
        errors.extend(check_name("padding", "buffer.padding", &cfg.buffer.padding).err());
    }
    errors.extend(ftl::hybrid::ModelStats::parse(&cfg.ftl.model_stats).err());
    errors.extend(ftl::log_stats::Utilisation::parse(&cfg.ftl.log_utilisation).err());
    check_tables(cfg, &mut errors);
    errors
}

/// Every component table must name a registered component of its category and hold only its
/// parameters, with valid values.
fn check_tables(cfg: &Config, errors: &mut Vec<SimError>) {
    for (category, tables, _) in selections(cfg) {
        for (name, table) in tables {
            let path = format!("{category}.{name}");
            match component(category, name) {
                Some(comp) => errors.extend((comp.params.resolve)(Some(table), &path).err()),
                None => {
                    let valid = names(category);
                    let msg = match nearest(name, &valid) {
                        Some(n) => {
                            format!("unknown {category} `{name}`; did you mean [{category}.{n}]?")
                        }
                        None => format!(
                            "unknown key: not a field of [{category}] nor a {category} component ({})",
                            valid.join(", ")
                        ),
                    };
                    errors.push(SimError::config(path, msg));
                }
            }
        }
    }
}

/// Every component table must belong to the selected component; the selected component's
/// parameters (its defaults, when it has no table) must be valid.
fn check_selection(cfg: &Config, errors: &mut Vec<SimError>) {
    for (category, tables, selected) in selections(cfg) {
        for name in tables.keys() {
            let path = format!("{category}.{name}");
            if *name != selected && component(category, name).is_some() {
                errors.push(SimError::config(
                    path.clone(),
                    format!(
                        "parameters for {category} `{name}`, but {} = \"{selected}\": set {} = \"{name}\" or remove [{path}]",
                        selector(category),
                        selector(category)
                    ),
                ));
            }
        }
        if !tables.contains_key(&selected) {
            if let Some(comp) = component(category, &selected) {
                errors.extend((comp.params.resolve)(None, &comp.table()).err());
            }
        }
    }
}

/// Parse a TOML configuration file and check each key's value on its own (component tables
/// included); every error found is reported, each as `file:line:`. Whether a table belongs
/// to the selected component, and the other checks between keys, are left to [`validate`],
/// since the file may be completed by overrides (`--set buffer.kind=hitstat`).
pub fn parse_toml_file(text: &str, file: &str) -> Result<Config> {
    let (cfg, mut errors) = Config::parse_toml(text);
    if let Some(c) = &cfg {
        errors.extend(check_values(c).into_iter().map(|e| (e, None)));
    }
    let errors = errors
        .into_iter()
        .map(|(e, at)| (suggest_elsewhere(e), at))
        .collect();
    crate::config::place_errors(errors, text, file)?;
    cfg.ok_or_else(|| SimError::Invalid(format!("{file}: the configuration could not be read")))
}

/// Parse a configuration in JSON (what the Python layer sends). With unknown keys or wrong
/// types, the values of the other keys are checked too, and every error found is reported;
/// otherwise [`validate`] checks it whole.
pub fn parse_json(text: &str) -> Result<Config> {
    let (cfg, mut errors) = Config::parse_json(text);
    if let (Some(c), false) = (&cfg, errors.is_empty()) {
        errors.extend(check_values(c));
    }
    SimError::all(errors).map_err(suggest_elsewhere)?;
    cfg.ok_or_else(|| SimError::Invalid("the configuration could not be read".into()))
}

impl Config {
    /// Check every field that does not need the workload ([`validate`]). Errors name the field.
    pub fn validate(&self) -> Result<()> {
        validate(self)
    }
}

/// Write the selected components' parameters into their tables with every default filled in,
/// so that a result's configuration says exactly what produced it.
pub fn fill_params(cfg: &mut Config) -> Result<()> {
    validate(cfg)?;
    let mut filled = Vec::new();
    for (category, tables, selected) in selections(cfg) {
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
    // An unset device.op is DEFAULT_OP, except for the line FTL paced as pblk, which
    // over-provisions by pblk's rule from the device it is given (`ftl::lines::provision`).
    if cfg.device.op.is_none() && !(cfg.ftl.kind == "lines" && lines_params(cfg)?.gc == "pblk") {
        cfg.device.op = Some(crate::config::DEFAULT_OP);
    }
    Ok(())
}

/// Component `name`'s parameters in `tables` with every default filled in (None: it has none).
fn filled_params(category: &str, tables: &Tables, name: &str) -> Result<Option<serde_json::Value>> {
    match component(category, name) {
        Some(comp) if !(comp.params.fields)().is_empty() => Ok(Some((comp.params.resolve)(
            tables.get(name),
            &comp.table(),
        )?)),
        _ => Ok(None),
    }
}
