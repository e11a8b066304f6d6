//! Pad-or-log decision for a flushed group: pad (read the missing pages from flash and write the
//! whole block, so a hybrid FTL can switch-merge) or log (write only the buffered pages).
//! Group-based buffers ask their `Padding` once per victim, passing the FTL's read-only view.

use crate::ftl::FtlView;
use crate::units::Lbn;

pub trait Padding: Send {
    /// Should the group of `lbn` holding `buffered_pages` pages be padded to a full block?
    fn pad(
        &mut self,
        lbn: Lbn,
        buffered_pages: u64,
        pages_per_block: u64,
        view: &dyn FtlView,
    ) -> bool;
}

/// `none`: never pad.
pub struct NoPadding;

impl Padding for NoPadding {
    fn pad(
        &mut self,
        _lbn: Lbn,
        _buffered_pages: u64,
        _pages_per_block: u64,
        _view: &dyn FtlView,
    ) -> bool {
        false
    }
}

/// `fixed`: pad a group holding at least `threshold` × pages-per-block pages
/// (`buffer.padding_threshold`; 0.5 is BPLRU's setting in seed 000, 1.0 pads only full groups).
pub struct FixedPadding {
    pub threshold: f64,
}

impl Padding for FixedPadding {
    fn pad(
        &mut self,
        _lbn: Lbn,
        buffered_pages: u64,
        pages_per_block: u64,
        _view: &dyn FtlView,
    ) -> bool {
        buffered_pages < pages_per_block
            && buffered_pages as f64 >= self.threshold * pages_per_block as f64
    }
}
