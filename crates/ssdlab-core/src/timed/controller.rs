//! The device's front end: the controller's firmware cores (`[controller]`) and the host link
//! (`host.link_mib_s`). Both are off by default (no time, nothing waits).

use super::timeline::Timeline;
use crate::config::Config;

/// Firmware cores: each host command occupies the earliest free core (with `queue_affinity`,
/// its submission queue's core) for `command_us` plus `page_us` per page, in the order commands
/// are taken. A command starts once its core is free, after every command before it on that
/// core, so a core's time needs no timeline: when it is free and how long it has been busy.
#[derive(Clone, Debug, Default)]
pub struct Controller {
    /// Each core's total busy time (µs).
    busy: Vec<f64>,
    /// When each core's last command ends (commands are taken in time order, so a core is free
    /// from then on).
    free_at: Vec<f64>,
    command_us: f64,
    /// A write command's firmware time (`controller.write_command_us`, else `command_us`).
    write_command_us: f64,
    page_us: f64,
    /// `controller.queue_affinity`: the queue of the next command picks its core.
    affinity: bool,
    /// The submission queue of the command taken next ([`Controller::set_queue`]).
    queue: usize,
}

impl Controller {
    pub fn new(cfg: &Config) -> Controller {
        let c = &cfg.controller;
        Controller {
            busy: vec![0.0; c.cores as usize],
            free_at: vec![0.0; c.cores as usize],
            command_us: c.command_us,
            write_command_us: c.write_command_us.unwrap_or(c.command_us),
            page_us: c.page_us,
            affinity: c.queue_affinity,
            queue: 0,
        }
    }

    /// The next command comes from submission queue `queue` (flow `queue`; 0 without flows).
    #[inline]
    pub fn set_queue(&mut self, queue: usize) {
        self.queue = queue;
    }

    /// A command (a write if `write`) of `pages()` pages taken at `t` (no command is taken
    /// earlier later on): when its firmware work ends (`t` without cores).
    #[inline]
    pub fn command(&mut self, t: f64, write: bool, pages: impl FnOnce() -> u64) -> f64 {
        if self.busy.is_empty() {
            return t;
        }
        let pages = pages();
        let i = if self.affinity {
            self.queue % self.free_at.len()
        } else {
            let (i, _) = (self.free_at.iter().enumerate())
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("at least one core");
            i
        };
        let command_us = if write {
            self.write_command_us
        } else {
            self.command_us
        };
        let dur = command_us + self.page_us * pages as f64;
        let end = t.max(self.free_at[i]) + dur;
        self.busy[i] += dur;
        self.free_at[i] = end;
        end
    }

    /// Total busy time of every core (µs).
    pub fn busy_us(&self) -> f64 {
        self.busy.iter().sum()
    }

    pub fn cores(&self) -> usize {
        self.busy.len()
    }
}

/// The host link: one timeline shared by reads' data (device to host) and writes' data (host to
/// device); transfers take the earliest gap that fits from when their data is ready.
#[derive(Clone, Debug, Default)]
pub struct Link {
    line: Timeline,
    /// µs per byte; 0 = unlimited.
    us_per_byte: f64,
}

impl Link {
    pub fn new(cfg: &Config) -> Link {
        let mib_s = cfg.host.link_mib_s;
        Link {
            line: Timeline::default(),
            us_per_byte: if mib_s > 0.0 {
                1e6 / (mib_s * 1024.0 * 1024.0)
            } else {
                0.0
            },
        }
    }

    pub fn on(&self) -> bool {
        self.us_per_byte > 0.0
    }

    /// `bytes` ready at `ready` (≥ `now`, the present): when they have crossed the link.
    #[inline]
    pub fn transfer(&mut self, now: f64, ready: f64, bytes: u64) -> f64 {
        if self.us_per_byte == 0.0 {
            return ready;
        }
        self.line
            .reserve(now, ready, bytes as f64 * self.us_per_byte)
    }

    pub fn busy_us(&self) -> f64 {
        self.line.busy_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(cores: u32, command_us: f64, page_us: f64, link_mib_s: f64) -> Config {
        let mut c = Config::default();
        c.controller.cores = cores;
        c.controller.command_us = command_us;
        c.controller.page_us = page_us;
        c.host.link_mib_s = link_mib_s;
        c
    }

    #[test]
    fn commands_take_the_earliest_free_core() {
        let mut c = Controller::new(&cfg(2, 10.0, 1.0, 0.0));
        assert_eq!(c.command(0.0, false, || 2), 12.0); // core 0
        assert_eq!(c.command(0.0, false, || 0), 10.0); // core 1
        assert_eq!(c.command(1.0, false, || 0), 20.0); // core 1 (free at 10) before core 0 (12)
        assert_eq!(c.command(5.0, false, || 5), 27.0); // core 0, from 12
        assert_eq!(c.command(30.0, false, || 0), 40.0); // both free
        assert_eq!(c.busy_us(), 12.0 + 10.0 + 10.0 + 15.0 + 10.0);
        let mut off = Controller::new(&cfg(0, 0.0, 0.0, 0.0));
        assert_eq!(off.command(7.0, false, || 3), 7.0);
        // A write command's own firmware time.
        let mut w = cfg(1, 10.0, 1.0, 0.0);
        w.controller.write_command_us = Some(30.0);
        let mut c = Controller::new(&w);
        assert_eq!(c.command(0.0, true, || 2), 32.0);
        assert_eq!(c.command(0.0, false, || 2), 44.0);
    }

    #[test]
    fn link_transfers_queue() {
        // 1 MiB/s: a 4 KiB transfer takes 1e6 / 256 = 3906.25 µs.
        let mut l = Link::new(&cfg(0, 0.0, 0.0, 1.0));
        assert_eq!(l.transfer(0.0, 0.0, 4096), 3906.25);
        assert_eq!(l.transfer(0.0, 100.0, 4096), 7812.5);
        assert_eq!(l.transfer(0.0, 10_000.0, 2048), 10_000.0 + 1953.125);
        let mut off = Link::new(&cfg(0, 0.0, 0.0, 0.0));
        assert!(!off.on());
        assert_eq!(off.transfer(0.0, 5.0, 1 << 20), 5.0);
    }
}
