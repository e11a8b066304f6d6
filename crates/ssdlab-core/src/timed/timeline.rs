//! A die's or channel's timeline: its busy intervals, and the earliest gap that fits a new one.
//!
//! Under load a timeline holds thousands of intervals ahead of the present (GC's chains of copies
//! and erases reserve far ahead, later operations fill the gaps before them). They are kept in
//! chunks of at most [`CHUNK`] in time order, so that finding the gap is two binary searches and
//! filling it moves at most a chunk's intervals, not every later one.

/// Most intervals in one chunk; a chunk that grows past it splits in two.
const CHUNK: usize = 64;

/// A busy interval: start and end, µs.
type Interval = (f64, f64);

/// Busy intervals of one die or channel from the host's present on.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Disjoint and not adjoining, in time order, chunk after chunk. Those of the first chunk
    /// before `head` ended in the past; every chunk holds at least one from `head` on.
    chunks: Vec<Vec<Interval>>,
    /// The end of each chunk's last interval (the search for a chunk).
    ends: Vec<f64>,
    head: usize,
    /// At most the end of the first chunk's interval at `head` (exact after a prune): pruning
    /// before then has nothing to drop, and knowing it here spares reading the chunk.
    head_end: f64,
    /// Where the last search for a gap started (chunk, index).
    finger: (usize, usize),
    /// Emptied chunks, kept for reuse.
    spare: Vec<Vec<Interval>>,
    /// Total busy time ever reserved.
    pub busy_us: f64,
}

impl Timeline {
    /// Reserve `dur` µs at the earliest start ≥ `ready` that fits between reservations; returns
    /// the end. Nothing is reserved for `dur` = 0. `now` (≤ `ready`): no later call has an
    /// earlier ready time, so intervals that ended by then are history.
    #[inline(always)]
    pub fn reserve(&mut self, now: f64, ready: f64, dur: f64) -> f64 {
        if dur <= 0.0 {
            return ready;
        }
        self.reserve_busy(now, ready, dur)
    }

    /// [`Timeline::reserve`] of `dur` > 0.
    #[inline(never)]
    fn reserve_busy(&mut self, now: f64, ready: f64, dur: f64) -> f64 {
        self.busy_us += dur;
        // The last end is read from `ends`, which is nearer than the chunk.
        match self.ends.last_mut() {
            Some(last) if ready < *last => {
                self.prune(now);
                // Background work may be ready before `now`, and everything may have ended.
                if !self.chunks.is_empty() {
                    return self.fit(ready, dur);
                }
                self.push((ready, ready + dur));
            }
            Some(last) if ready == *last => {
                if let Some(iv) = self.chunks.last_mut().and_then(|c| c.last_mut()) {
                    iv.1 += dur;
                    *last = iv.1;
                }
            }
            _ => {
                self.prune(now);
                self.push((ready, ready + dur));
            }
        }
        ready + dur
    }

    /// Drop the intervals that ended by `now` (a chunk at a time once all of its have).
    #[inline]
    fn prune(&mut self, now: f64) {
        if now < self.head_end {
            return;
        }
        while let Some(first) = self.chunks.first() {
            if self.ends[0] > now {
                while first[self.head].1 <= now {
                    self.head += 1;
                }
                self.head_end = first[self.head].1;
                return;
            }
            self.drop_chunk(0);
        }
    }

    /// The first interval of chunk `c` that has not ended in the past.
    #[inline]
    fn low(&self, c: usize) -> usize {
        if c == 0 {
            self.head
        } else {
            0
        }
    }

