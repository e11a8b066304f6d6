//! Background draining of the write buffer (`buffer.drain_watermark`, `buffer.drain_idle_us`):
//! flushes of the policy's own victims that no host write waits for.
//!
//! - Watermark: after a request leaves the buffer above the watermark, victims are flushed until
//!   it is back at the watermark; their operations are ready when the controller has handled the
//!   request, placed after the request's own.
//! - Idle: once the device has been idle (no request in it, nothing running) for
//!   `drain_idle_us`, victims are flushed until the buffer is empty or a request arrives, up to
//!   one flush per die at a time (each next victim starts when a flush in progress completes), so
//!   a drain uses the device's parallelism as a host write stream would.

use crate::config::Config;
use std::collections::BTreeMap;

/// The draining settings and what draining did.
#[derive(Clone, Debug, Default)]
pub struct Drain {
    watermark: Option<f64>,
    /// Pages the buffer may hold before the watermark drain starts.
    pub(super) target: Option<u64>,
    pub idle_us: Option<f64>,
    /// Idle draining: flushes in progress at once.
    pub width: usize,
    /// Pages drained (measured window) and flushes.
    pages: u64,
    flushes: u64,
}

impl Drain {
    pub fn new(cfg: &Config, dies: usize) -> Drain {
        Drain {
            watermark: cfg.buffer.drain_watermark.filter(|&w| w < 1.0),
            target: None,
            idle_us: cfg.buffer.drain_idle_us,
            width: dies.max(1),
            pages: 0,
            flushes: 0,
        }
    }

    /// Draining of either kind is on.
    pub fn on(&self) -> bool {
        self.watermark.is_some() || self.idle_us.is_some()
    }

    /// The buffer holds `pages` pages: the watermark in pages.
    pub(super) fn set_capacity(&mut self, pages: u64) {
        self.target = self.watermark.map(|w| (w * pages as f64).floor() as u64);
    }

    /// Pages above which the buffer drains after a request (None: no watermark).
    pub fn target(&self) -> Option<u64> {
        self.target
    }

    pub(super) fn count(&mut self, pages: u64, measured: bool) {
        if measured && pages > 0 {
            self.pages += pages;
            self.flushes += 1;
        }
    }

    pub(super) fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        if self.on() {
            m.insert("buffer.drained_pages".into(), self.pages as f64);
            m.insert("buffer.drained_flushes".into(), self.flushes as f64);
        }
        m
    }
}
