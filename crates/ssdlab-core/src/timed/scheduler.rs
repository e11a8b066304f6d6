//! The scheduler seam between the host queue and the dies: it places each NAND operation on the
//! timelines of its die and channel. The default, `fifo`, serves every die and channel in the
//! order operations become ready: an operation takes the earliest free interval at or after its
//! ready time that fits it. A later policy (read priority, write suspension, GC preemption) is a
//! file implementing [`Scheduler`] plus a registry entry.

use crate::nand::OpKind;

/// A NAND operation placed on the device, with its drawn times.
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    pub kind: OpKind,
    pub die: u32,
    pub channel: u32,
    /// Array time on the die (read, program or erase).
    pub array_us: f64,
    /// Bus time of the page's data (reads and programs).
    pub transfer_us: f64,
    /// Bus time of the command and address cycles.
    pub command_us: f64,
}

/// Busy intervals of one die or channel from the host's present on (earlier ones are dropped).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Disjoint, in time order.
    busy: Vec<(f64, f64)>,
    /// Total busy time ever reserved.
    pub busy_us: f64,
}

impl Timeline {
    /// Reserve `dur` µs at the earliest start ≥ `ready` that fits between reservations; returns
    /// the end. Nothing is reserved for `dur` = 0.
    #[inline]
    pub fn reserve(&mut self, ready: f64, dur: f64) -> f64 {
        if dur <= 0.0 {
            return ready;
        }
        self.busy_us += dur;
        match self.busy.last_mut() {
            None => self.busy.push((ready, ready + dur)),
            Some(last) if ready >= last.1 => {
                if ready == last.1 {
                    last.1 += dur;
                } else {
                    self.busy.push((ready, ready + dur));
                }
            }
            Some(_) => return self.fit(ready, dur),
        }
        ready + dur
    }

    /// Reserve in the first gap that fits, before the last reservation's end.
    fn fit(&mut self, ready: f64, dur: f64) -> f64 {
        let mut start = ready;
        let mut i = self.busy.partition_point(|&(_, e)| e <= ready);
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
            if start + dur <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        self.busy.insert(i, (start, start + dur));
        start + dur
    }

    /// Forget intervals that ended by `now` (no operation will be ready before it).
    pub fn forget_before(&mut self, now: f64) {
        let k = self.busy.partition_point(|&(_, e)| e <= now);
        if k > 0 {
            self.busy.drain(..k);
        }
    }
}

/// Every die's and channel's timeline.
#[derive(Clone, Debug)]
pub struct Resources {
    pub dies: Vec<Timeline>,
    pub channels: Vec<Timeline>,
}

impl Resources {
    pub fn new(dies: usize, channels: usize) -> Resources {
        Resources {
            dies: vec![Timeline::default(); dies],
            channels: vec![Timeline::default(); channels],
        }
    }

    /// The host issued a request at `now`: intervals that ended before it are history.
    pub fn forget_before(&mut self, now: f64) {
        for t in self.dies.iter_mut().chain(&mut self.channels) {
            t.forget_before(now);
        }
    }
}

pub trait Scheduler: Send {
    /// Serve `op`, ready at `ready_us`, on the timelines; returns when it completes.
    fn serve(&mut self, op: &Placed, ready_us: f64, res: &mut Resources) -> f64;
}

/// Each die and channel serves operations in the order they become ready (`device.scheduler =
/// "fifo"`). A read: command on the channel, array read on the die, data out on the channel (the
/// die is free again once its page is in the register). A program: command and data in on the
/// channel, then the array program. An erase: command, then the array erase.
pub struct Fifo;

impl Scheduler for Fifo {
    #[inline]
    fn serve(&mut self, op: &Placed, ready: f64, res: &mut Resources) -> f64 {
        let (die, ch) = (op.die as usize, op.channel as usize);
        match op.kind {
            OpKind::Read => {
                let c = res.channels[ch].reserve(ready, op.command_us);
                let a = res.dies[die].reserve(c, op.array_us);
                res.channels[ch].reserve(a, op.transfer_us)
            }
            OpKind::Program => {
                let c = res.channels[ch].reserve(ready, op.command_us + op.transfer_us);
                res.dies[die].reserve(c, op.array_us)
            }
            OpKind::Erase => {
                let c = res.channels[ch].reserve(ready, op.command_us);
                res.dies[die].reserve(c, op.array_us)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_gap_that_fits() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(10.0, 5.0), 15.0);
        assert_eq!(t.reserve(15.0, 5.0), 20.0); // adjoining: one interval
        assert_eq!(t.busy, [(10.0, 20.0)]);
        assert_eq!(t.reserve(0.0, 4.0), 4.0); // fits before
        assert_eq!(t.reserve(3.0, 8.0), 28.0); // 4..10 too short: after the last
        assert_eq!(t.reserve(4.0, 6.0), 10.0); // exactly the gap
        assert_eq!(t.busy_us, 28.0);
        t.forget_before(12.0);
        assert_eq!(t.busy, [(10.0, 20.0), (20.0, 28.0)]);
        assert_eq!(t.reserve(5.0, 0.0), 5.0);
    }

    #[test]
    fn read_frees_the_die_before_its_transfer() {
        let mut r = Resources::new(2, 1);
        let op = |die| Placed {
            kind: OpKind::Read,
            die,
            channel: 0,
            array_us: 50.0,
            transfer_us: 10.0,
            command_us: 0.0,
        };
        let mut f = Fifo;
        assert_eq!(f.serve(&op(0), 0.0, &mut r), 60.0);
        // Die 1 reads in parallel; its transfer waits for the bus.
        assert_eq!(f.serve(&op(1), 0.0, &mut r), 70.0);
        // Die 0's next read starts at 50, its transfer at 100.
        assert_eq!(f.serve(&op(0), 0.0, &mut r), 110.0);
    }
}
