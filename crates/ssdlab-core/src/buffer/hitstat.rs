//! `hitstat` and `hitstat-adj`: seed 000's HitStat buffer (§3.3–§4.4; ALGORITHMS.md §1.12).
//!
//! * Groups are the buffered pages of one logical block (the thesis's "LBA" = our LBN). A group
//!   records the number of the last host write request that wrote it (`req`) and its weight =
//!   buffered sectors.
//! * The clock counts host write requests ([`WriteBuffer::begin_request`]); Age = now − req.
//! * Hit log: a circular queue of the last `hit_log` ages of groups at a group hit (a write
//!   request writing a group already buffered; counted once per request and group).
//! * Age Transformation Function: the sorted hit log gives `levels` − 1 cut points, the order
//!   statistics at ranks ⌊k·n/L⌋ (k = 1 … L−1, n = entries logged so far, 0-based); an age below
//!   the first cut gets AgeRank L, an age at or above cut k (and below cut k+1) gets L − k. With
//!   an empty log every group gets rank L (size decides, as in FAB).
//! * Levels adapt every `period` write requests by hill-climbing on group misses (writes that
//!   create a group): the first period steps down (L ÷ 2, towards FAB); afterwards L keeps its
//!   direction when misses fell against the previous period and reverses otherwise; steps are
//!   ×2 / ÷2, bounded to [1, hit_log + 1].
//! * Weight classes: 18 LRU lists with upper bounds 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128,
//!   192, 256, 384, 512, 768, 1024 sectors for 1024-sector blocks (scaled ⌈b·S/1024⌉ to S
//!   sectors per block, duplicates merged); full groups (weight = S) sit in a list of their own.
//!   A written group moves to the newest end of its list; victim candidates are the oldest group
//!   of each list only.
//! * Victim: (1) the oldest full group; (2) the oldest candidate older than `age_threshold`;
//!   (3) the candidate with the smallest AgeRank / weight (ties: the older one). `hitstat-adj`
//!   (§4.4.2) uses max(weight, padding threshold in sectors) as the weight in (3), the threshold
//!   being the padding policy's current one (no substitution when the policy never pads).
//! * Victims are flushed whole in ascending offset; pad-or-log per the padding policy (default
//!   `model`). Reads never insert and do not change recency.

use super::groups::{grow, insert_ordered, GroupPolicy, GroupStore, Written};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink};
use crate::error::Result;
use crate::units::{Lpn, SectorMask};

/// Class upper bounds for 1024-sector blocks (seed 000 §4.2).
const BASE_BOUNDS: [u64; 18] = [
    2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
];

crate::params! {
    /// HitStat's parameters (`[buffer.hitstat]`, `[buffer.hitstat-adj]`).
    pub struct Params {
        /// Length of the hit log (ages at group hits), 1..=1048576.
        hit_log: u64 = 64,
        /// Initial number of AgeRank levels (1 ..= hit_log + 1); the run adapts them (the
        /// gauge `buffer.hitstat.levels`).
        initial_levels: u32 = 32,
        /// Write requests between adaptations of the levels.
        period: u64 = 4096,
        /// A group older than this many write requests is flushed first.
        age_threshold: u64 = 150_000,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> crate::error::Result<()> {
        use crate::error::SimError;
        if self.hit_log == 0 || self.hit_log > 1 << 20 {
            return Err(SimError::config(
                format!("{table}.hit_log"),
                format!("{} must be in 1..=1048576", self.hit_log),
            ));
        }
        if self.initial_levels == 0 || self.initial_levels as u64 > self.hit_log + 1 {
            return Err(SimError::config(
                format!("{table}.initial_levels"),
                format!(
                    "{} must be in 1..={table}.hit_log + 1 ({})",
                    self.initial_levels,
                    self.hit_log + 1
                ),
            ));
        }
        if self.period == 0 {
            return Err(SimError::config(format!("{table}.period"), "must be ≥ 1"));
        }
        Ok(())
    }
}

/// HitStat settings: the parameters plus what the device and variant fix.
#[derive(Clone, Copy, Debug)]
pub struct HitStatParams {
    pub sectors_per_page: u32,
    pub hit_log: usize,
    pub levels: u32,
    pub period: u64,
    pub age_threshold: u64,
    pub adj: bool,
}

/// Weight-class upper bounds for blocks of `sectors` sectors.
pub fn class_bounds(sectors: u64) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(BASE_BOUNDS.len());
    for b in BASE_BOUNDS {
        let s = (b * sectors).div_ceil(1024).max(1);
        if v.last() != Some(&s) {
            v.push(s);
        }
    }
    v
}

