//! Operations that share one array operation: multi-plane operations (`device.planes_per_die`),
//! NAND pages of several mapping units (`nand.physical_page_bytes`), and page-type timing
//! (`nand.cell`). Placed instead of the one-operation-per-page loop of [`Clock::run_ops`] when
//! any is on.
//!
//! - Page types: a page's type is its row in its plane's block mod the bits per
//!   cell (LSB, MSB for mlc; LSB, CSB, MSB for tlc), and its array read and program take that
//!   type's time.
//! - Reads: a request's reads of one row of one die's planes (the same key in
//!   [`Layout::group_of`]), not separated by an erase and at most 2·k·P operations apart in the
//!   request's log (k units per NAND page, P planes), are one array read: one (multi-plane) read
//!   time, then each unit's data on the channel. So a unit read costs one array read and one
//!   unit's transfer. A later read joins only if the operation it depends on (as in
//!   [`Clock::run_ops`]) is done by the group's start.
//! - Programs: a NAND page is programmed when its last unit is: the units before it wait in the
//!   controller's DRAM (their program costs no time; the page's program carries k units of data).
//!   The page FTL writes a block's units in order, so a page's units arrive in order, from one or
//!   several requests. A request's page programs of one row of one die's planes (same window as
//!   reads) are one multi-plane program: one program time, every unit's data on the channel. A
//!   program waits for the operation it depends on (a copy's read) as in [`Clock::run_ops`]; a
//!   page program cannot pull a later program whose predecessor is not placed yet.
//! - Erases: an FTL block spans every plane, so erasing it is one multi-plane erase per die, as
//!   with one plane.

use super::layout::Layout;
use super::Clock;
use crate::nand::{Cause, NandOp, OpKind, AFTER_ALL};

/// What grouping keeps between requests, and what it did.
#[derive(Clone, Debug, Default)]
pub(super) struct Groups {
    /// NAND pages with units waiting in DRAM: (page, when the last of them was ready).
    staged: Vec<(u32, f64)>,
    /// Completion of each operation of the request being placed (NaN: not placed yet).
    done: Vec<f64>,
    array_reads: u64,
    array_programs: u64,
    multi_plane: u64,
}

impl Groups {
    /// Completion of each operation of the batch placed last.
    pub(super) fn done(&self) -> &[f64] {
        &self.done
    }

    fn stage(&mut self, page: u32, ready: f64) {
        match self.staged.iter_mut().find(|(p, _)| *p == page) {
            Some((_, r)) => *r = r.max(ready),
            None => self.staged.push((page, ready)),
        }
    }

    /// When the staged units of `page` were ready (−∞: none).
    fn unstage(&mut self, page: u32) -> f64 {
        match self.staged.iter().position(|(p, _)| *p == page) {
            Some(i) => self.staged.swap_remove(i).1,
            None => f64::NEG_INFINITY,
        }
    }

    pub(super) fn metrics(&self) -> Vec<(String, f64)> {
        vec![
            ("nand.array_reads".into(), self.array_reads as f64),
            ("nand.array_programs".into(), self.array_programs as f64),
            ("nand.multi_plane_ops".into(), self.multi_plane as f64),
        ]
    }
}

impl Clock {
    /// [`Clock::run_ops`] with grouping (module docs).
    pub(super) fn run_grouped(&mut self, t: f64, ops: &[NandOp]) -> f64 {
        let mut g = self.grouped.take().expect("grouping is on");
        g.done.clear();
        g.done.resize(ops.len(), f64::NAN);
        let window = 2 * (self.layout.units_per_page() * self.layout.planes()) as usize;
        let (mut barrier, mut end) = (t, t);
        for i in 0..ops.len() {
            if g.done[i].is_nan() {
                let op = ops[i];
                let s = Span {
                    barrier,
                    end,
                    window,
                };
                let d = match op.kind {
                    OpKind::Erase => {
                        let done = self.erase_block(op.addr, Cause::Host, end);
                        barrier = barrier.max(done);
                        done
                    }
                    OpKind::Read => self.read_group(&mut g, ops, i, s),
                    // Not its NAND page's last unit: staged (most programs; kept out of the call).
                    OpKind::Program if !self.layout.last_unit(op.addr) => {
                        let ready = s.ready(&g.done, i, op.after);
                        g.stage(self.layout.page_of(op.addr), ready);
                        ready
                    }
                    OpKind::Program => self.program_group(&mut g, ops, i, s),
                };
                g.done[i] = d;
            }
            end = end.max(g.done[i]);
        }
        self.grouped = Some(g);
        end
    }

