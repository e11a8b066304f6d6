//! The statistics seeds 000 and 003 reason with ([`profile`]), in one streaming pass:
//!
//! - seed 000 Table 4: write requests split into sequential and random by the ±10-request rule
//!   (a write is sequential if it is contiguous with any of the `seq_window` write requests
//!   before or after it: its start is another's end, or its end another's start), and into first
//!   writes and updates (an update starts at a sector written before); their counts and bytes; and
//!   how often each 512-byte sector up to the trace's largest offset was written, in the table's
//!   buckets;
//! - seed 003 Fig 1: written pages in classes FS, FL, IS and IL (frequently or infrequently
//!   updated × short or long re-use distance), their shares and mean writes per page;
//! - the distribution of re-use distances between writes of a page (distinct pages written in
//!   between, the seed's definition), and the working set over time.
//!
//! Cost: sector counts come from a sort of the write intervals' ends, so they do not grow with
//! request sizes; page statistics do (one step per page written), so a request may cover at most
//! [`MAX_REQUEST_PAGES`] pages.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::TraceOptions;
use crate::error::{Result, SimError};
use crate::request::Op;

const SECTOR_BYTES: u64 = 512;
/// Largest request the page statistics walk (4 Gi pages of 4 KiB = 16 TiB would never finish).
pub const MAX_REQUEST_PAGES: u64 = 1 << 24;
/// Upper bounds of seed 000 Table 4's write-count buckets (the last is open).
const SECTOR_BUCKETS: [u64; 6] = [0, 100, 1_000, 10_000, 30_000, u64::MAX];

/// What [`profile`] measures with, and its thresholds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileOptions {
    /// Page size for the page statistics.
    pub page_bytes: u64,
    /// Write requests before and after a write that make it sequential when contiguous
    /// (seed 000 §5.1: 10).
    pub seq_window: usize,
    /// A written page is *frequently* updated when written at least this often. None: more
    /// often than the mean over all written pages (as HWB weighs F_self against F_avg).
    pub frequent_writes: Option<u64>,
    /// A page's re-use distance is *short* when its mean over the page's writes is below this
    /// many pages: an LRU buffer of this many pages would have caught the re-writes. Default
    /// 8192 pages (32 MiB of 4 KiB pages, seed 003's buffer).
    pub short_distance_pages: u64,
    /// Write requests per working-set window. 0: the trace in 100 windows.
    pub window_requests: u64,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            page_bytes: 4096,
            seq_window: 10,
            frequent_writes: None,
            short_distance_pages: 8192,
            window_requests: 0,
        }
    }
}

/// Seed 000 Table 4's buckets of per-sector write counts.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SectorWriteCounts {
    #[serde(rename = "0")]
    pub never: u64,
    #[serde(rename = "1-100")]
    pub up_to_100: u64,
    #[serde(rename = "101-1000")]
    pub up_to_1000: u64,
    #[serde(rename = "1001-10000")]
    pub up_to_10000: u64,
    #[serde(rename = "10001-30000")]
    pub up_to_30000: u64,
    #[serde(rename = ">30000")]
    pub more: u64,
}

/// Written pages of one class of seed 003 Fig 1.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PageClass {
    pub pages: u64,
    /// Share of all written pages.
    pub share: f64,
    /// Mean writes per page of the class.
    pub writes_mean: f64,
}

/// The four classes: frequently / infrequently updated × short / long re-use distance.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PageClasses {
    pub fs: PageClass,
    pub fl: PageClass,
    pub is: PageClass,
    pub il: PageClass,
    /// The thresholds used: writes for "frequent", mean distance (pages) for "short".
    pub frequent_writes: u64,
    pub short_distance_pages: u64,
}

/// One working-set window: write requests `first..=last` (1-based), distinct pages written.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Window {
    pub last_write_request: u64,
    pub distinct_pages: u64,
}

/// A trace's profile (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Profile {
    pub format: String,
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub write_bytes: u64,
    /// Share of write requests that are sequential by the ±`seq_window` rule.
    pub seq_write_fraction: f64,
    /// Share of write requests whose start sector was never written before.
    pub first_write_fraction: f64,
    pub seq_write_mean_bytes: f64,
    pub random_write_mean_bytes: f64,
    pub seq_first_writes: u64,
    pub random_first_writes: u64,
    pub seq_updates: u64,
    pub random_updates: u64,
    pub seq_first_write_bytes: u64,
    pub random_first_write_bytes: u64,
    pub seq_update_bytes: u64,
    pub random_update_bytes: u64,
    /// 512-byte sectors up to the largest end of any request, by how often they were written.
    pub sector_write_counts: SectorWriteCounts,
    /// Distinct pages written and page writes.
    pub written_pages: u64,
    pub page_writes: u64,
    pub page_classes: PageClasses,
    /// Re-use distances of page re-writes: `[upper, count]`, distances `< upper`, upper =
    /// 1, 2, 4, … (powers of two); first writes have none.
    pub reuse_distance: Vec<(u64, u64)>,
    pub working_set: Vec<Window>,
}

