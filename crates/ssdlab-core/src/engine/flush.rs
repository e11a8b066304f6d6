//! The flush path: what the buffer's flushes cost below it. A flushed group becomes FTL writes,
//! plus a read-modify-write read for every partial page and, when padded, reads of the block's
//! other pages from flash; every NAND operation is tagged with its cause (host, pad, rmw).

use super::readahead::ReadAhead;
use crate::buffer::accounting::GroupStats;
use crate::buffer::{FlushSink, FlushUnit};
use crate::error::Result;
use crate::ftl::page::PageFtl;
use crate::ftl::{Ftl, FtlView, Shape, Unit, UnitPage};
use crate::metrics::HostCounters;
use crate::nand::{Cause, Nand};
use crate::units::{Divisor, Geometry, Lbn, SectorMask};
use std::any::Any;

/// The FTL below the buffer. The page FTL, the common case, is held as itself: the one-page
/// flushes of page-level buffers and the prefetch hints reach it without dynamic dispatch (and
/// inline), everything else goes through the trait object.
pub(super) enum FtlBox {
    Page(Box<PageFtl>),
    Other(Box<dyn Ftl>),
}

impl FtlBox {
    fn new(ftl: Box<dyn Ftl>) -> FtlBox {
        if (&*ftl as &dyn Any).is::<PageFtl>() {
            let any: Box<dyn Any> = ftl;
            FtlBox::Page(any.downcast().expect("checked"))
        } else {
            FtlBox::Other(ftl)
        }
    }
}

impl std::ops::Deref for FtlBox {
    type Target = dyn Ftl;
    fn deref(&self) -> &(dyn Ftl + 'static) {
        match self {
            FtlBox::Page(p) => &**p,
            FtlBox::Other(f) => &**f,
        }
    }
}

impl std::ops::DerefMut for FtlBox {
    fn deref_mut(&mut self) -> &mut (dyn Ftl + 'static) {
        match self {
            FtlBox::Page(p) => &mut **p,
            FtlBox::Other(f) => &mut **f,
        }
    }
}

/// The buffer's way down: FTL + NAND + flush accounting.
pub(super) struct Backend {
    pub(super) ftl: FtlBox,
    pub(super) nand: Nand,
    ppb: u64,
    block_of: Divisor,
    full: SectorMask,
    /// `buffer.padding_fill = "all"`: padded flushes program every page of the block.
    pad_fill: bool,
    scratch: Vec<UnitPage>,
    pub(super) host: HostCounters,
    /// The buffer layer's flushed-group statistics, fed with every flush.
    pub(super) groups: GroupStats,
    /// Read-ahead (`[readahead]`; off unless the engine sets it): a flush drops the stale
    /// copies of its pages.
    pub(super) readahead: ReadAhead,
}

impl Backend {
    pub(super) fn new(ftl: Box<dyn Ftl>, geo: &Geometry, pad_fill: bool) -> Result<Backend> {
        Ok(Backend {
            ftl: FtlBox::new(ftl),
            nand: Nand::new(geo.physical_blocks),
            ppb: geo.pages_per_block,
            block_of: Divisor::new(geo.pages_per_block),
            full: geo.full_mask(),
            pad_fill,
            scratch: Vec::with_capacity(geo.pages_per_block as usize),
            host: HostCounters::default(),
            groups: GroupStats::new(geo.logical_blocks(), geo.pages_per_block)?,
            readahead: ReadAhead::new(&Default::default()),
        })
    }
}

impl FlushSink for Backend {
    fn flush(&mut self, unit: &FlushUnit) -> Result<()> {
        self.host.flushes += 1;
        self.host.flushed_pages += unit.pages.len() as u64;
        self.groups.record(unit.lbn, unit.pages.len());
        let first = unit.lbn * self.ppb;
        if self.readahead.on() {
            self.readahead.flushed(first, unit.pages);
        }
        let whole = unit.padded || unit.pages.len() as u64 == self.ppb;
        if let ([p], false) = (unit.pages, whole) {
            // Fast path for page-level buffers: one page, no padding.
            let mut page = [UnitPage::new(p.offset, p.version, Cause::Host)];
            if p.mask != self.full {
                let before = self.nand.mark();
                self.ftl
                    .read(first + p.offset as u64, Cause::Rmw, &mut self.nand)?;
                page[0].after = self.nand.mark_since(before);
            }
            self.host.ftl_pages += 1;
            return match &mut self.ftl {
                FtlBox::Page(f) => f.program_unit(unit.lbn, &page, unit.hint, &mut self.nand),
                FtlBox::Other(f) => f.write_unit(
                    Unit::pages(unit.lbn, &page).with_hint(unit.hint),
                    &mut self.nand,
                ),
            };
        }
        self.scratch.clear();
        let mut pages = unit.pages.iter().peekable();
        let push_buffered = |be: &mut Backend, p: &crate::buffer::PageWrite| -> Result<()> {
            // A partial page is merged with its old copy on flash: one read-modify-write read,
            // which its program waits for.
            let mut page = UnitPage::new(p.offset, p.version, Cause::Host);
            if p.mask != be.full {
                let before = be.nand.mark();
                be.ftl
                    .read(first + p.offset as u64, Cause::Rmw, &mut be.nand)?;
                page.after = be.nand.mark_since(before);
            }
            be.scratch.push(page);
            Ok(())
        };
        if unit.padded {
            self.host.padded_flushes += 1;
            for off in 0..self.ppb as u32 {
                if let Some(p) = pages.next_if(|p| p.offset == off) {
                    push_buffered(self, p)?;
                } else {
                    let lpn = first + off as u64;
                    let before = self.nand.mark();
                    if self.ftl.read(lpn, Cause::Pad, &mut self.nand)? {
                        let version = self.ftl.version_of(lpn);
                        let mut page = UnitPage::new(off, version, Cause::Pad);
                        page.after = self.nand.mark_since(before);
                        self.scratch.push(page);
                    }
                }
            }
        } else {
            for p in pages {
                push_buffered(self, p)?;
            }
        }
        // A full or padded group goes down as a whole block (the FTL switch-merges it); filler
        // for the offsets that hold no data counts as pages handed to the FTL.
        let shape = if whole {
            let fill = unit.padded && self.pad_fill;
            if fill {
                let filler = self.ppb - self.scratch.len() as u64;
                self.host.pad_filler_pages += filler;
                self.host.ftl_pages += filler;
            }
            Shape::Block { fill }
        } else {
            Shape::Pages
        };
        self.host.ftl_pages += self.scratch.len() as u64;
        let scratch = std::mem::take(&mut self.scratch);
        let r = self.ftl.write_unit(
            Unit::new(unit.lbn, &scratch, shape).with_hint(unit.hint),
            &mut self.nand,
        );
        self.scratch = scratch;
        r
    }

    fn view(&self) -> &dyn FtlView {
        &*self.ftl
    }

    #[inline]
    fn prefetch(&self, lpn: u64, deep: bool) {
        if !deep {
            self.groups.prefetch(self.block_of.quot(lpn));
        }
        match &self.ftl {
            FtlBox::Page(f) => f.prefetch(lpn, deep),
            FtlBox::Other(f) => f.prefetch(lpn, deep),
        }
    }

    #[inline]
    fn prefetch_unit(&self, lbn: Lbn) {
        self.groups.prefetch(lbn);
        self.view().prefetch_unit(lbn);
    }
}