/// Cut points of the Age Transformation Function from the (unsorted) logged ages.
pub fn age_cuts(log: &[u64], levels: u32) -> Vec<u64> {
    let mut sorted = log.to_vec();
    sorted.sort_unstable();
    let mut cuts = Vec::new();
    sorted_cuts(&sorted, levels, &mut cuts);
    cuts
}

/// The cut points from ages already in ascending order, into `cuts` (reused).
fn sorted_cuts(sorted: &[u64], levels: u32, cuts: &mut Vec<u64>) {
    cuts.clear();
    let n = sorted.len();
    if n > 0 {
        cuts.extend((1..levels as usize).map(|k| sorted[(k * n / levels as usize).min(n - 1)]));
    }
}

/// AgeRank of `age` given the cut points: L for the youngest interval down to 1 for the oldest.
pub fn age_rank(cuts: &[u64], levels: u32, age: u64) -> u32 {
    levels - cuts.partition_point(|&c| c <= age) as u32
}

pub struct HitStatBuffer {
    store: GroupStore,
    p: HitStatParams,
    sectors_per_block: u64,
    bounds: Vec<u64>,
    links: Links,
    /// One list per weight class, then the full-group list; newest at the head.
    lists: Vec<List>,
    /// List index per group slot.
    class: Vec<u8>,
    /// Last write request per group slot.
    req: Vec<u64>,
    now: u64,
    hit_log: Vec<u64>,
    /// The hit log's ages in ascending order.
    sorted_log: Vec<u64>,
    hit_pos: usize,
    cuts: Vec<u64>,
    cuts_dirty: bool,
    levels: u32,
    misses: u64,
    prev_misses: Option<u64>,
    going_up: bool,
}

impl HitStatBuffer {
    pub fn new(bp: BufferParams, p: HitStatParams) -> Self {
        let spb = bp.pages_per_block * p.sectors_per_page as u64;
        let bounds = class_bounds(spb);
        let n_lists = bounds.len() + 1;
        HitStatBuffer {
            store: GroupStore::new(bp),
            sectors_per_block: spb,
            bounds,
            links: Links::default(),
            lists: vec![List::default(); n_lists],
            class: Vec::new(),
            req: Vec::new(),
            now: 0,
            hit_log: Vec::with_capacity(p.hit_log),
            sorted_log: Vec::with_capacity(p.hit_log),
            hit_pos: 0,
            cuts: Vec::new(),
            cuts_dirty: false,
            levels: p.levels.clamp(1, p.hit_log as u32 + 1),
            misses: 0,
            prev_misses: None,
            going_up: false,
            p,
        }
    }