/// Distinct pages written between two writes of a page: the classic stack distance with a
/// Fenwick tree over write positions, holding a 1 at each page's latest write.
struct StackDistance {
    tree: Vec<u32>,
    /// Whether each position is some page's latest write (to rebuild a larger tree).
    latest: Vec<bool>,
    live: u64,
}

impl StackDistance {
    fn new() -> Self {
        StackDistance {
            tree: vec![0; 1 << 16],
            latest: Vec::with_capacity(1 << 16),
            live: 0,
        }
    }
    fn add(&mut self, pos: usize, delta: i32) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }
    /// Latest writes at positions < `pos`.
    fn before(&self, pos: usize) -> u64 {
        let (mut i, mut n) = (pos, 0u64);
        while i > 0 {
            n += self.tree[i] as u64;
            i &= i - 1;
        }
        n
    }
    /// The next write, of a page last written at `prev` (None: first write); returns its
    /// distance (pages written since, each counted once).
    fn write(&mut self, prev: Option<usize>) -> Option<u64> {
        let pos = self.latest.len();
        if pos + 1 >= self.tree.len() {
            self.grow();
        }
        let d = prev.map(|p| {
            let d = self.live - self.before(p + 1);
            self.latest[p] = false;
            self.add(p, -1);
            d
        });
        if prev.is_none() {
            self.live += 1;
        }
        self.latest.push(true);
        self.add(pos, 1);
        d
    }
    /// Double the tree, rebuilt from the flags in linear time.
    fn grow(&mut self) {
        let n = self.tree.len() * 2;
        let mut tree = vec![0u32; n];
        for (p, &l) in self.latest.iter().enumerate() {
            tree[p + 1] = l as u32;
        }
        for i in 1..n {
            let j = i + (i & i.wrapping_neg());
            if j < n {
                tree[j] += tree[i];
            }
        }
        self.tree = tree;
    }
}

/// Per written page: writes, position of the latest write, sum of re-use distances.
#[derive(Clone, Copy)]
struct PageStat {
    writes: u64,
    last: usize,
    distance_sum: u64,
    window: u64,
}

/// Sequential-or-not of the last `seq_window` writes, settled once they leave the window.
struct Pending {
    start: u64,
    end: u64,
    bytes: u64,
    first: bool,
    seq: bool,
}

#[derive(Default)]
struct Totals {
    n: [[u64; 2]; 2],
    bytes: [[u64; 2]; 2],
}

impl Totals {
    /// Count a settled write (index 0 = sequential, 1 = random; 0 = first write, 1 = update).
    fn settle(&mut self, w: &Pending) {
        let (s, u) = (!w.seq as usize, !w.first as usize);
        self.n[s][u] += 1;
        self.bytes[s][u] += w.bytes;
    }
}

/// Sectors written so far: a bit per sector, in words of 64 sectors found by hashing.
#[derive(Default)]
struct Written {
    words: FxHashMap<u64, u64>,
}

impl Written {
    fn contains(&self, s: u64) -> bool {
        self.words
            .get(&(s >> 6))
            .is_some_and(|w| w >> (s & 63) & 1 == 1)
    }
    /// Sectors `first..end`.
    fn insert(&mut self, first: u64, end: u64) {
        let mut s = first;
        while s < end {
            let (word, bit) = (s >> 6, s & 63);
            let n = (64 - bit).min(end - s);
            let ones = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << bit
            };
            *self.words.entry(word).or_insert(0) |= ones;
            s += n;
        }
    }
}

