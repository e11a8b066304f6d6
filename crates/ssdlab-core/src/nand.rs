//! NAND array accounting: every page read, page program and block erase goes through here,
//! tagged with its cause and address. WAF and every "by cause" breakdown derive from these
//! counters and nowhere else.

use crate::config::NandConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// Data the host wrote (flushed from the buffer) or reads it missed in the buffer.
    Host = 0,
    /// Block padding: pages read and rewritten to complete a block before a flush.
    Pad = 1,
    /// Read-modify-write of a partially written page.
    Rmw = 2,
    /// Garbage collection copies.
    Gc = 3,
    /// Hybrid-FTL merges (switch / partial / full).
    Merge = 4,
    /// Mapping-table pages (demand-based FTLs).
    Map = 5,
    /// Pages the controller reads ahead of a sequential read stream (`[readahead]`): reads only.
    ReadAhead = 6,
}

/// Causes a counter array holds (every [`Cause`]).
pub const CAUSE_SLOTS: usize = 7;

/// The causes every run reports (`nand.programs.<cause>`, `nand.reads.<cause>`); read-ahead's
/// reads are reported only when it is on (`nand.reads.readahead`).
pub const CAUSES: [Cause; 6] = [
    Cause::Host,
    Cause::Pad,
    Cause::Rmw,
    Cause::Gc,
    Cause::Merge,
    Cause::Map,
];

/// The causes of reads a host request waits for: its own data, and the map reads that locate it.
const URGENT_READS: u8 = 1 << Cause::Host as u8 | 1 << Cause::Map as u8;

impl Cause {
    /// Whether a read of this cause is one a host request waits for (the schedulers serve it
    /// first; a read-ahead's is not).
    #[inline(always)]
    pub fn urgent_read(self) -> bool {
        URGENT_READS >> self as u8 & 1 != 0
    }

    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Pad => "pad",
            Cause::Rmw => "rmw",
            Cause::Gc => "gc",
            Cause::Merge => "merge",
            Cause::Map => "map",
            Cause::ReadAhead => "readahead",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NandCounters {
    pub programs: [u64; CAUSE_SLOTS],
    pub reads: [u64; CAUSE_SLOTS],
    pub erases: u64,
}

impl NandCounters {
    pub fn programs_total(&self) -> u64 {
        self.programs.iter().sum()
    }
    pub fn reads_total(&self) -> u64 {
        self.reads.iter().sum()
    }
    pub fn minus(&self, base: &NandCounters) -> NandCounters {
        let mut out = self.clone();
        for i in 0..CAUSE_SLOTS {
            out.programs[i] -= base.programs[i];
            out.reads[i] -= base.reads[i];
        }
        out.erases -= base.erases;
        out
    }
}

/// What a NAND operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum OpKind {
    Read = 0,
    Program = 1,
    Erase = 2,
}

/// One NAND operation with its address, as the timed engine schedules it: `addr` is the PPN of a
/// read or program and the block number of an erase (the FTL's numbering; the timed engine maps
/// it to a channel and die).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NandOp {
    pub kind: OpKind,
    pub cause: Cause,
    /// The operation this one needs done first (its data dependency), as a distance back in the
    /// log: 0 = none, [`AFTER_ALL`] = farther back than a distance holds (it then waits for
    /// every operation before it).
    pub after: u16,
    pub addr: u32,
}

/// [`NandOp::after`]: the dependency is this far back or farther.
pub const AFTER_ALL: u16 = u16::MAX;

impl NandOp {
    /// An operation that waits for nothing of its batch.
    pub fn new(kind: OpKind, cause: Cause, addr: u32) -> NandOp {
        NandOp {
            kind,
            cause,
            after: 0,
            addr,
        }
    }
}

/// A logged operation, for later ones to wait for ([`Nand::mark`]): its number in the log's
/// history (0 = none: nothing logged, or not logging). An operation that waits for one from
/// before its batch ([`Nand::new_batch`]) waits for nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark(u64);

impl Mark {
    pub const NONE: Mark = Mark(0);
}

/// Per-block wear, the cause-tagged operation counters and, in timed mode, the log of operations
/// since the engine last took them.
#[derive(Clone, Debug)]
pub struct Nand {
    pub counters: NandCounters,
    pub erase_counts: Vec<u32>,
    logging: bool,
    log: Vec<NandOp>,
    /// Operations logged so far (the last one's [`Mark`]), and when the batch began: the timed
    /// engine places a batch's operations together (a request's, a drained flush's, a GC step's).
    logged: u64,
    batch_start: u64,
    /// Added to the block an FTL erases, for its wear count (one of several FTLs side by side,
    /// the partitioned FTL, which moves the addresses it logs itself); 0 otherwise.
    base_pbn: u32,
}

