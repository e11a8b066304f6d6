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
//! suspensions it has had), or a read served in a suspension. They are kept in chunks, as the
//! timelines keep theirs ([`Pieces`]): dies booked far ahead hold thousands of them, and a read
//! that fills a gap before them would otherwise move every later one.

use super::scheduler::{Placed, Resources, Scheduler};
use crate::config::NandConfig;
use crate::nand::OpKind;
use rustc_hash::FxHashMap;

/// Most pieces in one chunk; a chunk that grows past it splits in two.
const CHUNK: usize = 64;

/// A reserved array interval on a die.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    start: f64,
    end: f64,
    /// The suspendable operation this interval belongs to (0: another operation) shifted left
    /// by one, and in the low bit whether it is a read served in a suspension of it (one word:
    /// pieces are moved about when one is inserted before them).
    tag: u64,
}

impl Piece {
    fn new(start: f64, end: f64, op: u64, in_suspension: bool) -> Piece {
        Piece {
            start,
            end,
            tag: op << 1 | u64::from(in_suspension),
        }
    }

    fn op(self) -> u64 {
        self.tag >> 1
    }

    fn in_suspension(self) -> bool {
        self.tag & 1 == 1
    }
}

/// A piece's place: chunk and index.
type Pos = (usize, usize);

/// Chunks that ended are removed from the front this many at a time (removing one moves every
/// later chunk, and a die booked far ahead has hundreds).
const RETIRED: usize = 16;

/// One die's pieces from the present on: disjoint, in time order (so their ends are too), chunk
/// after chunk from chunk `first` (those before it ended and are empty). Those of chunk `first`
/// before `head` ended in the past; every chunk from `first` on holds at least one from `head`
/// on.
#[derive(Clone, Debug, Default)]
struct Pieces {
    chunks: Vec<Vec<Piece>>,
    /// Each chunk's last piece (the search for a chunk, without visiting them).
    lasts: Vec<Piece>,
    /// The first chunk that has not ended: fewer than [`RETIRED`], and none if every chunk has.
    first: usize,
    head: usize,
    /// The chunk of the last insert or search: the next one on the die is usually near it.
    finger: usize,
    /// Emptied chunks, kept for reuse.
    spare: Vec<Vec<Piece>>,
}

impl Pieces {
    /// The first piece of chunk `c` that has not ended in the past.
    fn low(&self, c: usize) -> usize {
        if c == self.first {
            self.head
        } else {
            0
        }
    }

    fn get(&self, (c, i): Pos) -> Piece {
        self.chunks[c][i]
    }

    /// The piece after the one at `pos`.
    fn next(&self, (c, i): Pos) -> Option<Pos> {
        if i + 1 < self.chunks[c].len() {
            Some((c, i + 1))
        } else {
            (c + 1 < self.chunks.len()).then_some((c + 1, 0))
        }
    }

    /// The first chunk whose last piece is not `before` (the chunks' last pieces are in time
    /// order): the finger's if it is that one, else by binary search.
    #[inline]
    fn chunk(&self, before: impl Fn(&Piece) -> bool) -> usize {
        let (f, first) = (self.finger, self.first);
        match self.lasts.get(f) {
            Some(q) if f >= first && !before(q) && (f == first || before(&self.lasts[f - 1])) => f,
            _ => first + self.lasts[first..].partition_point(before),
        }
    }

    /// The first piece that ends after `x`.
    fn locate(&mut self, x: f64) -> Option<Pos> {
        let c = self.chunk(|q| q.end <= x);
        self.finger = c;
        let chunk = self.chunks.get(c)?;
        let lo = self.low(c);
        Some((c, lo + chunk[lo..].partition_point(|q| q.end <= x)))
    }

    /// Forget the pieces that ended by `now` (no later operation is ready earlier).
    fn prune(&mut self, now: f64) {
        while let Some(chunk) = self.chunks.get_mut(self.first) {
            while self.head < chunk.len() && chunk[self.head].end <= now {
                self.head += 1;
            }
            if self.head < chunk.len() {
                return;
            }
            let mut chunk = std::mem::take(chunk);
            chunk.clear();
            self.spare.push(chunk);
            self.head = 0;
            self.first += 1;
            if self.first == RETIRED || self.first == self.chunks.len() {
                self.chunks.drain(..self.first);
                self.lasts.drain(..self.first);
                self.finger = self.finger.saturating_sub(self.first);
                self.first = 0;
            }
        }
    }

