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
