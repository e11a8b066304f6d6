//! Sequential read-ahead (`[readahead]`; off by default): the controller recognises sequential
//! read streams and reads the logical pages after them from flash into its DRAM before the host
//! asks, so that the stream's next reads are DRAM hits. Drives do this in firmware: the devices
//! measured in ../shared/devices read sequential 4 KiB at queue depth 1 in 10.4–10.8 µs (a DRAM
//! hit plus the host's overhead) and random 4 KiB in 77–87 µs (a flash read each).
//!
//! What is modelled (docs/config.md, `[readahead]`):
//! - **Streams.** Up to `streams` are tracked, each by the last device logical page it read and
//!   its reads so far. A read whose first page follows a stream's last page continues it; any
//!   other read starts a stream in place of the least recently used one.
//! - **Read-ahead.** Once a stream has `trigger` reads, each of its reads reads ahead, through
//!   the FTL with cause `readahead`, the pages up to `pages` past the read's end that the stream
//!   has not read ahead yet and that are mapped and not cached: a window topped up as the stream
//!   advances.
//! - **Cache.** `cache_pages` pages of DRAM, the least recently filled evicted. A host read of a
//!   cached page that the write buffer does not serve whole is served from it: no flash read. A
//!   host write or trim of a cached page drops it, and so does the program of the page's
//!   buffered data (a flush: the page may have been read ahead while its new data waited in the
//!   write buffer), so stale data is never served. Pages evicted or dropped unread are wasted.
//! - **Time.** A request's read-ahead reads are background work, placed on the dies from when
//!   the controller has handled it (the request does not wait for them); a page is in DRAM when
//!   its read completes, and a read that hits it waits for that
//!   ([`crate::timed::Clock::read_ahead`]). The cache's slots carry those times to the clock: a
//!   request that hit or filled some hands it a record of them with its read-ahead's operations
//!   ([`Records`]).
//!
//! With `pages = 0` the request path pays one predictable branch ([`Sim::request`]).

use crate::buffer::PageWrite;
use crate::config::ReadAheadConfig;
use crate::list::{Links, List, NIL};
use crate::nand::NandOp;
use crate::timed::readahead::NO_READ;
use crate::timed::{Clock, Served};
use crate::units::Lpn;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ops::Range;

/// What read-ahead counted (`readahead.*`, docs/metrics.md).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Counters {
    /// Host read pages served from the read-ahead cache.
    hit_pages: u64,
    /// Read-ahead pages evicted or dropped before any read.
    wasted_pages: u64,
}

/// Timed mode: what read-ahead did in the requests simulated and not yet placed in time, one
/// record for each request that hit the cache or read ahead (its `Counted::read_ahead` says so),
/// in request order: `[hits, fills, ops]`, the slots it hit, the slots it filled (marked
/// [`NO_READ`] where no flash read was needed); its `ops` NAND operations are in `ops`. The
/// clock takes the records in order ([`Records::place_next`]).
#[derive(Debug, Default)]
pub(super) struct Records {
    pub(super) words: Vec<u32>,
    pub(super) ops: Vec<NandOp>,
    /// Where the next record to place starts.
    next_word: usize,
    next_op: usize,
}

impl Records {
    /// Place the next record, of the request `served` (handled by the controller at its
    /// `ready_us`): its read-ahead reads in time, and its hits served from DRAM once their pages
    /// are there. The records are emptied once all are placed.
    #[cold]
    #[inline(never)]
    pub(super) fn place_next(&mut self, clock: &mut Clock, served: &mut Served) {
        let words = &self.words[self.next_word..];
        let [hits, fills, ops] = [words[0], words[1], words[2]].map(|n| n as usize);
        let (hit, filled) = words[3..3 + hits + fills].split_at(hits);
        let own = &self.ops[self.next_op..self.next_op + ops];
        served.read_ahead_us = clock.read_ahead(served.ready_us, own, hit, filled);
        served.dram_pages += hits as u64;
        self.next_word += 3 + hits + fills;
        self.next_op += ops;
        if self.next_word == self.words.len() {
            self.words.clear();
            self.ops.clear();
            (self.next_word, self.next_op) = (0, 0);
        }
    }
}

/// One sequential stream.
#[derive(Clone, Copy, Debug)]
struct Stream {
    /// The last page it read.
    last: Lpn,
    /// Its consecutive reads so far.
    reads: u32,
    /// The first page it has not read ahead.
    ahead: Lpn,
    /// When it was last used (for the least recently used).
    used: u64,
}

/// The tracked streams.
pub(super) struct Streams {
    list: Vec<Stream>,
    most: usize,
    trigger: u32,
    pages: u64,
    tick: u64,
}

impl Streams {
    /// A read of pages `first..=last` (of `limit` logical pages): the pages to read ahead for it
    /// (empty: none).
    pub(super) fn observe(&mut self, first: Lpn, last: Lpn, limit: Lpn) -> Range<Lpn> {
        self.tick += 1;
        let (tick, trigger, pages) = (self.tick, self.trigger, self.pages);
        let s = self.stream_of(first, last);
        s.used = tick;
        if s.reads < trigger {
            return 0..0;
        }
        let from = s.ahead.max(last + 1);
        let end = (last + 1 + pages).min(limit);
        if from >= end {
            return 0..0;
        }
        s.ahead = end;
        from..end
    }