/// Stream the trace once and compute its [`Profile`].
pub fn profile(path: &Path, trace: &TraceOptions, opts: &ProfileOptions) -> Result<Profile> {
    if opts.page_bytes == 0 {
        return Err(SimError::config("page_bytes", "must be at least 1"));
    }
    if opts.frequent_writes == Some(0) {
        return Err(SimError::config("frequent_writes", "must be at least 1"));
    }
    let mut rd = super::open(path, trace)?;
    let mut p = Profile {
        format: rd.format().name().to_string(),
        ..Default::default()
    };
    let window = opts.seq_window;
    let mut pending: std::collections::VecDeque<Pending> = Default::default();
    let mut totals = Totals::default();
    let mut written = Written::default();
    // Interval ends, 2·sector + (1 for an end): sorted, they give every sector's write count.
    let mut ends: Vec<u64> = Vec::new();
    let mut max_end_sector = 0u64;
    let mut pages: FxHashMap<u64, PageStat> = FxHashMap::default();
    let mut stack = StackDistance::new();
    let mut reuse: Vec<u64> = Vec::new();
    // Windows of write requests for the working set; sized once the trace's length is known
    // when not given, so a first pass counts its writes.
    let per_window = match opts.window_requests {
        0 => {
            let writes = super::open(path, trace)?
                .filter(|r| matches!(r, Ok(r) if r.op == Op::Write))
                .count() as u64;
            writes.div_ceil(100).max(1)
        }
        n => n,
    };
    let mut window_pages = 0u64;
    for r in &mut rd {
        let r = r?;
        p.requests += 1;
        let end_bytes = r.offset_bytes.saturating_add(r.len_bytes);
        max_end_sector = max_end_sector.max(end_bytes.div_ceil(SECTOR_BYTES));
        match r.op {
            Op::Read => p.read_requests += 1,
            Op::Trim => p.trim_requests += 1,
            Op::Write => {
                p.write_requests += 1;
                p.write_bytes = p.write_bytes.saturating_add(r.len_bytes);
                let start = r.offset_bytes / SECTOR_BYTES;
                let end = end_bytes.div_ceil(SECTOR_BYTES);
                let mut w = Pending {
                    start,
                    end,
                    bytes: r.len_bytes,
                    first: !written.contains(start),
                    seq: false,
                };
                for q in pending.iter_mut() {
                    if q.end == w.start || w.end == q.start {
                        q.seq = true;
                        w.seq = true;
                    }
                }
                if pending.len() == window {
                    if let Some(old) = pending.pop_front() {
                        totals.settle(&old);
                    }
                }
                if window > 0 {
                    pending.push_back(w);
                } else {
                    totals.settle(&w);
                }
                if end > start {
                    let (first, last) = (
                        r.offset_bytes / opts.page_bytes,
                        (end_bytes - 1) / opts.page_bytes,
                    );
                    if last - first >= MAX_REQUEST_PAGES {
                        return Err(SimError::Invalid(format!(
                            "{}: line {}: a write of {} B covers more than {MAX_REQUEST_PAGES} pages, \
                             more than the profile walks page by page",
                            path.display(),
                            rd.line(),
                            r.len_bytes
                        )));
                    }
                    written.insert(start, end);
                    ends.push(start << 1);
                    ends.push(end << 1 | 1);
                    let win = (p.write_requests - 1) / per_window;
                    if win as usize >= p.working_set.len() {
                        p.working_set.push(Window::default());
                        window_pages = 0;
                    }
                    for page in first..=last {
                        let s = pages.entry(page).or_insert(PageStat {
                            writes: 0,
                            last: usize::MAX,
                            distance_sum: 0,
                            window: u64::MAX,
                        });
                        let prev = (s.writes > 0).then_some(s.last);
                        if let Some(d) = stack.write(prev) {
                            s.distance_sum += d;
                            let b = (u64::BITS - d.leading_zeros()) as usize;
                            if b >= reuse.len() {
                                reuse.resize(b + 1, 0);
                            }
                            reuse[b] += 1;
                        }
                        s.writes += 1;
                        s.last = stack.latest.len() - 1;
                        if s.window != win {
                            s.window = win;
                            window_pages += 1;
                        }
                    }
                    p.page_writes += last - first + 1;
                    if let Some(w) = p.working_set.last_mut() {
                        w.last_write_request = p.write_requests;
                        w.distinct_pages = window_pages;
                    }
                }
            }
        }
    }
    rd.check_recognised(trace.format.is_some())?;
    for w in pending.drain(..) {
        totals.settle(&w);
    }
    let (n, b) = (&totals.n, &totals.bytes);
    p.seq_first_writes = n[0][0];
    p.seq_updates = n[0][1];
    p.random_first_writes = n[1][0];
    p.random_updates = n[1][1];
    p.seq_first_write_bytes = b[0][0];
    p.seq_update_bytes = b[0][1];
    p.random_first_write_bytes = b[1][0];
    p.random_update_bytes = b[1][1];
    let frac = |a: u64, t: u64| if t > 0 { a as f64 / t as f64 } else { 0.0 };
    let (seq_n, rnd_n) = (n[0][0] + n[0][1], n[1][0] + n[1][1]);
    p.seq_write_fraction = frac(seq_n, p.write_requests);
    p.first_write_fraction = frac(n[0][0] + n[1][0], p.write_requests);
    p.seq_write_mean_bytes = frac(b[0][0] + b[0][1], seq_n);
    p.random_write_mean_bytes = frac(b[1][0] + b[1][1], rnd_n);
    p.sector_write_counts = sector_counts(ends, max_end_sector);
    p.written_pages = pages.len() as u64;
    p.page_classes = classes(&pages, p.page_writes, opts);
    p.reuse_distance = reuse
        .iter()
        .enumerate()
        .map(|(b, &c)| (1u64 << b, c))
        .collect();
    Ok(p)
}

