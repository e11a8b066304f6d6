//! Write buffers. A buffer holds host-written pages (with a sector mask each) and, when it needs
//! room or at the end, emits [`FlushUnit`]s: the buffered pages of one LBN in ascending offset,
//! marked padded or not. It reaches the FTL only through a [`FlushSink`], which also offers the
//! read-only [`FtlView`] for FTL-aware victim choice and the pad-or-log decision.
//!
//! A new policy is one file here (its parameters, rules and [`Entry`]) plus one line in
//! `registry.rs`.

pub mod accounting;
pub mod block_lru;
pub mod bpac;
pub mod bplru;
pub mod cflru;
pub mod clc;
pub mod fab;
pub mod fifo;
pub mod groups;
pub mod hitstat;
pub mod hwb;
mod index;
pub mod integrated;
pub use crate::list;
pub mod lru;
pub mod lru_wsr;
pub mod none;
pub mod pagecache;
pub mod r#ref;
pub mod reuse;

use crate::component::Component;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Lbn, Lpn, SectorMask};

/// `value` of field `table.field` among `options`, or an error listing them.
pub(crate) fn choice<T: Copy>(
    table: &str,
    field: &str,
    value: &str,
    options: &[(&str, T)],
) -> Result<T> {
    options
        .iter()
        .find(|(n, _)| *n == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            crate::error::unknown_value(format!("{table}.{field}"), value, &names)
        })
}

/// Ok when field `table.field` is `v` in [0, 1] (a fraction of the buffer or of a block).
pub(crate) fn unit_interval(table: &str, field: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(SimError::config(
            format!("{table}.{field}"),
            format!("{v} is not in [0, 1]"),
        ))
    }
}

/// One page of a host write as it reaches the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPage {
    pub lpn: Lpn,
    /// Sectors written.
    pub mask: SectorMask,
    /// Version of the data (integrity checking).
    pub version: u32,
    /// Stream hint carried with the data to the FTL (placement across write frontiers).
    pub hint: u32,
}

impl HostPage {
    #[inline]
    pub fn new(lpn: Lpn, mask: SectorMask, version: u32, hint: u32) -> HostPage {
        HostPage {
            lpn,
            mask,
            version,
            hint,
        }
    }
}

/// One buffered page handed to the FTL.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageWrite {
    /// Offset of the page within its logical block.
    pub offset: u32,
    /// Sectors present; anything short of a full page costs a read-modify-write read.
    pub mask: SectorMask,
    /// Version of the data (integrity checking).
    pub version: u32,
}

/// What a buffer flushes at once: pages of one logical block.
#[derive(Clone, Copy, Debug)]
pub struct FlushUnit<'a> {
    pub lbn: Lbn,
    /// Ascending offsets, no duplicates.
    pub pages: &'a [PageWrite],
    /// Fill the rest of the block from flash and write it whole (block padding).
    pub padded: bool,
    /// Stream hint for placement (the hint of the unit's most recent page).
    pub hint: u32,
}

/// The buffer's way down: the engine implements it on top of the FTL.
pub trait FlushSink {
    fn flush(&mut self, unit: &FlushUnit) -> Result<()>;
    fn view(&self) -> &dyn FtlView;
    /// Page `lpn` will be flushed soon: start loading what its flush touches below the buffer
    /// (see [`FtlView::prefetch`] for `deep`). The default passes the hint to the FTL.
    #[inline]
    fn prefetch(&self, lpn: Lpn, deep: bool) {
        self.view().prefetch(lpn, deep)
    }
    /// A unit of `lbn` is likely the next flushed (see [`FtlView::prefetch_unit`]).
    #[inline]
    fn prefetch_unit(&self, lbn: Lbn) {
        self.view().prefetch_unit(lbn)
    }
}

/// A write buffer's registry entry: what it is, how to build it, and the padding policy
/// `buffer.padding = "auto"` stands for with it.
pub struct Entry {
    pub info: Component,
    pub build: fn(&Config, BufferParams) -> Result<Box<dyn WriteBuffer>>,
    pub default_padding: &'static str,
}

/// A buffer's registry entry with its name written once: `entry!(name, Params, keys, padding
/// "<default padding>", summary, |cfg, p, q| build)`, where `q` is the `[buffer.<name>]` table
/// read as `Params` (`crate::params::NoParams` for a buffer without parameters).
macro_rules! entry {
    ($name:literal, $params:ty, $keys:expr, padding $padding:literal, $summary:expr,
     |$cfg:ident, $p:ident, $q:pat_param| $build:expr $(,)?) => {
        $crate::buffer::Entry {
            info: $crate::component::Component::of::<$params>("buffer", $name, $summary, $keys),
            build: |$cfg, $p| {
                let $q: $params = $crate::params::of(&$cfg.buffer.tables, "buffer", $name)?;
                $build
            },
            default_padding: $padding,
        }
    };
}
pub(crate) use entry;