    /// Current number of AgeRank levels.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    fn list_of(&self, weight: u64) -> usize {
        if weight >= self.sectors_per_block {
            self.bounds.len()
        } else {
            self.bounds.partition_point(|&b| b < weight)
        }
    }

    fn log_hit(&mut self, age: u64) {
        if self.p.hit_log == 0 {
            return;
        }
        // Keep a sorted copy up to date incrementally (O(log) search + a short memmove) instead
        // of sorting the whole log at every victim choice.
        if self.hit_log.len() < self.p.hit_log {
            self.hit_log.push(age);
            let j = self.sorted_log.partition_point(|&x| x < age);
            self.sorted_log.insert(j, age);
        } else {
            // The oldest entry's value is replaced by `age`, which moves to its sorted place:
            // one shift of the entries between the two places.
            let old = std::mem::replace(&mut self.hit_log[self.hit_pos], age);
            replace_sorted(&mut self.sorted_log, old, age);
        }
        self.hit_pos += 1;
        if self.hit_pos == self.p.hit_log {
            self.hit_pos = 0;
        }
        self.cuts_dirty = true;
    }

    fn adapt(&mut self) {
        let m = self.misses;
        if let Some(prev) = self.prev_misses {
            if m >= prev {
                self.going_up = !self.going_up;
            }
        }
        let max = self.p.hit_log as u32 + 1;
        self.levels = if self.going_up {
            (self.levels * 2).min(max)
        } else {
            (self.levels / 2).max(1)
        };
        self.prev_misses = Some(m);
        self.misses = 0;
        self.cuts_dirty = true;
    }

    fn victim(&mut self, sink: &dyn FlushSink) -> Option<u32> {
        let full = *self.lists.last().unwrap();
        if full.tail != NIL {
            return Some(full.tail);
        }
        let n_classes = self.bounds.len();
        // (2) the oldest candidate beyond the age threshold.
        let oldest = self.lists[..n_classes]
            .iter()
            .filter(|l| l.tail != NIL)
            .map(|l| l.tail)
            .min_by_key(|&g| self.req[g as usize])?;
        if self.now - self.req[oldest as usize] > self.p.age_threshold {
            return Some(oldest);
        }
        // (3) smallest AgeRank / weight.
        if self.cuts_dirty {
            sorted_cuts(&self.sorted_log, self.levels, &mut self.cuts);
            self.cuts_dirty = false;
        }
        let floor = if self.p.adj {
            let ppb = self.store.ppb;
            self.store
                .padding()
                .threshold_pages(ppb, sink.view())
                .map_or(0.0, |t| t * self.p.sectors_per_page as f64)
        } else {
            0.0
        };
        let mut best: Option<(f64, u64, u32)> = None;
        for l in &self.lists[..n_classes] {
            let g = l.tail;
            if g == NIL {
                continue;
            }
            let age = self.now - self.req[g as usize];
            let w = (self.store.group(g).sectors as f64).max(floor);
            let cost = age_rank(&self.cuts, self.levels, age) as f64 / w;
            let better = match best {
                None => true,
                Some((c, a, _)) => cost < c || (cost == c && age > a),
            };
            if better {
                best = Some((cost, age, g));
            }
        }
        best.map(|b| b.2)
    }
}

impl GroupPolicy for HitStatBuffer {
    super::groups::store_in_field!();

    #[inline]
    fn request_begins(&mut self) {
        // A period = write requests (k−1)·period+1 … k·period; adapt before the next one.
        if self.p.period > 0 && self.now > 0 && self.now.is_multiple_of(self.p.period) {
            self.adapt();
        }
        self.now += 1;
    }

    #[inline]
    fn written(&mut self, _lpn: Lpn, _mask: SectorMask, w: Written, _sink: &dyn FlushSink) {
        let g = w.group;
        if w.new_group {
            self.misses += 1;
        } else {
            // A group hit: log its age (once per request) and take it out of its old class.
            let last = self.req[g as usize];
            if last != self.now {
                self.log_hit(self.now - last);
            }
            let c = self.class[g as usize] as usize;
            self.links.remove(&mut self.lists[c], g);
        }
        grow(&mut self.req, g);
        grow(&mut self.class, g);
        self.req[g as usize] = self.now;
        let c = self.list_of(self.store.group(g).sectors as u64);
        self.class[g as usize] = c as u8;
        self.links.push_front(&mut self.lists[c], g);
    }

    fn drop_page(&mut self, lpn: Lpn) {
        let Some(g) = self.store.page_group(lpn) else {
            return;
        };
        let c = self.class[g as usize] as usize;
        self.links.remove(&mut self.lists[c], g);
        let (_, empty) = self.store.trim(lpn).expect("page is buffered");
        if !empty {
            let c = self.list_of(self.store.group(g).sectors as u64);
            self.class[g as usize] = c as u8;
            let req = &self.req;
            insert_ordered(&mut self.links, &mut self.lists[c], g, |i| req[i as usize]);
        }
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let Some(g) = self.victim(sink) else {
            return Ok(false);
        };
        let c = self.class[g as usize] as usize;
        self.links.remove(&mut self.lists[c], g);
        self.store.flush_group(g, sink)?;
        Ok(true)
    }

