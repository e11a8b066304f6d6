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
}

pub const CAUSES: [Cause; 6] = [
    Cause::Host,
    Cause::Pad,
    Cause::Rmw,
    Cause::Gc,
    Cause::Merge,
    Cause::Map,
];

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Pad => "pad",
            Cause::Rmw => "rmw",
            Cause::Gc => "gc",
            Cause::Merge => "merge",
            Cause::Map => "map",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NandCounters {
    pub programs: [u64; 6],
    pub reads: [u64; 6],
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
        for i in 0..6 {
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
    pub addr: u32,
}

/// Per-block wear, the cause-tagged operation counters and, in timed mode, the log of operations
/// since the engine last took them.
#[derive(Clone, Debug)]
pub struct Nand {
    pub counters: NandCounters,
    pub erase_counts: Vec<u32>,
    logging: bool,
    log: Vec<NandOp>,
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
        self.counters.reads[cause as usize] += 1;
        self.record(OpKind::Read, cause, ppn);
    }
    #[inline]
    pub fn program(&mut self, cause: Cause, ppn: u32) {
        self.counters.programs[cause as usize] += 1;
        self.record(OpKind::Program, cause, ppn);
    }
    #[inline]
    pub fn erase(&mut self, pbn: u32) {
        self.counters.erases += 1;
        self.erase_counts[(pbn + self.base_pbn) as usize] += 1;
        self.record(OpKind::Erase, Cause::Host, pbn);
    }

    /// Keep a log of every operation with its address (timed mode); off, nothing is kept.
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
        self.log.clear();
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
        self.record(OpKind::Read, cause, src);
        self.record(OpKind::Program, cause, dst);
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
        std::mem::replace(&mut self.log, empty)
    }
    pub fn clear_log(&mut self) {
        self.log.clear();
    }

    #[inline(always)]
    fn record(&mut self, kind: OpKind, cause: Cause, addr: u32) {
        if self.logging {
            self.log.push(NandOp { kind, cause, addr });
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
