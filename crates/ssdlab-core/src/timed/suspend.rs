//! Program/erase suspension for reads (`nand.suspend`; Wu & He, "Reducing SSD read latency via
//! NAND flash program and erase suspension", FAST '12).
//!
//! A host read (or a mapping-page read a host request waits for; not the copies of GC, merges or
//! padding) whose array time would start while a program (or, with `program-erase`, an erase) is
//! in progress on its die suspends that operation: the read's array read starts after
//! `nand.suspend_us`, and the suspended operation needs `suspend_us` + the read's array time +
//! `nand.resume_us` more time. An operation is suspended at most `nand.max_suspends` times;
//! after that, and when the read would not end before the operation would have (it is about to
//! finish), the read waits for it as with `fifo`.
//!
//! The clock places requests in order on reservation timelines, so a suspension cannot move what
//! is already placed. It is recorded as follows (an approximation, documented in docs/config.md):
//! the read takes `[x, x + suspend_us + read)` inside the operation's interval (x: when the read
//! is ready on the die), and the operation's extra time is reserved on the die at the first gap
//! at or after its original end, which becomes its end for later reads. Operations placed later
//! see the die busy for the extra time; the request that issued the suspended operation keeps the
//! completion it was given when placed. Reads ready during a suspension's read are served in that
//! suspension, one after the other, without a second suspend latency (as Wu & He's scheduler
//! does), each adding its array time to the suspended operation.
//!
//! Each die keeps its reserved array intervals from the present on (the same intervals as its
//! timeline), with what each is: another operation, a suspendable one (its identity and the
//! suspensions it has had), or a read served in a suspension.

use super::scheduler::{Placed, Resources, Scheduler};
use crate::config::NandConfig;
use crate::nand::OpKind;
use std::collections::HashMap;

/// A reserved array interval on a die.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: f64,
    end: f64,
    /// The suspendable operation this interval belongs to (0: another operation).
    op: u64,
    /// A read served in a suspension of `op`.
    in_suspension: bool,
}

/// Where a read goes in a suspension: in piece `piece` from `at`; `join`: in one already made.
#[derive(Clone, Copy, Debug)]
struct Plan {
    piece: usize,
    at: f64,
    join: bool,
}

pub struct Suspend {
    erases: bool,
    suspend_us: f64,
    resume_us: f64,
    max: u32,
    dies: Vec<Vec<Piece>>,
    /// Suspensions so far of each operation suspended at least once (kept per operation rather
    /// than per piece, so a suspension does not rescan the die's pieces to update them).
    suspends: HashMap<u64, u32>,
    /// Per die: the pieces before this index ended in the past.
    heads: Vec<usize>,
    next_op: u64,
    /// Reads that suspended an operation, and those served in a suspension already made.
    pub suspensions: u64,
    pub joined: u64,
}

impl Suspend {
    pub fn new(n: &NandConfig, dies: usize) -> Suspend {
        Suspend {
            erases: n.suspend == "program-erase",
            suspend_us: n.suspend_us,
            resume_us: n.resume_us,
            max: n.max_suspends,
            dies: vec![Vec::new(); dies],
            heads: vec![0; dies],
            suspends: HashMap::new(),
            next_op: 1,
            suspensions: 0,
            joined: 0,
        }
    }

    /// Record a reserved interval in time order (intervals are disjoint).
    fn insert(pieces: &mut Vec<Piece>, p: Piece) {
        if p.end <= p.start {
            return;
        }
        if pieces.last().is_none_or(|q| q.start < p.start) {
            pieces.push(p);
        } else {
            let i = pieces.partition_point(|q| q.start < p.start);
            pieces.insert(i, p);
        }
    }

    /// Forget the intervals that ended by `now` (no later operation is ready earlier; moved
    /// out in bulk, as the timelines do).
    fn prune(&mut self, die: usize, now: f64) {
        let (pieces, head) = (&mut self.dies[die], &mut self.heads[die]);
        while *head < pieces.len() && pieces[*head].end <= now {
            *head += 1;
        }
        if *head >= 32 && 2 * *head >= pieces.len() {
            pieces.drain(..*head);
            *head = 0;
        }
    }