    fn more_gauges(&self, gauges: &mut Vec<(&'static str, f64)>) {
        gauges.push(("buffer.hitstat.levels", self.levels as f64));
    }
}

/// HitStat's parameters from `[buffer.<name>]` and the device's page size.
fn hitstat_params(cfg: &crate::config::Config, q: Params, adj: bool) -> HitStatParams {
    HitStatParams {
        sectors_per_page: (cfg.device.page_bytes.0 / crate::units::SECTOR_BYTES) as u32,
        hit_log: q.hit_log as usize,
        levels: q.initial_levels,
        period: q.period,
        age_threshold: q.age_threshold,
        adj,
    }
}

/// The registry entry of `hitstat`.
pub static HITSTAT: super::Entry = super::entry! {
    "hitstat", Params, super::GROUP_KEYS, padding "model",
    "HitStat (seed 000): victim = a full group, else a group older than the age threshold, else the smallest AgeRank/weight among the oldest group of each of 18 weight classes; AgeRank from the hit log, levels adapted to minimise group misses. Default padding: model.",
    |cfg, p, q| Ok(Box::new(HitStatBuffer::new(p, hitstat_params(cfg, q, false))))
};

/// The registry entry of `hitstat-adj`.
pub static HITSTAT_ADJ: super::Entry = super::entry! {
    "hitstat-adj", Params, super::GROUP_KEYS, padding "model",
    "HitStat(adj): HitStat with weights below the current padding threshold counted as the threshold (small cold groups leave earlier; the thesis's choice on FAST). Default padding: model.",
    |cfg, p, q| Ok(Box::new(HitStatBuffer::new(p, hitstat_params(cfg, q, true))))
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::FakeSink;
    use super::super::{HostPage, WriteBuffer};
    use super::*;
    use crate::padding::{FixedPadding, NoPadding, Padding};

    fn params(adj: bool) -> HitStatParams {
        HitStatParams {
            sectors_per_page: 1,
            hit_log: 64,
            levels: 32,
            period: 4096,
            age_threshold: 150_000,
            adj,
        }
    }

    fn hs(capacity: u64, p: HitStatParams, padding: Box<dyn Padding>) -> HitStatBuffer {
        HitStatBuffer::new(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: 8,
                padding,
            },
            p,
        )
    }

    /// One host write request of whole (1-sector) pages.
    fn req(b: &mut HitStatBuffer, s: &mut FakeSink, lpns: &[u64]) {
        b.begin_request();
        for &l in lpns {
            b.write(HostPage::new(l, 1, 1, 0), s).unwrap();
        }
    }

    #[test]
    fn fig11_age_transformation() {
        // Seed 000 Fig 11: 32 sorted hit-log ages, Levels = 9 → 8 cut points, 9 age intervals;
        // the youngest interval gets AgeRank 9, the oldest AgeRank 1.
        let log: Vec<u64> = (1..=32).rev().map(|i| i * 10).collect();
        let cuts = age_cuts(&log, 9);
        assert_eq!(cuts, vec![40, 80, 110, 150, 180, 220, 250, 290]);
        let ranks: Vec<u32> = [0, 39, 40, 79, 80, 110, 150, 200, 250, 289, 290, 10_000]
            .iter()
            .map(|&a| age_rank(&cuts, 9, a))
            .collect();
        assert_eq!(ranks, vec![9, 9, 8, 8, 7, 6, 5, 4, 2, 2, 1, 1]);
        // Levels = 1: every age has rank 1 (FAB-like).
        assert!(age_cuts(&log, 1).is_empty());
        assert_eq!(age_rank(&[], 1, 5), 1);
    }

    #[test]
    fn weight_classes() {
        assert_eq!(class_bounds(1024), BASE_BOUNDS.to_vec());
        assert_eq!(class_bounds(8), vec![1, 2, 3, 4, 6, 8]);
        assert_eq!(class_bounds(256)[..4], [1, 2, 3, 4]);
        let b = HitStatBuffer::new(
            BufferParams {
                capacity_pages: 8,
                pages_per_block: 128,
                padding: Box::new(NoPadding),
            },
            HitStatParams {
                sectors_per_page: 8,
                ..params(false)
            },
        );
        let lists: Vec<usize> = [1, 2, 3, 4, 5, 9, 1023, 1024]
            .iter()
            .map(|&w| b.list_of(w))
            .collect();
        assert_eq!(lists, vec![0, 0, 1, 1, 2, 4, 17, 18]);
    }