    /// Record `p` in time order (at the end, as most are, or before the first piece that does
    /// not start earlier); an empty piece is not recorded.
    fn insert(&mut self, p: Piece) {
        if p.end <= p.start {
            return;
        }
        if self.lasts.last().is_none_or(|q| q.start < p.start) {
            match (self.chunks.last_mut(), self.lasts.last_mut()) {
                (Some(chunk), Some(last)) if chunk.len() < CHUNK => {
                    chunk.push(p);
                    *last = p;
                }
                _ => {
                    let mut chunk = self.spare.pop().unwrap_or_default();
                    chunk.push(p);
                    self.chunks.push(chunk);
                    self.lasts.push(p);
                }
            }
            return;
        }
        let c = self.chunk(|q| q.start < p.start);
        self.finger = c;
        // From the chunk's end back to the first piece not starting earlier (the partition
        // point): the pieces it passes are those the insert moves, so the scan brings into
        // cache no line the move would not, where a binary search would miss on others.
        let (lo, chunk) = (self.low(c), &mut self.chunks[c]);
        let mut i = chunk.len();
        while i > lo && chunk[i - 1].start >= p.start {
            i -= 1;
        }
        chunk.insert(i, p);
        if self.chunks[c].len() > CHUNK {
            self.split(c);
        }
    }

    /// Replace the piece at `pos` with `with` (in time order, one at least).
    fn replace(&mut self, (c, i): Pos, with: impl Iterator<Item = Piece>) {
        self.chunks[c].splice(i..=i, with);
        self.lasts[c] = self.chunks[c][self.chunks[c].len() - 1];
        if self.chunks[c].len() > CHUNK {
            self.split(c);
        }
    }

    /// Split chunk `c`, grown past [`CHUNK`], in two halves (the past of the first chunk
    /// dropped first).
    #[cold]
    fn split(&mut self, c: usize) {
        if c == self.first && self.head > 0 {
            self.chunks[c].drain(..self.head);
            self.head = 0;
            if self.chunks[c].len() <= CHUNK {
                return;
            }
        }
        let mut upper = self.spare.pop().unwrap_or_default();
        let chunk = &mut self.chunks[c];
        upper.extend(chunk.drain(chunk.len() / 2..));
        self.lasts[c] = chunk[chunk.len() - 1];
        self.lasts.insert(c + 1, upper[upper.len() - 1]);
        self.chunks.insert(c + 1, upper);
    }

    /// The pieces from the present on, in time order.
    #[cfg(test)]
    fn all(&self) -> Vec<Piece> {
        let mut all = Vec::new();
        for (c, chunk) in self.chunks.iter().enumerate().skip(self.first) {
            all.extend_from_slice(&chunk[self.low(c)..]);
        }
        all
    }
}

/// Where a read goes in a suspension: in the piece at `piece` from `at`; `join`: in one
/// already made.
#[derive(Clone, Copy, Debug)]
struct Plan {
    piece: Pos,
    at: f64,
    join: bool,
}

pub struct Suspend {
    erases: bool,
    suspend_us: f64,
    resume_us: f64,
    max: u32,
    dies: Vec<Pieces>,
    /// Suspensions so far of each operation suspended at least once, and the end of its last
    /// piece (kept per operation rather than per piece, so a suspension does not rescan the
    /// die's pieces to update them; swept of the operations that ended once it has doubled).
    suspends: FxHashMap<u64, (u32, f64)>,
    /// Size of `suspends` after its last sweep.
    swept: usize,
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
            dies: vec![Pieces::default(); dies],
            suspends: FxHashMap::default(),
            swept: 0,
            next_op: 1,
            suspensions: 0,
            joined: 0,
        }
    }

    fn suspends(&self, op: u64) -> u32 {
        self.suspends.get(&op).map_or(0, |s| s.0)
    }

    /// An array read of `dur` ready on `die` at `x`: where it goes in a suspension, or None to
    /// wait as `fifo` does.
    fn plan(&mut self, die: usize, mut x: f64, dur: f64) -> Option<Plan> {
        let mut at = self.dies[die].locate(x);
        let pieces = &self.dies[die];
        while let Some(pos) = at {
            let p = pieces.get(pos);
            if p.start > x {
                if p.start - x >= dur {
                    return None; // a gap that fits
                }
                x = p.start;
            }
            let next = pieces.next(pos);
            if p.in_suspension() {
                // Join the suspension: served right after this read, inside the same operation.
                let joined = next.filter(|&n| {
                    let q = pieces.get(n);
                    q.op() == p.op() && q.start == p.end && p.end + dur <= q.end
                });
                if let Some(n) = joined {
                    return Some(Plan {
                        piece: n,
                        at: p.end,
                        join: true,
                    });
                }
            } else if p.op() != 0
                && self.suspends(p.op()) < self.max
                && x + self.suspend_us + dur <= p.end
            {
                return Some(Plan {
                    piece: pos,
                    at: x,
                    join: false,
                });
            }
            x = p.end;
            at = next;
        }
        None
    }

    /// Serve a read's array time from `x` in the suspension planned: split the operation's
    /// interval around it and reserve the operation's extra time; returns the read's end.
    fn suspend(&mut self, res: &mut Resources, die: u32, plan: Plan, dur: f64) -> f64 {
        let x = plan.at;
        let pieces = &mut self.dies[die as usize];
        let p = pieces.get(plan.piece);
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
        let tail_end = res.die(die, p.end, extra);
        let op = p.op();
        let part = |start, end| Piece::new(start, end, op, false);
        // The operation's interval split around the read, in place.
        let split = [
            part(p.start, x),
            Piece::new(x, read_end, op, true),
            part(read_end, p.end),
        ];
        pieces.replace(plan.piece, split.into_iter().filter(|q| q.end > q.start));
        pieces.insert(part(tail_end - extra, tail_end));
        let s = self.suspends.entry(op).or_insert((0, tail_end));
        *s = (s.0 + u32::from(!plan.join), s.1.max(tail_end));
        self.sweep(res.now);
        read_end
    }

    /// Forget the suspension counts of the operations whose pieces all ended by `now` (none is
    /// looked at again), once there are twice as many as after the last sweep.
    fn sweep(&mut self, now: f64) {
        if self.suspends.len() >= 2 * self.swept.max(512) {
            self.suspends.retain(|_, s| s.1 > now);
            self.swept = self.suspends.len();
        }
    }
}