    fn suspends(&self, op: u64) -> u32 {
        self.suspends.get(&op).copied().unwrap_or(0)
    }

    /// An array read of `dur` ready on `die` at `x`: where it goes in a suspension, or None to
    /// wait as `fifo` does.
    fn plan(&self, die: usize, mut x: f64, dur: f64) -> Option<Plan> {
        let (pieces, head) = (&self.dies[die], self.heads[die]);
        let mut i = head + pieces[head..].partition_point(|q| q.end <= x);
        while i < pieces.len() {
            let p = pieces[i];
            if p.start > x {
                if p.start - x >= dur {
                    return None; // a gap that fits
                }
                x = p.start;
            }
            if p.in_suspension {
                // Join the suspension: served right after this read, inside the same operation.
                let next = pieces
                    .get(i + 1)
                    .filter(|q| q.op == p.op && q.start == p.end);
                if let Some(q) = next {
                    if p.end + dur <= q.end {
                        return Some(Plan {
                            piece: i + 1,
                            at: p.end,
                            join: true,
                        });
                    }
                }
            } else if p.op != 0 && self.suspends(p.op) < self.max {
                if x + self.suspend_us + dur <= p.end {
                    return Some(Plan {
                        piece: i,
                        at: x,
                        join: false,
                    });
                }
            }
            x = p.end;
            i += 1;
        }
        None
    }

    /// Serve a read's array time from `x` in the suspension planned: split the operation's
    /// interval around it and reserve the operation's extra time; returns the read's end.
    fn suspend(&mut self, res: &mut Resources, die: u32, plan: Plan, dur: f64) -> f64 {
        let (i, x) = (plan.piece, plan.at);
        let pieces = &mut self.dies[die as usize];
        let p = pieces[i];
        let (read_end, extra) = if plan.join {
            self.joined += 1;
            (x + dur, dur)
        } else {
            self.suspensions += 1;
            (
                x + self.suspend_us + dur,
                self.suspend_us + dur + self.resume_us,
            )
        };
        let suspends = self.suspends.get(&p.op).copied().unwrap_or(0) + u32::from(!plan.join);
        let tail_end = res.die(die, p.end, extra);
        let op = p.op;
        let part = |start, end| Piece {
            start,
            end,
            op,
            in_suspension: false,
        };
        // The operation's interval split around the read, in place (one move of the later
        // pieces rather than a remove and three inserts).
        let split = [
            part(p.start, x),
            Piece {
                in_suspension: true,
                ..part(x, read_end)
            },
            part(read_end, p.end),
        ];
        pieces.splice(i..=i, split.into_iter().filter(|q| q.end > q.start));
        Self::insert(pieces, part(tail_end - extra, tail_end));
        self.suspends.insert(op, suspends);
        read_end
    }
}