/// Sweep the sorted interval ends: between two consecutive ones, every sector is covered by
/// the same number of writes.
fn sector_counts(mut ends: Vec<u64>, max_end_sector: u64) -> SectorWriteCounts {
    ends.sort_unstable();
    let mut buckets = [0u64; SECTOR_BUCKETS.len()];
    let (mut depth, mut at, mut covered) = (0u64, 0u64, 0u64);
    for e in ends {
        let pos = e >> 1;
        if depth > 0 && pos > at {
            let i = SECTOR_BUCKETS
                .iter()
                .position(|&hi| depth <= hi)
                .unwrap_or(SECTOR_BUCKETS.len() - 1);
            buckets[i] += pos - at;
            covered += pos - at;
        }
        at = pos;
        if e & 1 == 1 {
            depth -= 1;
        } else {
            depth += 1;
        }
    }
    let [_, up_to_100, up_to_1000, up_to_10000, up_to_30000, more] = buckets;
    SectorWriteCounts {
        never: max_end_sector - covered,
        up_to_100,
        up_to_1000,
        up_to_10000,
        up_to_30000,
        more,
    }
}

fn classes(
    pages: &FxHashMap<u64, PageStat>,
    page_writes: u64,
    opts: &ProfileOptions,
) -> PageClasses {
    let n = pages.len() as u64;
    // Default: more writes than the mean (the smallest whole number above it).
    let frequent = opts
        .frequent_writes
        .unwrap_or_else(|| page_writes.checked_div(n).map_or(1, |m| m + 1));
    let short = opts.short_distance_pages;
    let mut c = PageClasses {
        frequent_writes: frequent,
        short_distance_pages: short,
        ..Default::default()
    };
    let mut writes = [0u64; 4];
    for s in pages.values() {
        // A page written once has no re-use distance: long.
        let is_short = s.writes > 1 && s.distance_sum < short * (s.writes - 1);
        let i = match (s.writes >= frequent, is_short) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        let class = [&mut c.fs, &mut c.fl, &mut c.is, &mut c.il];
        class[i].pages += 1;
        writes[i] += s.writes;
    }
    for (class, w) in [&mut c.fs, &mut c.fl, &mut c.is, &mut c.il]
        .into_iter()
        .zip(writes)
    {
        class.share = if n > 0 {
            class.pages as f64 / n as f64
        } else {
            0.0
        };
        class.writes_mean = if class.pages > 0 {
            w as f64 / class.pages as f64
        } else {
            0.0
        };
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_distance_counts_distinct_pages_between() {
        // Page writes a b c a b b d a: distances of the re-writes: a: {b, c} = 2; b: {c, a} = 2;
        // b again: 0; a: {b, d} = 2 (b once though written twice).
        let mut s = StackDistance::new();
        let mut last: FxHashMap<char, usize> = FxHashMap::default();
        let mut got = Vec::new();
        for (i, ch) in "abcabbda".chars().enumerate() {
            if let Some(d) = s.write(last.get(&ch).copied()) {
                got.push(d);
            }
            last.insert(ch, i);
        }
        assert_eq!(got, vec![2, 2, 0, 2]);
    }

    #[test]
    fn stack_distance_survives_growth() {
        // Two pages alternating across several doublings: every distance is 1.
        let mut s = StackDistance::new();
        let mut last = [None, None];
        for i in 0..300_000usize {
            let d = s.write(last[i % 2]);
            assert_eq!(d, if i < 2 { None } else { Some(1) });
            last[i % 2] = Some(i);
        }
    }

    #[test]
    fn written_sectors_across_words() {
        let mut w = Written::default();
        w.insert(60, 130);
        assert!(!w.contains(59) && w.contains(60) && w.contains(64) && w.contains(129));
        assert!(!w.contains(130));
        w.insert(0, 64);
        assert!(w.contains(0) && w.contains(63) && !w.contains(130));
    }

    #[test]
    fn sector_counts_sweep() {
        // Writes [0, 4), [2, 6), [2, 3) over 10 sectors: sector 2 three times, 3 twice, 0, 1,
        // 4, 5 once... in buckets: 0 written 4 (6..10), 1-100 written 6.
        let mut ends = Vec::new();
        for (s, e) in [(0u64, 4u64), (2, 6), (2, 3)] {
            ends.push(s << 1);
            ends.push(e << 1 | 1);
        }
        let b = sector_counts(ends, 10);
        assert_eq!((b.never, b.up_to_100, b.more), (4, 6, 0));
    }
}