    /// The stream a read of `first..=last` continues (advanced to `last`), or a new one in place
    /// of the least recently used.
    fn stream_of(&mut self, first: Lpn, last: Lpn) -> &mut Stream {
        if let Some(i) = self
            .list
            .iter()
            .position(|s| s.last.wrapping_add(1) == first)
        {
            let s = &mut self.list[i];
            s.reads = s.reads.saturating_add(1);
            s.last = last;
            return s;
        }
        let new = Stream {
            last,
            reads: 1,
            ahead: last + 1,
            used: 0,
        };
        if self.list.len() < self.most {
            self.list.push(new);
            return self.list.last_mut().expect("just pushed");
        }
        let lru = self.list.iter_mut().min_by_key(|s| s.used);
        let s = lru.expect("at least one stream");
        *s = new;
        s
    }
}

/// The read-ahead cache: pages in slots, least recently filled evicted.
pub(super) struct Cache {
    slot_of: FxHashMap<Lpn, u32>,
    /// Each slot's page, whether it was read since it was filled, and (integrity checking) the
    /// version it holds.
    lpn: Vec<Lpn>,
    read: Vec<bool>,
    version: Vec<u32>,
    /// Filled slots, the last filled at the head.
    links: Links,
    order: List,
    /// Slots emptied by drops.
    free: Vec<u32>,
    capacity: usize,
}

impl Cache {
    /// The slot holding `lpn`, now read, and the version it holds.
    #[inline]
    pub(super) fn hit(&mut self, lpn: Lpn) -> Option<(u32, u32)> {
        let s = *self.slot_of.get(&lpn)?;
        self.read[s as usize] = true;
        Some((s, self.version[s as usize]))
    }

    pub(super) fn holds(&self, lpn: Lpn) -> bool {
        self.slot_of.contains_key(&lpn)
    }

    /// Put `lpn` (data of `version`) in a slot: the slot, and whether a page evicted for it
    /// was never read.
    pub(super) fn fill(&mut self, lpn: Lpn, version: u32) -> (u32, bool) {
        let (s, wasted) = if let Some(s) = self.free.pop() {
            (s, false)
        } else if self.lpn.len() < self.capacity {
            self.lpn.push(0);
            self.read.push(false);
            self.version.push(0);
            ((self.lpn.len() - 1) as u32, false)
        } else {
            let s = self.order.tail;
            debug_assert_ne!(s, NIL, "a full cache has a filled slot");
            self.links.remove(&mut self.order, s);
            self.slot_of.remove(&self.lpn[s as usize]);
            (s, !self.read[s as usize])
        };
        let i = s as usize;
        (self.lpn[i], self.read[i], self.version[i]) = (lpn, false, version);
        self.slot_of.insert(lpn, s);
        self.links.push_front(&mut self.order, s);
        (s, wasted)
    }

    /// Drop `lpn` if cached: whether it was there unread.
    pub(super) fn discard(&mut self, lpn: Lpn) -> bool {
        let Some(s) = self.slot_of.remove(&lpn) else {
            return false;
        };
        self.links.remove(&mut self.order, s);
        self.free.push(s);
        !self.read[s as usize]
    }
}

/// The read-ahead state of the device: its streams, its cache, its counters (module docs).
pub(super) struct ReadAhead {
    on: bool,
    pub(super) streams: Streams,
    pub(super) cache: Cache,
    counters: Counters,
    /// Timed mode: the request being simulated has a record in `records`, which starts at
    /// `record`.
    pending: bool,
    record: usize,
    pub(super) records: Records,
}

impl ReadAhead {
    pub(super) fn new(cfg: &ReadAheadConfig) -> ReadAhead {
        ReadAhead {
            on: cfg.on(),
            streams: Streams {
                list: Vec::new(),
                most: cfg.streams as usize,
                trigger: cfg.trigger,
                pages: cfg.pages as u64,
                tick: 0,
            },
            cache: Cache {
                slot_of: FxHashMap::default(),
                lpn: Vec::new(),
                read: Vec::new(),
                version: Vec::new(),
                links: Links::default(),
                order: List::default(),
                free: Vec::new(),
                capacity: cfg.cache() as usize,
            },
            counters: Counters::default(),
            pending: false,
            record: 0,
            records: Records::default(),
        }
    }

    /// Whether read-ahead is on (`readahead.pages` > 0).
    #[inline(always)]
    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// Timed mode: whether the request just simulated has a record (reset for the next one).
    #[inline(always)]
    pub(super) fn take_pending(&mut self) -> bool {
        std::mem::take(&mut self.pending)
    }