    /// The reads of op `i`'s key within the window that are ready by then: one array read.
    fn read_group(&mut self, g: &mut Groups, ops: &[NandOp], i: usize, s: Span) -> f64 {
        let addr = ops[i].addr;
        let ready = s.ready(&g.done, i, ops[i].after);
        let key = Key::of(&self.layout, addr);
        let mut units = 1;
        let mut urgent = ops[i].cause.urgent_read();
        let mut planes = 1u64 << (self.layout.plane_of(addr) % 64);
        let last = ops.len().min(i + 1 + s.window);
        let done = &mut g.done[..ops.len()];
        for (j, op) in ops[..last].iter().enumerate().skip(i + 1) {
            match op.kind {
                OpKind::Erase => break,
                // The key first: most candidates are another die's.
                OpKind::Read
                    if key.holds(op.addr)
                        && done[j].is_nan()
                        && s.member_ready(done, j, op.after)
                            .is_some_and(|r| r <= ready) =>
                {
                    done[j] = f64::INFINITY; // a member: set below
                    units += 1;
                    urgent |= op.cause.urgent_read();
                    planes |= 1 << (self.layout.plane_of(op.addr) % 64);
                }
                _ => {}
            }
        }
        g.array_reads += 1;
        g.multi_plane += u64::from(planes.count_ones() > 1);
        let members = (units > 1).then_some(&mut g.done[i + 1..last]);
        self.place_array(OpKind::Read, urgent, addr, ready, units, members)
    }

    /// Op `i`, its NAND page's last unit: the page programs of its key within the window whose
    /// predecessors are placed, one array program.
    fn program_group(&mut self, g: &mut Groups, ops: &[NandOp], i: usize, s: Span) -> f64 {
        let addr = ops[i].addr;
        let l = &self.layout;
        let mut ready = s.ready(&g.done, i, ops[i].after);
        debug_assert!(l.last_unit(addr));
        ready = ready.max(g.unstage(l.page_of(addr)));
        let key = Key::of(l, addr);
        let mut pages = 1;
        let last = ops.len().min(i + 1 + s.window);
        for (j, op) in ops[..last].iter().enumerate().skip(i + 1) {
            match op.kind {
                OpKind::Erase => break,
                // The key first: most candidates are another die's.
                OpKind::Program if key.holds(op.addr) && g.done[j].is_nan() => {
                    // A program whose predecessor is not placed yet cannot be pulled before it.
                    let Some(r) = s.member_ready(&g.done, j, op.after) else {
                        continue;
                    };
                    if l.last_unit(op.addr) {
                        ready = ready.max(r).max(g.unstage(l.page_of(op.addr)));
                        pages += 1;
                        g.done[j] = f64::INFINITY; // a member: set below
                    } else {
                        g.stage(l.page_of(op.addr), r);
                        g.done[j] = r;
                    }
                }
                _ => {}
            }
        }
        g.array_programs += 1;
        g.multi_plane += u64::from(pages > 1);
        let units = pages * l.units_per_page();
        let members = (pages > 1).then_some(&mut g.done[i + 1..last]);
        self.place_array(OpKind::Program, false, addr, ready, units, members)
    }

    /// The array operation of a group led by the op at `addr`, transferring `units` NAND units,
    /// placed on its die once `ready`; its `members` (marked INFINITY), if any, end with it.
    fn place_array(
        &mut self,
        kind: OpKind,
        urgent: bool,
        addr: u32,
        ready: f64,
        units: u32,
        members: Option<&mut [f64]>,
    ) -> f64 {
        let array = self.service.draw_at(kind, self.layout.row_of(addr));
        let die = self.layout.die_of(addr);
        let d = self.place(
            kind,
            urgent,
            die,
            ready,
            array,
            units as f64 * self.transfer_us,
        );
        if let Some(m) = members {
            settle(m, d);
        }
        d
    }
}

/// A request's placing state a group needs: the last erase's completion, the latest completion
/// of the operations before the one placed, the grouping window.
#[derive(Clone, Copy)]
struct Span {
    barrier: f64,
    end: f64,
    window: usize,
}

impl Span {
    /// When op `i` (every op before it placed) may start: after the barrier and its predecessor.
    #[inline]
    fn ready(self, done: &[f64], i: usize, after: u16) -> f64 {
        self.barrier
            .max(super::predecessor(done, i, after, self.end))
    }