impl Scheduler for Suspend {
    fn serve(&mut self, op: &Placed, ready: f64, res: &mut Resources) -> f64 {
        let (die, ch) = (op.die, op.channel);
        let d = die as usize;
        self.prune(d, res.now);
        match op.kind {
            OpKind::Read => {
                let c = res.channel(ch, ready, op.command_us);
                let plan = op.urgent.then(|| self.plan(d, c, op.array_us)).flatten();
                let a = match plan {
                    Some(plan) => self.suspend(res, die, plan, op.array_us),
                    None => {
                        let a = res.die(die, c, op.array_us);
                        let piece = Piece {
                            start: a - op.array_us,
                            end: a,
                            op: 0,
                            in_suspension: false,
                        };
                        Self::insert(&mut self.dies[d], piece);
                        a
                    }
                };
                res.channel(ch, a, op.transfer_us)
            }
            OpKind::Program | OpKind::Erase => {
                let bus = op.command_us
                    + if op.kind == OpKind::Program {
                        op.transfer_us
                    } else {
                        0.0
                    };
                let c = res.channel(ch, ready, bus);
                let e = res.die(die, c, op.array_us);
                let suspendable = op.kind == OpKind::Program || self.erases;
                let id = if suspendable {
                    self.next_op += 1;
                    self.next_op
                } else {
                    0
                };
                let piece = Piece {
                    start: e - op.array_us,
                    end: e,
                    op: id,
                    in_suspension: false,
                };
                Self::insert(&mut self.dies[d], piece);
                e
            }
        }
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("nand.suspensions", self.suspensions as f64),
            (
                "nand.suspension_reads",
                (self.suspensions + self.joined) as f64,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: &str, max: u32) -> NandConfig {
        NandConfig {
            suspend: mode.into(),
            suspend_us: 20.0,
            resume_us: 5.0,
            max_suspends: max,
            ..NandConfig::default()
        }
    }

    fn op(kind: OpKind, array_us: f64) -> Placed {
        Placed {
            kind,
            die: 0,
            channel: 0,
            array_us,
            transfer_us: 10.0,
            command_us: 0.0,
            urgent: true,
        }
    }

    #[test]
    fn a_read_during_a_program_waits_the_suspend_latency() {
        let mut s = Suspend::new(&cfg("program", 1), 1);
        let mut r = Resources::new(1, 1);
        // Program: data in 0..10, array 10..810.
        assert_eq!(s.serve(&op(OpKind::Program, 800.0), 0.0, &mut r), 810.0);
        // A read at 100: suspend 100..120, array 120..170, transfer 170..180.
        assert_eq!(s.serve(&op(OpKind::Read, 50.0), 100.0, &mut r), 180.0);
        // The program needs 20 + 50 + 5 more: it ends at 885. The next operation on the die
        // starts there: an erase ready at 200 ends at 885 + 1500.
        assert_eq!(s.serve(&op(OpKind::Erase, 1500.0), 200.0, &mut r), 2385.0);
        assert_eq!(r.dies[0].busy_us, 800.0 + 75.0 + 1500.0);
        // The cap (1) is reached: a read at 300 waits for the program, after its extra time
        // (the die is busy until 885, then the erase: the read goes after it).
        assert_eq!(
            s.serve(&op(OpKind::Read, 50.0), 300.0, &mut r),
            2385.0 + 60.0
        );
        // The erase is not suspendable with "program".
        assert_eq!(s.suspensions, 1);
    }

    #[test]
    fn reads_during_a_suspension_join_it_and_erases_suspend_with_program_erase() {
        let mut s = Suspend::new(&cfg("program-erase", 4), 1);
        let mut r = Resources::new(1, 1);
        let erase = Placed {
            transfer_us: 0.0,
            ..op(OpKind::Erase, 1000.0)
        };
        assert_eq!(s.serve(&erase, 0.0, &mut r), 1000.0);
        // Read 1 at 100: 100..120 suspend, 120..170 array, transfer 170..180.
        assert_eq!(s.serve(&op(OpKind::Read, 50.0), 100.0, &mut r), 180.0);
        // Read 2 ready at 130, during read 1's array: served 170..220 in the same suspension
        // (transfer 220..230), adding 50 to the erase.
        assert_eq!(s.serve(&op(OpKind::Read, 50.0), 130.0, &mut r), 230.0);
        assert_eq!((s.suspensions, s.joined), (1, 1));
        // The erase's extra time: 75 (the suspension) + 50 (the joined read) after 1000.
        let mut f = super::super::scheduler::Fifo;
        assert_eq!(
            f.serve(&op(OpKind::Read, 50.0), 0.0, &mut r),
            1125.0 + 50.0 + 10.0
        );
    }

    #[test]
    fn a_program_about_to_end_is_not_suspended() {
        let mut s = Suspend::new(&cfg("program", 4), 1);
        let mut r = Resources::new(1, 1);
        assert_eq!(s.serve(&op(OpKind::Program, 800.0), 0.0, &mut r), 810.0);
        // At 760, 20 + 50 would end at 830 > 810: the read waits (810..860, transfer to 870).
        assert_eq!(s.serve(&op(OpKind::Read, 50.0), 760.0, &mut r), 870.0);
        assert_eq!(s.suspensions, 0);
    }
}