impl Nand {
    pub fn new(physical_blocks: u64) -> Self {
        Nand {
            counters: NandCounters::default(),
            erase_counts: vec![0; physical_blocks as usize],
            logging: false,
            log: Vec::new(),
            logged: 0,
            batch_start: 0,
            base_pbn: 0,
        }
    }

    /// Blocks erased from now on are an FTL's whose blocks start at `pbn`.
    #[inline]
    pub fn set_block_base(&mut self, pbn: u32) {
        self.base_pbn = pbn;
    }
    #[inline]
    pub fn read(&mut self, cause: Cause, ppn: u32) {
        self.read_after(cause, ppn, Mark::NONE);
    }
    /// A read that needs operation `after` done first (e.g. a data read after the map read that
    /// located it).
    #[inline]
    pub fn read_after(&mut self, cause: Cause, ppn: u32, after: Mark) {
        self.counters.reads[cause as usize] += 1;
        self.record(OpKind::Read, cause, ppn, after);
    }
    #[inline]
    pub fn program(&mut self, cause: Cause, ppn: u32) {
        self.program_after(cause, ppn, Mark::NONE);
    }
    /// A program that needs operation `after` done first (the read of the data it writes: a
    /// copy, a read-modify-write).
    #[inline]
    pub fn program_after(&mut self, cause: Cause, ppn: u32, after: Mark) {
        self.counters.programs[cause as usize] += 1;
        self.record(OpKind::Program, cause, ppn, after);
    }
    /// An erase (timed mode waits for every operation logged before it in its batch).
    #[inline]
    pub fn erase(&mut self, pbn: u32) {
        self.counters.erases += 1;
        self.erase_counts[(pbn + self.base_pbn) as usize] += 1;
        self.record(OpKind::Erase, Cause::Host, pbn, Mark::NONE);
    }

    /// The operation logged last (NONE when not logging).
    #[inline]
    pub fn mark(&self) -> Mark {
        if self.logging {
            Mark(self.logged)
        } else {
            Mark::NONE
        }
    }
    /// The operation logged last if it was logged after `before` (an earlier [`Nand::mark`]):
    /// what a call made between them issued last; NONE if it issued nothing.
    #[inline]
    pub fn mark_since(&self, before: Mark) -> Mark {
        if self.mark() != before {
            self.mark()
        } else {
            Mark::NONE
        }
    }

    /// Keep a log of every operation with its address (timed mode); off, nothing is kept.
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
        self.clear_log();
    }
    /// The operations logged from now on are placed apart from those before (the timed engine's
    /// next batch): none of them waits for an earlier one.
    #[inline]
    pub fn new_batch(&mut self) {
        self.batch_start = self.logged;
    }
    /// Whether operations are logged: callers that count operations in bulk
    /// ([`Nand::log_copy`]) only walk their addresses then.
    #[inline]
    pub fn logging(&self) -> bool {
        self.logging
    }
    /// Log a copy (a read of `src`, then a program of `dst`) whose counts the caller adds in bulk.
    #[inline]
    pub fn log_copy(&mut self, cause: Cause, src: u32, dst: u32) {
        self.record(OpKind::Read, cause, src, Mark::NONE);
        let read = self.mark();
        self.record(OpKind::Program, cause, dst, read);
    }
    /// The operations logged since the last [`Nand::clear_log`], in issue order.
    pub fn log(&self) -> &[NandOp] {
        &self.log
    }
    /// The same, to move their addresses (the partitioned FTL).
    pub fn log_mut(&mut self) -> &mut [NandOp] {
        &mut self.log
    }
    /// Hand the log over and continue in `empty` (the clock thread's batches).
    pub fn swap_log(&mut self, empty: Vec<NandOp>) -> Vec<NandOp> {
        self.new_batch();
        std::mem::replace(&mut self.log, empty)
    }
    pub fn clear_log(&mut self) {
        self.new_batch();
        self.log.clear();
    }

    #[inline(always)]
    fn record(&mut self, kind: OpKind, cause: Cause, addr: u32, after: Mark) {
        if self.logging {
            self.logged += 1;
            // A mark from before this batch (or none) is no dependency: 0.
            let after = if after.0 <= self.batch_start {
                0
            } else {
                (self.logged - after.0).min(AFTER_ALL as u64) as u16
            };
            self.log.push(NandOp {
                kind,
                cause,
                after,
                addr,
            });
        }
    }
}

/// Serial NAND time in µs (the seeds' "elapsed time"): every page read and program (each with
/// its bus transfer) plus every erase, summed one after the other, as if the device had one die
/// and one channel. The same sum in both modes; timed mode's clock is `time.simulated_us`.
pub fn nand_serial_us(c: &NandCounters, t: &NandConfig, page_bytes: u64) -> f64 {
    let transfer = t.page_transfer_us(page_bytes);
    c.reads_total() as f64 * (t.read_us + transfer)
        + c.programs_total() as f64 * (t.program_us + transfer)
        + c.erases as f64 * t.erase_us
}