    /// Timed mode: the record of the request being simulated, started if need be: where its
    /// `[hits, fills, ops]` are.
    pub(super) fn record(&mut self) -> usize {
        if !self.pending {
            self.pending = true;
            self.record = self.records.words.len();
            self.records.words.extend([0, 0, 0]);
        }
        self.record
    }

    /// A host read of `lpn` that the buffer does not serve whole: the version the cache holds,
    /// if it holds the page (`timed`: its slot goes to the clock).
    pub(super) fn hit(&mut self, lpn: Lpn, timed: bool) -> Option<u32> {
        let (slot, version) = self.cache.hit(lpn)?;
        self.counters.hit_pages += 1;
        if timed {
            let r = self.record();
            self.records.words[r] += 1;
            self.records.words.push(slot);
        }
        Some(version)
    }

    /// `lpn` was read ahead (`read`: with a flash read) holding `version`.
    pub(super) fn fill(&mut self, lpn: Lpn, version: u32, read: bool, timed: bool) {
        let (slot, wasted) = self.cache.fill(lpn, version);
        self.counters.wasted_pages += wasted as u64;
        if timed {
            let r = self.record();
            self.records.words[r + 1] += 1;
            self.records
                .words
                .push(if read { slot } else { slot | NO_READ });
        }
    }

    /// The page's cached copy, if any, is stale from now on: drop it.
    pub(super) fn discard(&mut self, lpn: Lpn) {
        self.counters.wasted_pages += self.cache.discard(lpn) as u64;
    }

    /// A flush programs `pages` of the block whose first page is `first`: their cached copies
    /// are stale.
    #[cold]
    #[inline(never)]
    pub(super) fn flushed(&mut self, first: Lpn, pages: &[PageWrite]) {
        if self.cache.slot_of.is_empty() {
            return;
        }
        for p in pages {
            self.discard(first + p.offset as u64);
        }
    }

    /// The counters now (the measured window's base).
    pub(super) fn counters(&self) -> Counters {
        self.counters.clone()
    }

    /// The metrics of the window since `base`, in which read-ahead made `reads` flash reads.
    pub(super) fn metrics(&self, base: &Counters, reads: u64) -> BTreeMap<String, f64> {
        let reads = reads as f64;
        let c = &self.counters;
        BTreeMap::from([
            ("nand.reads.readahead".to_string(), reads),
            ("readahead.reads".to_string(), reads),
            (
                "readahead.hit_pages".to_string(),
                (c.hit_pages - base.hit_pages) as f64,
            ),
            (
                "readahead.wasted_pages".to_string(),
                (c.wasted_pages - base.wasted_pages) as f64,
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streams(most: usize, trigger: u32, pages: u64) -> Streams {
        Streams {
            list: Vec::new(),
            most,
            trigger,
            pages,
            tick: 0,
        }
    }

    #[test]
    fn a_stream_reads_ahead_from_its_trigger_and_tops_its_window_up() {
        let mut s = streams(2, 2, 4);
        assert_eq!(s.observe(10, 11, 1000), 0..0);
        // The second read continues it: pages 14..=17 (4 past its end, page 13).
        assert_eq!(s.observe(12, 13, 1000), 14..18);
        // One page further: one page more.
        assert_eq!(s.observe(14, 14, 1000), 18..19);
        // Not past the device's end (of 17 pages here): nothing more at its last page.
        assert_eq!(s.observe(15, 15, 17), 0..0);
        let mut s = streams(2, 2, 4);
        s.observe(10, 10, 14);
        assert_eq!(s.observe(11, 11, 14), 12..14);
    }

    #[test]
    fn the_least_recently_used_stream_is_replaced() {
        let mut s = streams(2, 2, 4);
        s.observe(0, 0, 1000); // stream A
        s.observe(100, 100, 1000); // stream B
        s.observe(1, 1, 1000); // A continues (and reads ahead)
        s.observe(500, 500, 1000); // replaces B, the least recently used
        assert_eq!(s.observe(2, 2, 1000), 6..7, "A was kept");
        assert_eq!(s.observe(101, 101, 1000), 0..0, "B was forgotten");
    }

    #[test]
    fn the_cache_evicts_the_least_recently_filled_and_counts_unread_pages() {
        let mut c = ReadAhead::new(&ReadAheadConfig {
            pages: 2,
            cache_pages: 2,
            ..Default::default()
        });
        c.fill(7, 0, true, false);
        c.fill(8, 0, true, false);
        assert!(c.hit(7, false).is_some());
        // Page 7 was filled first: evicted (read: not wasted); then page 8 (unread: wasted).
        c.fill(9, 0, true, false);
        assert!(c.hit(7, false).is_none());
        c.fill(10, 0, true, false);
        assert_eq!(c.counters.wasted_pages, 1);
        // A drop frees a slot: the next fill takes it and evicts nothing.
        c.discard(9);
        assert_eq!(c.counters.wasted_pages, 2);
        c.fill(11, 0, true, false);
        assert!(c.hit(10, false).is_some() && c.hit(11, false).is_some());
        assert_eq!(c.counters.wasted_pages, 2);
    }
}
