//! The request path with read-ahead on ([`Sim::request_read_ahead`]): reads through the
//! read-ahead cache and its streams (`readahead`), writes and trims dropping what they change.
//! Apart from `readahead` so that the cache, which the flush path also updates, does not depend
//! on the device that uses it.

use super::sim::Sim;
use super::source::At;
use crate::error::{Result, SimError};
use crate::nand::Cause;
use crate::request::{Op, Request};
use crate::units::{Lpn, PageSpan, SectorMask};
use std::ops::Range;

impl Sim {
    /// [`Sim::request`] with read-ahead on: reads through the read-ahead cache and its streams;
    /// writes and trims drop the pages they change from it.
    #[cold]
    #[inline(never)]
    pub(super) fn request_read_ahead(&mut self, req: &Request, at: At) -> Result<()> {
        if req.op != Op::Read {
            self.request_plain(req, at)?;
            return self.drop_changed(req, at);
        }
        let shift = self.geo.sectors_per_page().trailing_zeros();
        let span = PageSpan::new(req.offset_bytes, req.len_bytes, shift);
        let Some((first, last)) = self.read::<true>(req, span, at)? else {
            return Ok(());
        };
        let ahead = self
            .be
            .readahead
            .streams
            .observe(first, last, self.geo.logical_pages);
        self.read_ahead(ahead)
    }

    /// A host read of `lpn` that the buffer did not serve whole (it holds sectors `buffered`):
    /// whether the read-ahead cache serves it. With integrity checking, what it serves must be
    /// the page's latest version where the buffer holds none of it.
    #[inline]
    pub(super) fn read_ahead_hit(&mut self, lpn: Lpn, buffered: SectorMask) -> Result<bool> {
        let timed = self.be.nand.logging();
        let Some(version) = self.be.readahead.hit(lpn, timed) else {
            return Ok(false);
        };
        if self.check && buffered == 0 && version != self.latest[lpn as usize] {
            return Err(SimError::Integrity(format!(
                "read-ahead served version {version} of LPN {lpn}, whose latest is {}",
                self.latest[lpn as usize]
            )));
        }
        Ok(true)
    }

    /// Read the pages `ahead` that are mapped and not cached into the cache. In timed mode their
    /// NAND operations are logged apart, in the request's record, as a batch of their own (none
    /// waits for the request's).
    fn read_ahead(&mut self, ahead: Range<Lpn>) -> Result<()> {
        if ahead.is_empty() {
            return Ok(());
        }
        if !self.be.nand.logging() {
            return self.read_pages_ahead(ahead, false);
        }
        let r = self.be.readahead.record();
        let theirs = std::mem::take(&mut self.be.readahead.records.ops);
        let before = theirs.len();
        let own = self.be.nand.swap_log(theirs);
        let read = self.read_pages_ahead(ahead, true);
        let theirs = self.be.nand.swap_log(own);
        self.be.readahead.records.words[r + 2] += (theirs.len() - before) as u32;
        self.be.readahead.records.ops = theirs;
        read
    }

    /// Read the pages `ahead` that are mapped and not cached into the cache (`timed`: their
    /// slots go to the request's record).
    fn read_pages_ahead(&mut self, ahead: Range<Lpn>, timed: bool) -> Result<()> {
        for lpn in ahead {
            if self.be.readahead.cache.holds(lpn) {
                continue;
            }
            let before = self.be.nand.counters.reads[Cause::ReadAhead as usize];
            if !self.be.ftl.read(lpn, Cause::ReadAhead, &mut self.be.nand)? {
                continue;
            }
            let read = self.be.nand.counters.reads[Cause::ReadAhead as usize] != before;
            let version = if self.check {
                self.be.ftl.version_of(lpn)
            } else {
                0
            };
            self.be.readahead.fill(lpn, version, read, timed);
        }
        Ok(())
    }

    /// A write or trim `req` changed its pages (a trim whole ones only): drop their cached
    /// copies.
    fn drop_changed(&mut self, req: &Request, at: At) -> Result<()> {
        let shift = self.geo.sectors_per_page().trailing_zeros();
        let full = self.geo.full_mask();
        for (lpn, mask) in PageSpan::new(req.offset_bytes, req.len_bytes, shift) {
            if req.op == Op::Trim && mask != full {
                continue;
            }
            let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
            self.be.readahead.discard(lpn);
        }
        Ok(())
    }
}
