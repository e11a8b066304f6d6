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
];

pub static FTLS: &[Entry<FtlCtor>] = &[Entry {
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
}];

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
            &["buffer.padding_threshold"],
        ),
        build: |cfg| Ok(Box::new(padding::FixedPadding { threshold: cfg.buffer.padding_threshold })),
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
    c("workload", "desktop", "Desktop profile after seed 000 Table 4: ~30% of write requests sequential, most blocks rarely updated, a few very hot.",
      &["workload.requests", "workload.footprint_bytes", "workload.zipf_theta", "workload.read_fraction", "workload.seed"]),
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

pub fn build_ftl(cfg: &Config, geo: &Geometry) -> Result<Box<dyn Ftl>> {
    (find(FTLS, "ftl", "ftl.kind", &cfg.ftl.kind)?.build)(cfg, geo)
}

pub fn build_padding(cfg: &Config) -> Result<Box<dyn Padding>> {
    (find(PADDINGS, "padding", "buffer.padding", &cfg.buffer.padding)?.build)(cfg)
}