    #[test]
    fn full_group_first() {
        let mut b = hs(13, params(false), Box::new(NoPadding));
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[0, 1, 2, 3, 4, 5, 6, 7]); // LBN 0 full
        req(&mut b, &mut s, &[8]);
        req(&mut b, &mut s, &[16, 17, 18]);
        req(&mut b, &mut s, &[24]);
        assert!(s.flushed.is_empty());
        req(&mut b, &mut s, &[32]);
        assert_eq!(s.lbns(), vec![0]);
        assert_eq!(s.flushed[0].offsets, (0..8).collect::<Vec<u32>>());
    }

    #[test]
    fn age_threshold_then_cost_benefit() {
        for (threshold, want) in [(5, 1), (1000, 2)] {
            let mut b = hs(
                5,
                HitStatParams {
                    age_threshold: threshold,
                    ..params(false)
                },
                Box::new(NoPadding),
            );
            let mut s = FakeSink::default();
            req(&mut b, &mut s, &[8]); // LBN 1: weight 1, request 1
            for _ in 0..8 {
                b.begin_request();
            }
            req(&mut b, &mut s, &[16, 17, 18, 19]); // LBN 2: weight 4, request 10
                                                    // Empty hit log: every rank = Levels, so cost-benefit takes the heaviest group.
            req(&mut b, &mut s, &[24]);
            assert_eq!(s.lbns(), vec![want], "threshold {threshold}");
        }
    }

    #[test]
    fn age_rank_beats_weight() {
        // Hits at age 1 make the log all 1s: cut points are all 1, so a group written in the
        // current request (age 0) has rank L and any older one rank 1.
        let mut b = hs(6, params(false), Box::new(NoPadding));
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[8]); // LBN 1
        req(&mut b, &mut s, &[9]); // hit at age 1
        req(&mut b, &mut s, &[16]); // LBN 2: 1 page
        req(&mut b, &mut s, &[17]); // hit at age 1
        assert_eq!(b.hit_log, vec![1, 1]);
        // LBN 3 gets 2 pages in the current request: age 0, rank 32, cost 16.
        // LBN 1 (age 3, weight 2) and LBN 2 (age 1, weight 2) have rank 1, cost 0.5; older wins.
        b.begin_request();
        b.write(HostPage::new(24, 1, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(25, 1, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(26, 1, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1]);
    }

    #[test]
    fn adj_uses_padding_threshold_as_weight_floor() {
        // LBN 1: weight 1, old; LBN 2: weight 3, young. Ranks all equal (empty log).
        for (adj, want) in [(false, 2), (true, 1)] {
            let mut b = hs(4, params(adj), Box::new(FixedPadding { threshold: 0.5 }));
            let mut s = FakeSink::default();
            req(&mut b, &mut s, &[8]);
            req(&mut b, &mut s, &[16, 17, 18]);
            req(&mut b, &mut s, &[24]);
            // Plain: cost L/1 vs L/3 → LBN 2. Adj: both weigh 4 pages → tie → older LBN 1.
            assert_eq!(s.lbns(), vec![want], "adj {adj}");
        }
    }

    #[test]
    fn levels_hill_climb() {
        let mut b = hs(
            64,
            HitStatParams {
                period: 2,
                ..params(false)
            },
            Box::new(NoPadding),
        );
        let mut s = FakeSink::default();
        // Period 1: 3 group misses.
        req(&mut b, &mut s, &[0, 8]);
        req(&mut b, &mut s, &[16]);
        assert_eq!(b.levels(), 32);
        // Period 2: 1 miss. The first adaptation steps down.
        req(&mut b, &mut s, &[24]);
        assert_eq!(b.levels(), 16);
        req(&mut b, &mut s, &[25]);
        // Period 3: misses fell (1 < 3) → keep going down; 3 misses now.
        req(&mut b, &mut s, &[32, 40]);
        assert_eq!(b.levels(), 8);
        req(&mut b, &mut s, &[48]);
        // Period 4: misses rose (3 ≥ 1) → reverse, up.
        req(&mut b, &mut s, &[1]);
        assert_eq!(b.levels(), 16);
        req(&mut b, &mut s, &[2]);
        // Period 5: 0 misses < 3 → keep going up, bounded by hit_log + 1 = 65.
        req(&mut b, &mut s, &[3]);
        assert_eq!(b.levels(), 32);
        // Period 5 (requests 9, 10): 0 misses, equal to period 4 → reverse, down.
        b.begin_request();
        b.begin_request();
        assert_eq!(b.levels(), 16, "equal misses reverse");
    }

    #[test]
    fn hit_logged_once_per_request_and_trim() {
        let mut b = hs(8, params(false), Box::new(NoPadding));
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[0, 1]);
        req(&mut b, &mut s, &[2, 3]);
        req(&mut b, &mut s, &[0]);
        assert_eq!(b.hit_log, vec![1, 1]);
        b.trim(3);
        b.trim(3);
        assert_eq!(b.pages(), 3);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0]);
        assert_eq!(s.flushed[0].offsets, vec![0, 1, 2]);
        assert_eq!(b.pages(), 0);
    }

    #[test]
    fn model_padding_read_live_from_the_view() {
        // hitstat-adj with the Padding Model (FAST start: 0.33 of an 8-page block = 2.64 pages).
        let model = crate::padding::ModelPadding {
            erase_us: 1500.0,
            program_us: 800.0,
            initial: 0.33,
        };
        let mut b = hs(12, params(true), Box::new(model));
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[8, 9, 10]); // LBN 1: 3 pages ≥ 2.64 → padded
        req(&mut b, &mut s, &[16, 17]); // LBN 2: 2 pages → logged
        b.flush_all(&mut s).unwrap();
        let got: Vec<(u64, bool)> = s.flushed.iter().map(|f| (f.lbn, f.padded)).collect();
        assert_eq!(got, vec![(1, true), (2, false)]);
        // FAST statistics R_DB = 3, R_LB = U_LB = 1 → B_w = 8 / 4 = 2 pages: both padded.
        s.view.stats = vec![("r_db", 3.0), ("r_lb", 1.0), ("u_lb", 1.0)];
        s.flushed.clear();
        req(&mut b, &mut s, &[8, 9, 10]);
        req(&mut b, &mut s, &[16, 17]);
        b.flush_all(&mut s).unwrap();
        let got: Vec<(u64, bool)> = s.flushed.iter().map(|f| (f.lbn, f.padded)).collect();
        assert_eq!(got, vec![(1, true), (2, true)]);
    }
}