    fn new_chunk(&mut self) -> Vec<Interval> {
        self.spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(CHUNK + 1))
    }

    fn drop_chunk(&mut self, c: usize) {
        let mut chunk = self.chunks.remove(c);
        self.ends.remove(c);
        if c == 0 {
            self.head = 0;
        }
        chunk.clear();
        self.spare.push(chunk);
    }

    /// Append `iv`, which starts after every interval.
    fn push(&mut self, iv: Interval) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => {
                chunk.push(iv);
                if let Some(e) = self.ends.last_mut() {
                    *e = iv.1;
                }
            }
            _ => {
                if self.chunks.is_empty() {
                    self.head_end = iv.1;
                }
                let mut chunk = self.new_chunk();
                chunk.push(iv);
                self.chunks.push(chunk);
                self.ends.push(iv.1);
            }
        }
    }

    /// Reserve in the first gap that fits, before the last reservation's end (which is after
    /// `ready`), merging with the neighbours it touches.
    fn fit(&mut self, ready: f64, dur: f64) -> f64 {
        // The first interval that ends after `ready`: interval `i` of chunk `c`.
        let (c, i) = self.locate(ready);
        self.finger = (c, i);
        if ready + dur <= self.chunks[c][i].0 {
            self.fit_before(c, i, ready, dur);
            return ready + dur;
        }
        // Every later start is the end of an interval: the first one followed by a gap that fits
        // (or the last), which the new interval extends.
        let (c, k) = self.gap_after(c, i, dur);
        let end = self.chunks[c][k].1 + dur;
        let next = match self.chunks[c].get(k + 1) {
            Some(n) => Some((c, k + 1, n.0)),
            None => self.chunks.get(c + 1).map(|n| (c + 1, 0, n[0].0)),
        };
        match next {
            Some((nc, ni, ns)) if ns == end => {
                let next_end = self.chunks[nc][ni].1;
                self.set_end(c, k, next_end);
                self.remove(nc, ni);
            }
            _ => self.set_end(c, k, end),
        }
        end
    }

    /// The first interval from interval `i` of chunk `c` on whose gap to the next fits `dur`,
    /// or the last interval.
    #[inline]
    fn gap_after(&self, mut c: usize, i: usize, dur: f64) -> (usize, usize) {
        let mut k = i;
        loop {
            let chunk = &self.chunks[c];
            if let Some(j) = first_gap(&chunk[k..], dur) {
                return (c, k + j);
            }
            let last = chunk.len() - 1;
            match self.chunks.get(c + 1) {
                Some(next) if chunk[last].1 + dur > next[0].0 => (c, k) = (c + 1, 0),
                _ => return (c, last),
            }
        }
    }

    /// Reserve `ready`..`ready + dur`, which ends by the start of interval `i` of chunk `c`
    /// (the first that ends after `ready`).
    fn fit_before(&mut self, c: usize, i: usize, ready: f64, dur: f64) {
        let end = ready + dur;
        let prev = if i > self.low(c) {
            Some((c, i - 1))
        } else if c > 0 {
            Some((c - 1, self.chunks[c - 1].len() - 1))
        } else {
            None
        };
        let joins_prev = prev.is_some_and(|(pc, pi)| self.chunks[pc][pi].1 == ready);
        let joins_next = self.chunks[c][i].0 == end;
        match (prev, joins_prev, joins_next) {
            (Some((pc, pi)), true, true) => {
                let next_end = self.chunks[c][i].1;
                self.set_end(pc, pi, next_end);
                self.remove(c, i);
            }
            (Some((pc, pi)), true, false) => self.set_end(pc, pi, end),
            (_, false, true) => self.chunks[c][i].0 = ready,
            _ => self.insert(c, i, (ready, end)),
        }
    }

    /// The first interval that ends after `ready` (one does): its chunk and index. Most searches
    /// land where the one before did (the operations of a request, a GC's copies), so they start
    /// there, rather than where data that has left the cache would have to be read.
    #[inline]
    fn locate(&self, ready: f64) -> (usize, usize) {
        let (last_c, last_i) = self.finger;
        let ends = &self.ends;
        let here = |c: usize| ends[c] > ready && (c == 0 || ends[c - 1] <= ready);
        let c = if last_c < ends.len() && here(last_c) {
            last_c
        } else {
            ends.partition_point(|&e| e <= ready)
        };
        let chunk = &self.chunks[c];
        let lo = self.low(c);
        if c != last_c {
            return (c, lo + chunk[lo..].partition_point(|&(_, e)| e <= ready));
        }
        // Ready before the chunk's first live interval ends (a read ready now, on the interval
        // running): no walk back to it.
        if chunk[lo].1 > ready {
            return (c, lo);
        }
        let mut i = last_i.clamp(lo, chunk.len() - 1);
        while i > lo && chunk[i - 1].1 > ready {
            i -= 1;
        }
        while chunk[i].1 <= ready {
            i += 1;
        }
        (c, i)
    }

    fn set_end(&mut self, c: usize, i: usize, end: f64) {
        let chunk = &mut self.chunks[c];
        chunk[i].1 = end;
        if i + 1 == chunk.len() {
            self.ends[c] = end;
        }
    }

    /// Remove interval `i` of chunk `c` (never the first chunk's only one).
    fn remove(&mut self, c: usize, i: usize) {
        let lo = self.low(c);
        let chunk = &mut self.chunks[c];
        chunk.remove(i);
        match chunk.last() {
            Some(last) if chunk.len() > lo => self.ends[c] = last.1,
            _ => self.drop_chunk(c),
        }
    }

    /// Insert `iv` before interval `i` of chunk `c` (after its last if `i` is its length).
    fn insert(&mut self, c: usize, i: usize, iv: Interval) {
        if self.chunks.is_empty() {
            return self.push(iv);
        }
        if c == 0 && i == self.head {
            self.head_end = iv.1;
        }
        let chunk = &mut self.chunks[c];
        chunk.insert(i, iv);
        if i + 1 == chunk.len() {
            self.ends[c] = iv.1;
        }
        if chunk.len() > CHUNK {
            self.split(c);
        }
    }

    /// Split chunk `c` in two halves (the past of the first chunk dropped first).
    fn split(&mut self, c: usize) {
        if c == 0 && self.head > 0 {
            self.chunks[0].drain(..self.head);
            self.head = 0;
            if self.chunks[0].len() <= CHUNK {
                return;
            }
        }
        let mut upper = self.new_chunk();
        let chunk = &mut self.chunks[c];
        upper.extend(chunk.drain(chunk.len() / 2..));
        if let (Some(l), Some(u)) = (chunk.last(), upper.last()) {
            self.ends[c] = l.1;
            self.ends.insert(c + 1, u.1);
        }
        self.chunks.insert(c + 1, upper);
    }

    /// The intervals from the present on, in time order.
    #[cfg(test)]
    fn intervals(&self) -> Vec<Interval> {
        let mut all = Vec::new();
        for (c, chunk) in self.chunks.iter().enumerate() {
            all.extend_from_slice(&chunk[self.low(c)..]);
        }
        all
    }
}

