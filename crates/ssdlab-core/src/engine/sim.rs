//! The simulated device as the replay drives it: address map → write buffer → flush path (FTL,
//! NAND), with the integrity record of every LPN's latest version. Counts mode's request path is
//! here; timed mode's (`timed.rs`) and the measured window's metrics (`assemble.rs`) extend it.

use super::address::AddressMap;
use super::flush::Backend;
use super::source::At;
use crate::buffer::{HostPage, WriteBuffer};
use crate::error::{Result, SimError};
use crate::ftl::{Shape, Unit, UnitPage};
use crate::metrics::HostCounters;
use crate::nand::{Cause, NandCounters};
use crate::request::{Op, Request};
use crate::units::{Geometry, Lpn, PageSpan, SectorMask};

/// The counters at one point of the run (the measured window's base).
pub(super) struct Snapshot {
    pub(super) host: HostCounters,
    pub(super) nand: NandCounters,
    pub(super) erases: Vec<u32>,
    pub(super) ftl: Vec<(&'static str, u64)>,
    /// The FTL's cumulative distributions ([`crate::ftl::Ftl::histograms`]).
    pub(super) ftl_histograms: Vec<(&'static str, Vec<(u64, u64)>)>,
    /// Read-ahead's counters (`[readahead]`).
    pub(super) readahead: super::readahead::Counters,
}

/// The simulated device: address map → write buffer → flush path (FTL, NAND).
pub(super) struct Sim {
    pub(super) geo: Geometry,
    pub(super) map: AddressMap,
    pub(super) buffer: Box<dyn WriteBuffer>,
    pub(super) be: Backend,
    /// Latest host version of every LPN (integrity checking only; 0 = none).
    pub(super) latest: Vec<u32>,
    pub(super) check: bool,
    pub(super) version: u32,
    /// log2 of the page size in bytes.
    pub(super) page_shift: u32,
    /// The write buffer's capacity in pages (host-interface scheduling asks if a write flushes).
    pub(super) buffer_pages: u64,
    /// The FTL tags host pages (placement): pages carry its tag, not the request's stream.
    tags: bool,
    /// FDP: pages carry their request's placement identifier, not its stream.
    pids: bool,
    /// The FTL follows the write requests' times (FDP's RU time limit).
    clocked: bool,
    /// Timed mode: the watermark drains since the clock last took them (operations, pages),
    /// as the NAND log holds their operations.
    pub(super) drains: Vec<(u32, u64)>,
    /// Timed mode: the buffer's watermark in pages (`buffer.drain_watermark`; None: off).
    pub(super) drain_to: Option<u64>,
    /// Several flows: each one's address map onto its range; the one in use is `map`, its
    /// slot holding the map it replaced.
    pub(super) flow_maps: Vec<AddressMap>,
    flow_in_use: Option<usize>,
}

impl Sim {
    pub(super) fn new(
        geo: Geometry,
        map: AddressMap,
        buffer: Box<dyn WriteBuffer>,
        be: Backend,
        check: bool,
    ) -> Result<Sim> {
        Ok(Sim {
            buffer_pages: 0,
            tags: be.ftl.tags(),
            pids: be.ftl.placement_ids(),
            clocked: be.ftl.keeps_time(),
            page_shift: geo.page_bytes.trailing_zeros(),
            latest: if check {
                crate::units::alloc_vec(geo.logical_pages, 0, "integrity versions")?
            } else {
                Vec::new()
            },
            geo,
            map,
            buffer,
            be,
            check,
            version: 0,
            drains: Vec::new(),
            drain_to: None,
            flow_maps: Vec::new(),
            flow_in_use: None,
        })
    }

    /// Map addresses as flow `flow` does (its range of the device) from now on.
    #[inline]
    pub(super) fn use_flow_map(&mut self, flow: usize) {
        if self.flow_in_use == Some(flow) || flow >= self.flow_maps.len() {
            return;
        }
        if let Some(f) = self.flow_in_use {
            std::mem::swap(&mut self.map, &mut self.flow_maps[f]);
        }
        std::mem::swap(&mut self.map, &mut self.flow_maps[flow]);
        self.flow_in_use = Some(flow);
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            host: self.be.host.clone(),
            nand: self.be.nand.counters.clone(),
            erases: self.be.nand.erase_counts.clone(),
            ftl: self.be.ftl.counters(),
            ftl_histograms: self.be.ftl.histograms(),
            readahead: self.be.readahead.counters(),
        }
    }

    #[inline]
    fn next_version(&mut self) -> Result<u32> {
        if self.check {
            self.version = self.version.checked_add(1).ok_or_else(|| {
                SimError::Invalid("run.check_integrity supports at most 2^32 page writes".into())
            })?;
        }
        Ok(self.version)
    }

    pub(super) fn precondition_fill(&mut self) -> Result<()> {
        if self.be.ftl.fill_bulk(&mut self.be.nand)? {
            return Ok(());
        }
        let ppb = self.geo.pages_per_block;
        let mut unit = Vec::with_capacity(ppb as usize);
        for lbn in 0..self.geo.logical_blocks() {
            unit.clear();
            // Placement sees the fill as one block-sized write request per block, and each
            // page goes down with its own tag.
            if self.tags {
                self.be.ftl.begin_write(ppb * self.geo.page_bytes);
            }
            for off in 0..ppb {
                if self.tags {
                    self.write_straight(lbn * ppb + off, 0)?;
                } else {
                    unit.push(self.precondition_page(lbn * ppb + off)?);
                }
            }
            if !self.tags {
                let whole = Shape::Block { fill: false };
                let hint = self.be.ftl.precondition_hint(lbn);
                let unit = Unit::new(lbn, &unit, whole).with_hint(hint);
                self.be.ftl.write_unit(unit, &mut self.be.nand)?;
            }
        }
        Ok(())
    }

    /// Logical page `lpn` written straight to the FTL as the preconditioning writes it (a new
    /// version, with its placement tag when the FTL places by tag, else placement identifier
    /// `pid` under FDP; the caller has begun the write request).
    fn write_straight(&mut self, lpn: Lpn, pid: u16) -> Result<()> {
        let page = self.precondition_page(lpn)?;
        let mut unit = Unit::pages(lpn / self.geo.pages_per_block, std::slice::from_ref(&page));
        if self.tags {
            unit = unit.with_hint(self.be.ftl.tag(lpn));
        } else if self.pids {
            unit = unit.with_hint(pid as u32);
        }
        self.be.ftl.write_unit(unit, &mut self.be.nand)
    }

    /// A new version of logical page `lpn` written by the preconditioning (the latest, when
    /// integrity is checked), as its block's page.
    fn precondition_page(&mut self, lpn: Lpn) -> Result<UnitPage> {
        let v = self.next_version()?;
        if self.check {
            self.latest[lpn as usize] = v;
        }
        Ok(UnitPage::new(
            (lpn % self.geo.pages_per_block) as u32,
            v,
            Cause::Host,
        ))
    }

    /// `writes` single-page writes at uniformly random logical pages, straight to the FTL (as
    /// the fill): a campaign's random preconditioning, which leaves the device in the steady
    /// state of random overwrites (GC running, logically adjacent pages scattered).
    pub(super) fn precondition_random(&mut self, writes: u64, seed: u64) -> Result<()> {
        let mut rng = crate::rng::Rng::new(seed ^ 0x5eed_f111_7a2d_0000);
        let pages = self.geo.logical_pages;
        for _ in 0..writes {
            let lpn = rng.below(pages);
            if self.tags {
                self.be.ftl.begin_write(self.geo.page_bytes);
            }
            let pid = self
                .be
                .ftl
                .precondition_hint(lpn / self.geo.pages_per_block) as u16;
            self.write_straight(lpn, pid)?;
        }
        Ok(())
    }

    /// Write request `req`'s pages (read at `at`) through the address map straight to the FTL,
    /// untimed and past the buffer, as the preconditioning writes: a flow's fast-forward.
    pub(super) fn fast_forward_write(&mut self, req: &Request, at: At) -> Result<()> {
        let pb = self.geo.page_bytes;
        if req.len_bytes == 0 {
            return Ok(());
        }
        if self.tags {
            self.be.ftl.begin_write(req.len_bytes);
        }
        if self.clocked {
            self.be.ftl.set_time_us(req.time_us);
        }
        for page in req.offset_bytes / pb..=(req.offset_bytes + req.len_bytes - 1) / pb {
            let lpn = self.map.map_lpn(&self.geo, page, req, at)?;
            self.write_straight(lpn, req.placement_id)?;
        }
        Ok(())
    }

    /// Sectors `mask` of host page `lpn`, written by `req`, through the address map to the buffer.
    #[inline(always)]
    fn write_page(&mut self, lpn: Lpn, mask: SectorMask, req: &Request, at: At) -> Result<()> {
        let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
        let v = self.next_version()?;
        if self.check {
            self.latest[lpn as usize] = v;
        }
        let hint = if self.tags {
            self.be.ftl.tag(lpn)
        } else if self.pids {
            req.placement_id as u32
        } else {
            req.dev
        };
        let before = self
            .buffer
            .write(HostPage::new(lpn, mask, v, hint), &mut self.be)?;
        if before != 0 {
            // A page cached clean for a read saves no program: counted apart.
            let clean = self.buffer.last_write_hit_clean();
            let h = &mut self.be.host;
            if clean {
                h.clean_write_hit_pages += 1;
            } else {
                h.write_hit_pages += 1;
                h.write_hit_sectors += (before & mask).count_ones() as u64;
            }
        }
        Ok(())
    }

    /// One host request: its pages (LPN + sector mask) through the address map to the buffer
    /// (writes), the buffer or the FTL (reads), or both (trims); with read-ahead on
    /// (`[readahead]`), through its cache too ([`Sim::request_read_ahead`]).
    #[inline(always)]
    pub(super) fn request(&mut self, req: &Request, at: At) -> Result<()> {
        if self.be.readahead.on() {
            return self.request_read_ahead(req, at);
        }
        self.request_plain(req, at)
    }

    /// [`Sim::request`] without read-ahead.
    #[inline(always)]
    pub(super) fn request_plain(&mut self, req: &Request, at: At) -> Result<()> {
        // Pages are a power of two of sectors (device.page_bytes is checked).
        let shift = self.geo.sectors_per_page().trailing_zeros();
        let span = PageSpan::new(req.offset_bytes, req.len_bytes, shift);
        match req.op {
            Op::Write => {
                let h = &mut self.be.host;
                h.write_requests += 1;
                h.write_bytes += req.len_bytes;
                self.buffer.begin_request();
                if self.tags {
                    self.be.ftl.begin_write(req.len_bytes);
                }
                if self.clocked {
                    self.be.ftl.set_time_us(req.time_us);
                }
                if req.len_bytes == self.geo.page_bytes
                    && req.offset_bytes & (self.geo.page_bytes - 1) == 0
                {
                    // The common request, one whole page: no span to walk.
                    let h = &mut self.be.host;
                    h.write_pages += 1;
                    h.write_sectors += 1 << shift;
                    let lpn = req.offset_bytes >> self.page_shift;
                    self.write_page(lpn, self.geo.full_mask(), req, at)?;
                } else {
                    let h = &mut self.be.host;
                    h.write_pages += span.pages();
                    h.write_sectors += span.sectors();
                    for (lpn, mask) in span {
                        self.write_page(lpn, mask, req, at)?;
                    }
                }
                self.be.host.occupancy_sum += self.buffer.pages();
            }
            Op::Read => {
                self.read::<false>(req, span, at)?;
            }
            Op::Trim => {
                self.be.host.trim_requests += 1;
                let full = self.geo.full_mask();
                for (lpn, mask) in span {
                    // Only whole pages can be discarded.
                    if mask != full {
                        continue;
                    }
                    let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
                    self.be.host.trim_pages += 1;
                    self.buffer.trim(lpn);
                    self.be.ftl.trim(lpn);
                    if self.check {
                        self.latest[lpn as usize] = 0;
                    }
                }
            }
        }
        Ok(())
    }

    /// A read's pages (`span`) through the address map to the buffer, then (`READ_AHEAD`:
    /// read-ahead is on) the read-ahead cache, then the FTL. With read-ahead, the device LPNs of
    /// its first and last page (None: it has none).
    #[inline(always)]
    pub(super) fn read<const READ_AHEAD: bool>(
        &mut self,
        req: &Request,
        span: PageSpan,
        at: At,
    ) -> Result<Option<(Lpn, Lpn)>> {
        self.be.host.read_requests += 1;
        self.be.host.read_bytes += req.len_bytes;
        self.be.host.read_pages += span.pages();
        let mut ends = None;
        for (lpn, mask) in span {
            let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
            if READ_AHEAD {
                ends = Some((ends.map_or(lpn, |(first, _)| first), lpn));
            }
            self.read_page::<READ_AHEAD>(lpn, mask)?;
        }
        Ok(ends)
    }

    /// Sectors `mask` of device page `lpn` read: from the buffer, the read-ahead cache
    /// (`READ_AHEAD`) or the FTL.
    #[inline(always)]
    fn read_page<const READ_AHEAD: bool>(&mut self, lpn: Lpn, mask: SectorMask) -> Result<()> {
        let buffered = self.buffer.read(lpn, mask, &mut self.be)? & mask;
        if buffered == mask {
            self.be.host.read_hit_pages += 1;
        } else if READ_AHEAD && self.read_ahead_hit(lpn, buffered)? {
            // Served from the read-ahead cache: no flash read.
        } else if !self.be.ftl.read(lpn, Cause::Host, &mut self.be.nand)? && buffered == 0 {
            // Neither buffered nor mapped: the read finds no data and costs nothing.
            self.be.host.unwritten_read_pages += 1;
        }
        Ok(())
    }
}