/// The shared keys of a page-level buffer, and of one that groups pages by LBN.
pub const BUFFER_KEYS: &[&str] = &["buffer.bytes", "buffer.fraction"];
pub const GROUP_KEYS: &[&str] = &[
    "buffer.bytes",
    "buffer.fraction",
    "buffer.padding",
    "buffer.padding_fill",
];

/// Every sector of a page of `cfg`'s device (clean pages are whole).
pub fn full_page_mask(cfg: &Config) -> SectorMask {
    crate::units::full_mask(cfg.device.page_bytes.0 / crate::units::SECTOR_BYTES)
}

/// Construction parameters every buffer receives.
pub struct BufferParams {
    pub capacity_pages: u64,
    pub pages_per_block: u64,
    pub padding: Box<dyn Padding>,
}

pub trait WriteBuffer: Send {
    /// Page `lpn` will be written or read soon: a buffer may start loading what the access will
    /// touch (its index), so that the access does not wait for memory. The default does nothing.
    #[inline]
    fn prefetch(&mut self, _lpn: Lpn) {}
    /// A host write request begins; the `write` calls for its pages follow. Buffers whose clock
    /// counts write requests (HitStat) use it; the default does nothing.
    fn begin_request(&mut self) {}
    /// Buffer the sectors of `page`. Returns the sectors of that page that were already
    /// buffered (0 = page miss). May flush victims through `sink` first.
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask>;
    /// Whether the page of the last `write` that found its page buffered was clean (cached for
    /// a read, with no program pending): such a write saves no program, and the engine counts
    /// it apart from write hits. Only buffers that cache reads have clean pages.
    fn last_write_hit_clean(&self) -> bool {
        false
    }
    /// A host read of sectors `mask` of `lpn`: returns the sectors present in the buffer; unless
    /// they cover `mask`, the engine then reads the page from flash. Write buffers leave their
    /// order unchanged; policies that cache clean pages (`cflru`, `lru-wsr` with `cache_reads`)
    /// count it as an access and insert a missing page, evicting through `sink` first.
    fn read(&mut self, lpn: Lpn, mask: SectorMask, sink: &mut dyn FlushSink) -> Result<SectorMask>;
    /// Drop any buffered data of `lpn` (trim).
    fn trim(&mut self, lpn: Lpn);
    /// Flush the victim the policy would evict next, as an eviction would (background draining
    /// in timed mode, `buffer.drain_*`, and the final flush); false if nothing is left to flush.
    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool>;
    /// Flush everything, in the policy's victim order: by default, its victims one after
    /// another (a policy whose final flush orders otherwise says so).
    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.drain_one(sink)? {}
        Ok(())
    }
    /// Pages currently buffered.
    fn pages(&self) -> u64;
    /// Current values of the policy's adaptive parameters, sampled by the engine (time series,
    /// end-of-run metrics): e.g. "padding.threshold_fraction", "buffer.hitstat.levels" (metric names must not
    /// be configuration keys: the results store keeps both as columns).
    fn gauges(&mut self, _view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Flush `page` alone (page-level buffers), as a one-page unit of its logical block.
pub fn flush_page(sink: &mut dyn FlushSink, page: HostPage, pages_per_block: u64) -> Result<()> {
    let unit = [PageWrite {
        offset: (page.lpn % pages_per_block) as u32,
        mask: page.mask,
        version: page.version,
    }];
    sink.flush(&FlushUnit {
        lbn: page.lpn / pages_per_block,
        pages: &unit,
        padded: false,
        hint: page.hint,
    })
}

/// Flush the pages of `lbn` a group-based buffer gathered (in any order) as one unit: in ascending
/// offset, padded if `padding` says so.
pub fn flush_gathered(
    pages: &mut [PageWrite],
    lbn: Lbn,
    hint: u32,
    pages_per_block: u64,
    padding: &mut dyn Padding,
    sink: &mut dyn FlushSink,
) -> Result<()> {
    pages.sort_unstable_by_key(|p| p.offset);
    let prefix = pages.iter().zip(0..).all(|(p, i)| p.offset == i);
    let padded = padding.pad_unit(
        lbn,
        pages.len() as u64,
        prefix,
        pages_per_block,
        sink.view(),
    );
    sink.flush(&FlushUnit {
        lbn,
        pages,
        padded,
        hint,
    })
}