impl Scheduler for Suspend {
    fn serve(&mut self, op: &Placed, ready: f64, res: &mut Resources) -> f64 {
        let (die, ch) = (op.die, op.channel);
        let d = die as usize;
        self.dies[d].prune(res.now);
        match op.kind {
            OpKind::Read => {
                let c = res.channel(ch, ready, op.command_us);
                let plan = op.urgent.then(|| self.plan(d, c, op.array_us)).flatten();
                let a = match plan {
                    Some(plan) => self.suspend(res, die, plan, op.array_us),
                    None => {
                        let a = res.die(die, c, op.array_us);
                        self.dies[d].insert(Piece::new(a - op.array_us, a, 0, false));
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
                self.dies[d].insert(Piece::new(e - op.array_us, e, id, false));
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

    /// Suspension in `mode`, at most `max` per operation, on a single die.
    fn one_die(mode: &str, max: u32) -> (Suspend, Resources) {
        (Suspend::new(&cfg(mode, max), 1), Resources::new(1, 1))
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
        let (mut s, mut r) = one_die("program", 1);
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
        let (mut s, mut r) = one_die("program-erase", 4);
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
        let (mut s, mut r) = one_die("program", 4);
        assert_eq!(s.serve(&op(OpKind::Program, 800.0), 0.0, &mut r), 810.0);
        // At 760, 20 + 50 would end at 830 > 810: the read waits (810..860, transfer to 870).
        assert_eq!(s.serve(&op(OpKind::Read, 50.0), 760.0, &mut r), 870.0);
        assert_eq!(s.suspensions, 0);
    }

    /// Suspension counts of operations that have ended are forgotten; those of an operation
    /// still in progress are kept.
    #[test]
    fn counts_of_ended_operations_are_swept() {
        let (mut s, mut r) = one_die("program", 1);
        for k in 0..2000 {
            let t = 1000.0 * k as f64;
            r.now = t;
            // Program: array t+10..t+810; a read at t+100 suspends it (until t+885).
            assert_eq!(s.serve(&op(OpKind::Program, 800.0), t, &mut r), t + 810.0);
            assert_eq!(
                s.serve(&op(OpKind::Read, 50.0), t + 100.0, &mut r),
                t + 180.0
            );
            // Still in progress: its count is kept through the sweeps.
            assert_eq!(s.suspends(s.next_op), 1, "{k}");
        }
        assert_eq!(s.suspensions, 2000);
        assert!(s.suspends.len() < 1024, "{}", s.suspends.len());
        // The last program is still in progress at 1_999_000: its cap (1) holds, a read at
        // 300 waits for it (its end, 885, then 50 of array time and 10 of transfer).
        let t = 1_999_000.0;
        assert_eq!(
            s.serve(&op(OpKind::Read, 50.0), t + 300.0, &mut r),
            t + 945.0
        );
    }

    /// A die's pieces as one plain vector with its past kept until drained: what [`Pieces`]
    /// must do.
    #[derive(Default)]
    struct Reference {
        pieces: Vec<Piece>,
        head: usize,
    }

    impl Reference {
        fn prune(&mut self, now: f64) {
            while self.head < self.pieces.len() && self.pieces[self.head].end <= now {
                self.head += 1;
            }
        }

        fn insert(&mut self, p: Piece) {
            if p.end > p.start {
                let i = self.pieces.partition_point(|q| q.start < p.start);
                self.pieces.insert(i, p);
            }
        }

        fn locate(&self, x: f64) -> usize {
            self.head + self.pieces[self.head..].partition_point(|q| q.end <= x)
        }

        /// The earliest start ≥ `ready` where `dur` fits between the pieces.
        fn gap(&self, ready: f64, dur: f64) -> f64 {
            let mut start = ready;
            for q in &self.pieces[self.locate(ready)..] {
                if start + dur <= q.start {
                    break;
                }
                start = start.max(q.end);
            }
            start
        }
    }

    fn piece(start: f64, end: f64, op: u64, in_suspension: bool) -> Piece {
        Piece::new(start, end, op, in_suspension)
    }

    fn check_chunks(p: &Pieces) {
        assert_eq!(p.chunks.len(), p.lasts.len());
        assert!(p.first < RETIRED && (p.first < p.chunks.len() || p.chunks.is_empty()));
        for (c, chunk) in p.chunks.iter().enumerate() {
            if c < p.first {
                assert!(chunk.is_empty(), "retired chunk {c}");
                continue;
            }
            assert!(chunk.len() > p.low(c) && chunk.len() <= CHUNK, "chunk {c}");
            assert_eq!(p.lasts[c], chunk[chunk.len() - 1]);
        }
    }

    /// Random pieces in integer µs placed in the earliest gap after a ready time spread far
    /// ahead of the present (thousands of pieces, most inserts in the middle), random pieces
    /// split in three as a suspension splits them, and the present moving on: the pieces from
    /// the present on, and the piece found after a time and those following it, are exactly
    /// the reference's.
    #[test]
    fn pieces_same_as_a_plain_vector() {
        let mut rng = crate::rng::Rng::new(26);
        for (spread, durs) in [
            (30.0, &[1.0, 2.0, 5.0][..]),
            (40_000.0, &[1.0, 3.0, 8.0, 50.0][..]),
            (200_000.0, &[20.0, 60.0, 800.0, 1500.0][..]),
        ] {
            let (mut p, mut r) = (Pieces::default(), Reference::default());
            let (mut now, mut most, mut last) = (0.0, 0, 0.0f64);
            for k in 0..12_000u64 {
                now += rng.below(3) as f64;
                p.prune(now);
                r.prune(now);
                let visible = r.pieces.len() - r.head;
                if rng.below(4) == 0 && visible > 0 {
                    // Split a piece around [a, b) inside it, as a suspension does.
                    let i = r.head + rng.below(visible as u64) as usize;
                    let q = r.pieces[i];
                    let len = (q.end - q.start) as u64;
                    let a = q.start + rng.below(len) as f64;
                    let b = a + 1.0 + rng.below((q.end - a) as u64) as f64;
                    let parts = [
                        piece(q.start, a, q.op(), false),
                        piece(a, b, q.op(), true),
                        piece(b, q.end, q.op(), false),
                    ];
                    let parts = parts.into_iter().filter(|x| x.end > x.start);
                    r.pieces.splice(i..=i, parts.clone());
                    let at = p.locate(q.start).unwrap();
                    p.replace(at, parts);
                } else {
                    // Half of them near the one before (as a request's or a GC's operations on a
                    // die are: the finger's case), the others anywhere.
                    let ready = if rng.below(2) == 0 {
                        last.max(now) + rng.below(4) as f64
                    } else {
                        now + (rng.f64() * spread).floor()
                    };
                    let dur = durs[rng.below(durs.len() as u64) as usize];
                    let start = r.gap(ready, dur);
                    let q = piece(start, start + dur, k, false);
                    last = start;
                    r.insert(q);
                    p.insert(q);
                }
                let x = now + (rng.f64() * spread).floor();
                let (mut i, mut at) = (r.locate(x), p.locate(x));
                for _ in 0..3 {
                    assert_eq!(r.pieces.get(i).copied(), at.map(|a| p.get(a)), "{k}");
                    at = at.and_then(|a| p.next(a));
                    i += 1;
                }
                if k % 97 == 0 {
                    assert_eq!(p.all(), r.pieces[r.head..], "{k}");
                    check_chunks(&p);
                }
                most = most.max(r.pieces.len() - r.head);
            }
            assert_eq!(p.all(), r.pieces[r.head..]);
            assert!(most >= 10 * CHUNK, "{spread}: {most}");
        }
    }
}