/// The first `k` whose gap to the next interval of `run` fits `dur` (end + `dur` ≤ next start).
#[inline]
fn first_gap(run: &[Interval], dur: f64) -> Option<usize> {
    run.windows(2).position(|w| w[0].1 + dur <= w[1].0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn earliest_gap_that_fits() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(0.0, 10.0, 5.0), 15.0);
        assert_eq!(t.reserve(0.0, 15.0, 5.0), 20.0); // adjoining: one interval
        assert_eq!(t.intervals(), [(10.0, 20.0)]);
        assert_eq!(t.reserve(0.0, 0.0, 4.0), 4.0); // fits before
        assert_eq!(t.reserve(0.0, 3.0, 8.0), 28.0); // 4..10 too short: after the last
        assert_eq!(t.intervals(), [(0.0, 4.0), (10.0, 28.0)]);
        assert_eq!(t.reserve(0.0, 4.0, 6.0), 10.0); // exactly the gap: all one interval
        assert_eq!(t.intervals(), [(0.0, 28.0)]);
        assert_eq!(t.busy_us, 28.0);
        assert_eq!(t.reserve(0.0, 40.0, 2.0), 42.0);
        assert_eq!(t.reserve(30.0, 30.0, 3.0), 33.0); // the past is forgotten
        assert_eq!(t.intervals(), [(30.0, 33.0), (40.0, 42.0)]);
        assert_eq!(t.reserve(30.0, 5.0, 0.0), 5.0);
    }

    /// The timeline as one plain vector, searched from its start: what [`Timeline`] must do.
    #[derive(Default)]
    struct Reference {
        busy: Vec<Interval>,
    }

    impl Reference {
        fn reserve(&mut self, now: f64, ready: f64, dur: f64) -> f64 {
            if dur <= 0.0 {
                return ready;
            }
            let last_end = self.busy.last().map(|b| b.1);
            if last_end == Some(ready) {
                self.busy.last_mut().unwrap().1 += dur;
                return ready + dur;
            }
            let past = self.busy.iter().take_while(|b| b.1 <= now).count();
            self.busy.drain(..past);
            let mut start = ready;
            let mut i = 0;
            while i < self.busy.len() {
                let (s, e) = self.busy[i];
                if e > ready {
                    if start + dur <= s {
                        break;
                    }
                    start = start.max(e);
                }
                i += 1;
            }
            let end = start + dur;
            self.busy.insert(i, (start, end));
            // Merge with the neighbours it touches.
            if i + 1 < self.busy.len() && self.busy[i + 1].0 == end {
                self.busy[i].1 = self.busy.remove(i + 1).1;
            }
            if i > 0 && self.busy[i - 1].1 == start {
                self.busy[i - 1].1 = self.busy.remove(i).1;
            }
            end
        }
    }

    fn check_chunks(t: &Timeline) {
        assert_eq!(t.chunks.len(), t.ends.len());
        for (c, chunk) in t.chunks.iter().enumerate() {
            assert!(chunk.len() > t.low(c) && chunk.len() <= CHUNK, "chunk {c}");
            assert_eq!(t.ends[c], chunk.last().unwrap().1);
        }
        if let Some(first) = t.chunks.first() {
            assert!(t.head_end <= first[t.head].1);
        }
        let all = t.intervals();
        assert!(all.windows(2).all(|w| w[0].1 < w[1].0), "{all:?}");
    }

    /// Random reservations in integer µs (so intervals often adjoin exactly), ready times spread
    /// far ahead of the present (thousands of gaps), some before it (background GC's): the
    /// returned ends and the intervals left are exactly the reference's.
    #[test]
    fn same_as_a_plain_vector() {
        let mut rng = Rng::new(26);
        // Ready times spread over, durations, most intervals at once of the reference (≥ this).
        for (spread, durs, intervals) in [
            (20.0, &[1.0, 2.0, 3.0][..], 4),
            (5_000.0, &[1.0, 2.0, 5.0, 8.0, 0.0][..], 5 * CHUNK),
            (30_000.0, &[1.0, 2.0, 4.0][..], 40 * CHUNK),
            (50_000.0, &[3.0, 60.0, 800.0, 1500.0][..], CHUNK),
        ] {
            let (mut t, mut r) = (Timeline::default(), Reference::default());
            let mut now = 0.0;
            let mut most = 0;
            for k in 0..60_000 {
                now += rng.below(3) as f64;
                let ready = if rng.below(5000) == 0 {
                    // Background work once the device has emptied: ready before the last end,
                    // which is already past.
                    if let Some(&(_, e)) = r.busy.last() {
                        now = now.max(e + rng.below(3) as f64);
                    }
                    now - 1.0 - rng.below(10) as f64
                } else if rng.below(50) == 0 {
                    now - rng.below(10) as f64
                } else {
                    now + (rng.f64() * spread).floor()
                };
                let dur = durs[rng.below(durs.len() as u64) as usize];
                assert_eq!(
                    t.reserve(now, ready, dur),
                    r.reserve(now, ready, dur),
                    "{k}"
                );
                if k % 97 == 0 {
                    assert_eq!(t.intervals(), r.busy, "{k}");
                    check_chunks(&t);
                }
                most = most.max(r.busy.len());
            }
            assert_eq!(t.intervals(), r.busy);
            assert!(most >= intervals, "{spread}: {most}");
        }
    }
}