/// In the sorted `s`, replace one entry equal to `old` by `new`, keeping `s` sorted: one shift
/// of the entries between the two places (not a removal and an insertion, two shifts of the tail).
fn replace_sorted(s: &mut [u64], old: u64, new: u64) {
    let i = s.partition_point(|&x| x < old);
    debug_assert_eq!(s[i], old);
    if new >= old {
        let k = s[i + 1..].partition_point(|&x| x < new);
        s.copy_within(i + 1..i + 1 + k, i);
        s[i + k] = new;
    } else {
        let k = s[..i].partition_point(|&x| x < new);
        s.copy_within(k..i, k + 1);
        s[k] = new;
    }
}

#[cfg(test)]
mod sorted_log_tests {
    use super::*;

    #[test]
    fn incremental_sorted_log_matches_sorting() {
        // The incrementally sorted copy gives the same cut points as sorting the circular log.
        let mut log: Vec<u64> = Vec::new();
        let mut sorted: Vec<u64> = Vec::new();
        let (cap, mut pos, mut x) = (16usize, 0usize, 12345u64);
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let age = (x >> 33) % 1000;
            // Few distinct ages: many equal entries.
            let age = if age % 3 == 0 { age % 7 } else { age };
            if log.len() < cap {
                log.push(age);
                let j = sorted.partition_point(|&v| v < age);
                sorted.insert(j, age);
            } else {
                let old = std::mem::replace(&mut log[pos], age);
                replace_sorted(&mut sorted, old, age);
            }
            pos = (pos + 1) % cap;
            let mut want = log.clone();
            want.sort_unstable();
            assert_eq!(sorted, want);
            let mut cuts = Vec::new();
            sorted_cuts(&sorted, 5, &mut cuts);
            assert_eq!(cuts, age_cuts(&log, 5));
        }
    }
}
