//! `none`: no buffer; every page write goes to the FTL at once as a one-page flush unit.

use super::{FlushSink, HostPage, WriteBuffer};
use crate::error::Result;
use crate::units::{Lpn, SectorMask};

pub struct NoBuffer {
    ppb: u64,
}

impl NoBuffer {
    pub fn new(pages_per_block: u64) -> Self {
        NoBuffer {
            ppb: pages_per_block,
        }
    }
}

impl WriteBuffer for NoBuffer {
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        super::flush_page(sink, page, self.ppb)?;
        Ok(0)
    }
    fn read(
        &mut self,
        _lpn: Lpn,
        _mask: SectorMask,
        _sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        Ok(0)
    }
    fn trim(&mut self, _lpn: Lpn) {}

    /// Nothing is ever buffered: nothing to drain.
    fn drain_one(&mut self, _sink: &mut dyn FlushSink) -> Result<bool> {
        Ok(false)
    }
    fn pages(&self) -> u64 {
        0
    }
}

/// The registry entry of `none`.
pub static ENTRY: super::Entry = super::entry! {
    "none", crate::params::NoParams, &[], padding "none",
    "No write buffer: every page write goes straight to the FTL.",
    |_cfg, p, _| Ok(Box::new(NoBuffer::new(p.pages_per_block)))
};