    /// The same for op `j` after the one being placed: None while its predecessor is not placed
    /// (or is a member of the group being formed).
    #[inline]
    fn member_ready(self, done: &[f64], j: usize, after: u16) -> Option<f64> {
        match after {
            0 => Some(self.barrier),
            k if k as usize > j => Some(self.barrier),
            AFTER_ALL => None,
            k => {
                let d = done[j - k as usize];
                d.is_finite().then(|| self.barrier.max(d))
            }
        }
    }
}

/// A key of [`Layout::group_of`] as the range of PPNs it holds: a group's candidates are tested
/// by one subtraction and comparison rather than a division each.
#[derive(Clone, Copy)]
struct Key {
    first: u64,
    len: u64,
}

impl Key {
    /// The key of PPN `ppn`.
    fn of(l: &Layout, ppn: u32) -> Key {
        let len = (l.units_per_page() * l.planes()) as u64;
        Key {
            first: l.group_of(ppn) as u64 * len,
            len,
        }
    }

    /// `ppn` has this key.
    #[inline]
    fn holds(self, ppn: u32) -> bool {
        (ppn as u64).wrapping_sub(self.first) < self.len
    }
}

/// The members marked in `done` complete at `d` (there are some: the group has more than one
/// operation).
fn settle(done: &mut [f64], d: f64) {
    for x in done.iter_mut().filter(|x| **x == f64::INFINITY) {
        *x = d;
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::nand::{Cause, NandOp, OpKind};
    use crate::timed::scheduler::Fifo;
    use crate::timed::Clock;
    use crate::units::Size;

    /// One die, 10 µs per unit on the bus, read 50, program 800, erase 1500.
    fn clock(set: impl FnOnce(&mut Config)) -> Clock {
        let mut c = Config::default();
        c.device.pages_per_block = 8;
        c.nand.read_us = 50.0;
        c.nand.program_us = 800.0;
        c.nand.transfer_us = 10.0;
        set(&mut c);
        c.check_fields().unwrap();
        Clock::new(&c, Box::new(Fifo))
    }

    fn ops(list: &[(OpKind, u32)]) -> Vec<NandOp> {
        list.iter()
            .map(|&(kind, addr)| NandOp::new(kind, Cause::Host, addr))
            .collect()
    }

    /// `ops` where op `i` of each `(i, back)` waits for the op `back` places before it.
    fn chained(list: &[(OpKind, u32)], deps: &[(usize, u16)]) -> Vec<NandOp> {
        let mut v = ops(list);
        for &(i, back) in deps {
            v[i].after = back;
        }
        v
    }
    use OpKind::{Erase, Program as P, Read as R};

    /// A key's range holds exactly the PPNs of that key, power of two or not.
    #[test]
    fn key_ranges_hold_their_keys_ppns() {
        use crate::config::DeviceConfig;
        use crate::timed::layout::Layout;
        for (planes, units) in [(2, 4), (2, 3), (3, 1)] {
            let d = DeviceConfig {
                planes_per_die: planes,
                ..DeviceConfig::default()
            };
            let l = Layout::new(&d, 96, units);
            for a in 0..200 {
                let key = super::Key::of(&l, a);
                for b in 0..200 {
                    assert_eq!(key.holds(b), l.group_of(a) == l.group_of(b), "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn a_multi_plane_program_occupies_the_die_for_one_program_time() {
        let two = |c: &mut Config| c.device.planes_per_die = 2;
        // Both pages' data on the bus (0..20), one program (20..820).
        assert_eq!(clock(two).run_ops(0.0, &ops(&[(P, 0), (P, 1)])), 820.0);
        // One plane: the second program waits for the first (810..1610).
        assert_eq!(clock(|_| ()).run_ops(0.0, &ops(&[(P, 0), (P, 1)])), 1610.0);
        // Pages 1 and 2 are in different rows (plane 1 row 0, plane 0 row 1): two programs.
        assert_eq!(clock(two).run_ops(0.0, &ops(&[(P, 1), (P, 2)])), 1610.0);
        // A multi-plane read: one array read (0..50), both pages out (50..70).
        let mut c = clock(two);
        assert_eq!(c.run_ops(0.0, &ops(&[(R, 2), (R, 3)])), 70.0);
        assert_eq!(c.metrics()["nand.multi_plane_ops"], 1.0);
    }

    #[test]
    fn gc_copies_read_and_program_multi_plane() {
        let mut c = clock(|c| c.device.planes_per_die = 2);
        // Copies 4 → 0 and 5 → 1: reads 0..50, out 50..70; programs' data 70..90, 90..890.
        let copy = chained(&[(R, 4), (P, 0), (R, 5), (P, 1)], &[(1, 1), (3, 1)]);
        assert_eq!(c.run_ops(0.0, &copy), 890.0);
        let m = c.metrics();
        assert_eq!(
            (m["nand.array_reads"], m["nand.array_programs"]),
            (1.0, 1.0)
        );
        // An erase ends the groups: the reads (0..50, out 50..70), the first program alone
        // (data 70..80, 80..880), the erase (880..2380), the second program (2380..3190).
        let mut c = clock(|c| c.device.planes_per_die = 2);
        let split = chained(
            &[(R, 4), (R, 5), (P, 0), (Erase, 1), (P, 1)],
            &[(2, 2), (4, 3)],
        );
        assert_eq!(c.run_ops(0.0, &split), 70.0 + 10.0 + 800.0 + 1500.0 + 810.0);
    }

    #[test]
    fn tlc_pages_take_their_types_times() {
        let tlc = |c: &mut Config| {
            c.device.pages_per_block = 6;
            c.nand.cell = "tlc".into();
            c.nand.read_csb_us = Some(70.0);
            c.nand.read_msb_us = Some(90.0);
            c.nand.program_csb_us = Some(1000.0);
            c.nand.program_msb_us = Some(2000.0);
        };
        // LSB, CSB, MSB programs one after the other on the die, after the first page's data.
        let mut c = clock(tlc);
        assert_eq!(
            c.run_ops(0.0, &ops(&[(P, 6), (P, 7), (P, 8)])),
            10.0 + 800.0 + 1000.0 + 2000.0
        );
        // Rows 3, 4, 5 are LSB, CSB, MSB again: reads 50 + 70 + 90, the last one's data out.
        let mut c = clock(tlc);
        assert_eq!(
            c.run_ops(0.0, &ops(&[(R, 3), (R, 4), (R, 5)])),
            50.0 + 70.0 + 90.0 + 10.0
        );
    }

    #[test]
    fn units_of_a_large_page_program_once_and_read_alone() {
        let mut c = clock(|c| c.nand.physical_page_bytes = Some(Size(16384)));
        // Units 0 and 1 wait in DRAM: no NAND time.
        assert_eq!(c.run_ops(0.0, &ops(&[(P, 0), (P, 1)])), 0.0);
        // Units 2 and 3 complete the page: 4 units of data (0..40), one program (40..840).
        assert_eq!(c.run_ops(0.0, &ops(&[(P, 2), (P, 3)])), 840.0);
        // A unit read: one array read (840..890), one unit's data out (890..900).
        assert_eq!(c.run_ops(0.0, &ops(&[(R, 1)])), 900.0);
        // Two units of one page: one array read (the die is free from 890: 890..940), two
        // units out (940..960).
        assert_eq!(c.run_ops(0.0, &ops(&[(R, 0), (R, 3)])), 960.0);
        let m = c.metrics();
        assert_eq!(
            (m["nand.array_reads"], m["nand.array_programs"]),
            (2.0, 1.0)
        );
    }

    #[test]
    fn a_read_arriving_during_a_program_waits_the_suspend_latency() {
        let suspend = |cap| {
            move |c: &mut Config| {
                c.nand.suspend = "program".into();
                c.nand.suspend_us = 20.0;
                c.nand.max_suspends = cap;
            }
        };
        let mut c = clock(suspend(1));
        // The program: data 0..10, array 10..810.
        assert_eq!(c.run_ops(0.0, &ops(&[(P, 0)])), 810.0);
        // A read at 100: 100 + 20 (suspend) + 50 (read) + 10 (data out).
        assert_eq!(c.run_ops(100.0, &ops(&[(R, 1)])), 180.0);
        // The program now ends at 810 + 20 + 50: a second read at 200 (cap reached) waits for
        // it: 880 + 50 + 10.
        assert_eq!(c.run_ops(200.0, &ops(&[(R, 1)])), 940.0);
        assert_eq!(c.metrics()["nand.suspensions"], 1.0);
        // Without suspension the first read waits for the program: 810 + 50 + 10.
        let mut c = clock(|_| ());
        c.run_ops(0.0, &ops(&[(P, 0)]));
        assert_eq!(c.run_ops(100.0, &ops(&[(R, 1)])), 870.0);
    }
}
