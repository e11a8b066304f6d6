//! A die's or channel's timeline: its busy intervals, and the earliest gap that fits a new one.

/// Busy intervals of one die or channel from the host's present on.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Disjoint and not adjoining, in time order; those before `head` ended in the past.
    busy: Vec<(f64, f64)>,
    head: usize,
    /// Total busy time ever reserved.
    pub busy_us: f64,
}

impl Timeline {
    /// Reserve `dur` µs at the earliest start ≥ `ready` that fits between reservations; returns
    /// the end. Nothing is reserved for `dur` = 0. `now` (≤ `ready`): no later call has an
    /// earlier ready time, so intervals that ended by then are history.
    #[inline]
    pub fn reserve(&mut self, now: f64, ready: f64, dur: f64) -> f64 {
        if dur <= 0.0 {
            return ready;
        }
        self.busy_us += dur;
        match self.busy.last_mut() {
            Some(last) if ready < last.1 => {
                self.prune(now);
                return self.fit(ready, dur);
            }
            Some(last) if ready == last.1 => last.1 += dur,
            _ => {
                self.prune(now);
                self.busy.push((ready, ready + dur));
            }
        }
        ready + dur
    }

    /// Drop the intervals that ended by `now` (amortised: moved out in bulk).
    #[inline]
    fn prune(&mut self, now: f64) {
        while self.head < self.busy.len() && self.busy[self.head].1 <= now {
            self.head += 1;
        }
        if self.head >= 32 && 2 * self.head >= self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
    }

    /// Reserve in the first gap that fits, before the last reservation's end, merging with the
    /// neighbours it touches.
    fn fit(&mut self, ready: f64, dur: f64) -> f64 {
        let live = &self.busy[self.head..];
        let mut i = self.head + live.partition_point(|&(_, e)| e <= ready);
        let mut start = ready;
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
            if start + dur <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        let end = start + dur;
        let joins_prev = i > self.head && self.busy[i - 1].1 == start;
        let joins_next = i < self.busy.len() && self.busy[i].0 == end;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
        end
    }

    #[cfg(test)]
    fn intervals(&self) -> &[(f64, f64)] {
        &self.busy[self.head..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
