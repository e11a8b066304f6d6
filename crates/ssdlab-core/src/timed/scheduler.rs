//! The scheduler seam between the host queue and the dies: it places each NAND operation on the
//! timelines of its die and channel. The default, `fifo`, serves every die and channel in the
//! order operations become ready: an operation takes the earliest free interval at or after its
//! ready time that fits it. A later policy (read priority, write suspension, GC preemption) is a
//! file implementing [`Scheduler`] plus a registry entry.

use super::timeline::Timeline;
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
    /// A read a host request waits for (host data, mapping pages): it may suspend a program.
    pub urgent: bool,
}

/// Every die's and channel's timeline, and the present (the last request's issue time: no
/// operation is ready before it).
#[derive(Clone, Debug)]
pub struct Resources {
    pub dies: Vec<Timeline>,
    pub channels: Vec<Timeline>,
    pub now: f64,
}

impl Resources {
    pub fn new(dies: usize, channels: usize) -> Resources {
        Resources {
            dies: vec![Timeline::default(); dies],
            channels: vec![Timeline::default(); channels],
            now: 0.0,
        }
    }

    /// Reserve `dur` on die `die` from `ready` (see [`Timeline::reserve`]).
    #[inline]
    pub fn die(&mut self, die: u32, ready: f64, dur: f64) -> f64 {
        self.dies[die as usize].reserve(self.now, ready, dur)
    }

    /// Reserve `dur` on channel `ch` from `ready`.
    #[inline]
    pub fn channel(&mut self, ch: u32, ready: f64, dur: f64) -> f64 {
        self.channels[ch as usize].reserve(self.now, ready, dur)
    }
}

pub trait Scheduler: Send {
    /// Serve `op`, ready at `ready_us`, on the timelines; returns when it completes.
    fn serve(&mut self, op: &Placed, ready_us: f64, res: &mut Resources) -> f64;

    /// The policy's own metrics (docs/metrics.md).
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Each die and channel serves operations in the order they become ready (`device.scheduler =
/// "fifo"`). A read: command on the channel, array read on the die, data out on the channel (the
/// die is free again once its page is in the register). A program: command and data in on the
/// channel, then the array program. An erase: command, then the array erase.
pub struct Fifo;

/// A scheduler from the configuration (its registry entry's builder).
pub type Ctor = fn(&crate::config::Config) -> crate::error::Result<Box<dyn Scheduler>>;

impl Scheduler for Fifo {
    #[inline]
    fn serve(&mut self, op: &Placed, ready: f64, res: &mut Resources) -> f64 {
        let (die, ch) = (op.die, op.channel);
        match op.kind {
            OpKind::Read => {
                let c = res.channel(ch, ready, op.command_us);
                let a = res.die(die, c, op.array_us);
                res.channel(ch, a, op.transfer_us)
            }
            OpKind::Program => {
                let c = res.channel(ch, ready, op.command_us + op.transfer_us);
                res.die(die, c, op.array_us)
            }
            OpKind::Erase => {
                let c = res.channel(ch, ready, op.command_us);
                res.die(die, c, op.array_us)
            }
        }
    }
}

/// The registry entry of scheduler `fifo`.
pub static FIFO: crate::component::Entry<Ctor> = crate::component::Entry {
    info: crate::component::Component::new(
        "scheduler",
        "fifo",
        "Timed mode: every die and channel serves operations in the order they become ready (the earliest free interval that fits).",
        crate::params::NONE,
        &["nand.read_us", "nand.program_us", "nand.erase_us", "nand.command_us"],
    ),
    build: |_| Ok(Box::new(Fifo)),
};

#[cfg(test)]
mod tests {
    use super::*;

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
            urgent: true,
        };
        let mut f = Fifo;
        assert_eq!(f.serve(&op(0), 0.0, &mut r), 60.0);
        // Die 1 reads in parallel; its transfer waits for the bus.
        assert_eq!(f.serve(&op(1), 0.0, &mut r), 70.0);
        // Die 0's next read starts at 50, its transfer at 100.
        assert_eq!(f.serve(&op(0), 0.0, &mut r), 110.0);
    }
}
