//! Configuration: typed sections with documented defaults, parsed from TOML or JSON.
//! Unknown keys are errors that list the valid ones; values are validated with the field named.
//! The public section and key names are documented in docs/config.md.

use crate::error::{field_error, Result, SimError};
use crate::params::Tables;
use crate::trace::GenericSpec;
use crate::units::{check_power_of_two, Size, SizeVisitor, SECTOR_BYTES};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub workload: WorkloadConfig,
    pub device: DeviceConfig,
    pub nand: NandConfig,
    pub ftl: FtlConfig,
    pub buffer: BufferConfig,
    pub placement: PlacementConfig,
    pub run: RunConfig,
    /// Timed mode: the controller's firmware cores (`[controller]`).
    pub controller: ControllerConfig,
    /// Timed mode: the host interface's link and arbitration (`[host]`).
    pub host: HostConfig,
    /// Sequential-stream detection and read-ahead into the controller's DRAM (`[readahead]`;
    /// off by default).
    pub readahead: ReadAheadConfig,
    /// NVMe Flexible Data Placement on the page FTL (`[fdp]`; off by default).
    #[serde(skip_serializing_if = "FdpConfig::is_default")]
    pub fdp: FdpConfig,
    /// Timed mode: several I/O flows (tenants) sharing the device, `[[flows]]`; empty = one
    /// flow, the `[workload]` with `run.queue_depth` and `run.max_inflight`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowConfig>,
    /// GC policies' parameter tables, `[gc.<name>]` (the policy is chosen by `ftl.gc`).
    #[serde(skip_serializing_if = "Tables::is_empty")]
    pub gc: Tables,
    /// Padding policies' parameter tables, `[padding.<name>]` (chosen by `buffer.padding`).
    #[serde(skip_serializing_if = "Tables::is_empty")]
    pub padding: Tables,
    /// Timed mode's schedulers' parameter tables, `[scheduler.<name>]` (chosen by
    /// `device.scheduler`).
    #[serde(skip_serializing_if = "Tables::is_empty")]
    pub scheduler: Tables,
    /// Warnings found while parsing (sizes with decimal units); `simulate` reports them.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// `[workload]`: the trace's keys and the synthetic generators' shared keys; a generator's own
/// parameters are in its table (`[workload.desktop]`, `[workload.fio]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadConfig {
    /// trace | uniform | zipf | sequential | fio | desktop
    pub kind: String,
    /// Trace file (kind = trace).
    pub path: Option<String>,
    /// Trace format name; None = auto-detect.
    pub format: Option<String>,
    /// Keep only this device / volume / LUN of the trace.
    pub device: Option<u32>,
    /// A trace with several volumes: merge (one address space, addresses alias) or separate
    /// (each volume its own range of the device, in the order first seen); None = merged, with
    /// a warning when the trace holds several.
    pub volumes: Option<String>,
    /// blkparse action to replay: Q, D or C (default D when present, else Q).
    pub blkparse_action: Option<String>,
    /// Column layout for format = "generic".
    pub generic: Option<GenericSpec>,
    /// Which time stamp a trace with two replays: flashnet `submit` (default) or `record`.
    pub timestamp: Option<String>,
    /// Count and skip malformed trace records instead of failing.
    pub skip_invalid: bool,
    /// How trace addresses meet the device: none (error beyond capacity), fold (modulo the
    /// logical capacity), compact (logical blocks renumbered densely in first-touch order).
    pub address_map: String,
    /// Synthetic: number of requests.
    pub requests: u64,
    /// Synthetic: request size (fio bs; `workload.fio.bssplit` or a fio job's bs replaces it).
    pub request_bytes: Size,
    /// Synthetic: address range touched.
    pub footprint_bytes: Size,
    /// Synthetic: share of read requests.
    pub read_fraction: f64,
    /// Synthetic: Zipf skew (kind = zipf, fio, desktop).
    pub zipf_theta: f64,
    /// Synthetic: number of interleaved sequential streams (sequential, fio).
    pub streams: u32,
    /// Synthetic: seed; None = run.seed.
    pub seed: Option<u64>,
    /// Synthetic: arrival times (timed mode, open loop): fixed (every 1/iops s) | poisson.
    pub arrival: String,
    /// Synthetic: mean arrival rate in requests per second.
    pub iops: f64,
    /// Synthetic: the FDP placement identifiers of the writes (`[fdp]`): streams (each write's
    /// stream hint: its sequential stream, the desktop profile's sequential bursts 1) | none;
    /// None = none (identifier 0), left out of resolved configurations so that stored results
    /// keep their keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_ids: Option<String>,
    /// Generators' parameter tables by name (`[workload.desktop]`).
    #[serde(flatten)]
    pub tables: Tables,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: "desktop".into(),
            path: None,
            format: None,
            device: None,
            volumes: None,
            blkparse_action: None,
            generic: None,
            timestamp: None,
            skip_invalid: false,
            address_map: "none".into(),
            requests: 200_000,
            request_bytes: Size(4096),
            footprint_bytes: Size(256 << 20),
            read_fraction: 0.0,
            zipf_theta: 0.9,
            streams: 1,
            seed: None,
            arrival: "fixed".into(),
            iops: 10_000.0,
            placement_ids: None,
            tables: Tables::new(),
        }
    }
}

/// `device.logical_bytes`: a size, or "auto" (sized from the workload's footprint).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Capacity {
    #[default]
    Auto,
    Bytes(u64),
}

impl Serialize for Capacity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Capacity::Auto => s.serialize_str("auto"),
            Capacity::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for Capacity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Capacity;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a size such as 16MiB, or \"auto\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Capacity, E> {
                SizeVisitor.visit_u64(v).map(Capacity::Bytes)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Capacity, E> {
                SizeVisitor.visit_i64(v).map(Capacity::Bytes)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Capacity, E> {
                SizeVisitor.visit_f64(v).map(Capacity::Bytes)
            }
            fn visit_str<E: serde::de::Error>(self, t: &str) -> std::result::Result<Capacity, E> {
                if t.trim().eq_ignore_ascii_case("auto") {
                    Ok(Capacity::Auto)
                } else {
                    SizeVisitor.visit_str(t).map(Capacity::Bytes)
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    pub page_bytes: Size,
    pub pages_per_block: u64,
    pub logical_bytes: Capacity,
    /// Over-provisioning ρ = physical / logical − 1; unset: [`DEFAULT_OP`], except that the line
    /// FTL paced as pblk over-provisions as pblk does when it is not given
    /// (the lines FTL's `provision`). The resolved configuration holds the value used.
    pub op: Option<f64>,
    /// Timed mode: channels (each a bus shared by its chips).
    pub channels: u32,
    /// Timed mode: chips on each channel.
    pub chips_per_channel: u32,
    /// Timed mode: dies per chip (each executes one array operation at a time).
    pub dies_per_chip: u32,
    /// Timed mode: planes per die. Above 1, a block stripes over every plane of every die and a
    /// request's operations on one die's planes at one page offset run as one multi-plane
    /// operation (timed mode's grouping, docs/config.md).
    pub planes_per_die: u32,
    /// Timed mode: how a block's consecutive pages stripe over the dies: channel-first (next
    /// page on the next channel) | die-first (next page on the next die of the same channel).
    pub stripe: String,
    /// Timed mode: the scheduler between the host queue and the dies (registry; `[scheduler.<name>]`).
    pub scheduler: String,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            page_bytes: Size(4096),
            pages_per_block: 128,
            logical_bytes: Capacity::Auto,
            op: None,
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            stripe: "channel-first".into(),
            scheduler: "fifo".into(),
        }
    }
}

/// `device.op` when it is not given.
pub const DEFAULT_OP: f64 = 0.07;

impl DeviceConfig {
    /// The over-provisioning ρ: `op`, or [`DEFAULT_OP`] when it is not given.
    pub fn op(&self) -> f64 {
        self.op.unwrap_or(DEFAULT_OP)
    }

    /// Dies in the device.
    pub fn dies(&self) -> u64 {
        self.channels as u64 * self.chips_per_channel as u64 * self.dies_per_chip as u64
    }
}

/// NAND costs in microseconds (defaults: the MLC figures of seed 000, Table 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NandConfig {
    pub read_us: f64,
    pub program_us: f64,
    pub erase_us: f64,
    /// Bus transfer per page, added to every page read and program (see `channel_mb_s`).
    pub transfer_us: f64,
    /// Channel bandwidth in MB/s (10^6 bytes): a page's transfer takes page_bytes / channel_mb_s
    /// µs; 0 = `transfer_us` per page. Set one of the two.
    pub channel_mb_s: f64,
    /// Timed mode: channel time of each operation's command and address cycles.
    pub command_us: f64,
    /// Timed mode: time to move one page between the host and the buffer's DRAM (a buffered
    /// write, a read hit).
    pub dram_us: f64,
    /// Timed mode: array times (read, program, erase) are fixed | exponential (with the
    /// configured mean; for checks against queueing theory).
    pub service: String,
    /// Timed mode: cell type, slc | mlc | tlc: page types (LSB, CSB, MSB) with their own read and
    /// program times; `read_us` and `program_us` are the LSB page's.
    pub cell: String,
    /// mlc, tlc: the CSB (tlc) and MSB pages' array read and program times.
    pub read_csb_us: Option<f64>,
    pub read_msb_us: Option<f64>,
    pub program_csb_us: Option<f64>,
    pub program_msb_us: Option<f64>,
    /// Timed mode, page FTL: the NAND page, a multiple of `device.page_bytes` (the mapping unit);
    /// unset = the mapping unit.
    pub physical_page_bytes: Option<Size>,
    /// Timed mode: reads suspend programs and erases: none | program | program-erase.
    pub suspend: String,
    /// Time to suspend an operation (before the read's array time) and to resume it.
    pub suspend_us: f64,
    pub resume_us: f64,
    /// Suspensions of one operation at most; then reads wait for it.
    pub max_suspends: u32,
}

impl Default for NandConfig {
    fn default() -> Self {
        NandConfig {
            read_us: 60.0,
            program_us: 800.0,
            erase_us: 1500.0,
            transfer_us: 0.0,
            channel_mb_s: 0.0,
            command_us: 0.0,
            dram_us: 1.0,
            service: "fixed".into(),
            cell: "slc".into(),
            read_csb_us: None,
            read_msb_us: None,
            program_csb_us: None,
            program_msb_us: None,
            physical_page_bytes: None,
            suspend: "none".into(),
            suspend_us: 20.0,
            resume_us: 0.0,
            max_suspends: 4,
        }
    }
}

impl NandConfig {
    /// Bus transfer time of one page of `page_bytes` in µs.
    pub fn page_transfer_us(&self, page_bytes: u64) -> f64 {
        if self.channel_mb_s > 0.0 {
            page_bytes as f64 / self.channel_mb_s
        } else {
            self.transfer_us
        }
    }

    /// Mapping units per NAND page (`physical_page_bytes` / `device.page_bytes`; 1 if unset or
    /// not a multiple, which validation rejects).
    pub fn units_per_page(&self, page_bytes: u64) -> u64 {
        match self.physical_page_bytes {
            Some(Size(b)) if b >= page_bytes && page_bytes > 0 && b % page_bytes == 0 => {
                b / page_bytes
            }
            _ => 1,
        }
    }

    /// Array (read, program) times of each page type: 1 (slc), 2 (mlc: LSB, MSB) or 3 (tlc:
    /// LSB, CSB, MSB); unset times take the LSB page's (validation rejects that).
    pub fn page_type_times(&self) -> Vec<(f64, f64)> {
        let (r, p) = (self.read_us, self.program_us);
        let msb = (
            self.read_msb_us.unwrap_or(r),
            self.program_msb_us.unwrap_or(p),
        );
        let csb = (
            self.read_csb_us.unwrap_or(r),
            self.program_csb_us.unwrap_or(p),
        );
        match self.cell.as_str() {
            "mlc" => vec![(r, p), msb],
            "tlc" => vec![(r, p), csb, msb],
            _ => vec![(r, p)],
        }
    }
}

/// `[ftl]`: the FTL and the keys several FTLs share; an FTL's own parameters are in its table
/// (`[ftl.page]`, `[ftl.bast]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FtlConfig {
    pub kind: String,
    /// GC victim selection of FTLs that collect garbage (page): greedy | cost-benefit | fifo.
    pub gc: String,
    /// Hybrid FTLs (bast, fast): log blocks, FAST's SW log included; 0 = automatic
    /// (3% of the data blocks, at least 2).
    pub log_blocks: u64,
    /// Hybrid FTLs: which merges feed the padding model's R_DB / R_LB / U_LB: seed (full merges,
    /// and switch merges that reclaim log blocks early; seed 000 §3.5) | all-merges.
    pub model_stats: String,
    /// Hybrid FTLs, seed 002's log-block utilisation at merge: which pages of a merged log
    /// block count as used: written (programmed, valid or not; seed 002 §3.3) | valid.
    pub log_utilisation: String,
    /// Timed mode, page FTL: collect garbage in the background while the device is idle.
    pub background_gc: bool,
    /// Idle time (µs, no request in the device) before background GC starts.
    pub background_gc_idle_us: f64,
    /// FTLs' parameter tables by name.
    #[serde(flatten)]
    pub tables: Tables,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: "page".into(),
            gc: "greedy".into(),
            log_blocks: 0,
            model_stats: "seed".into(),
            log_utilisation: "written".into(),
            background_gc: false,
            background_gc_idle_us: 1000.0,
            tables: Tables::new(),
        }
    }
}

/// `[buffer]`: the write buffer and the keys every buffer shares; a policy's own parameters are
/// in its table (`[buffer.hitstat]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BufferConfig {
    pub kind: String,
    /// Capacity in bytes (ignored when `fraction` is set).
    pub bytes: Size,
    /// Capacity as a fraction of the workload's footprint (overrides `bytes`).
    pub fraction: Option<f64>,
    /// Pad-or-log decision for flushed groups: auto | none | fixed | model. `auto` = the buffer's
    /// own default (see registry::default_padding); the run's `Result.config` shows the policy used.
    pub padding: String,
    /// What a padded flush writes: all (every page of the block; offsets never written get filler,
    /// as seed 000 charges N page writes per padded flush) | existing (only pages with data).
    pub padding_fill: String,
    /// Timed mode: drain in the background while the buffer holds more than this fraction of its
    /// capacity (None = off).
    pub drain_watermark: Option<f64>,
    /// Timed mode: drain in the background once the device has been idle this long (µs; None =
    /// off).
    pub drain_idle_us: Option<f64>,
    /// Timed mode: the write path's sustained rate (MB/s, 10^6 bytes): flushed pages leave the
    /// buffer's DRAM no faster (None = as fast as their programs complete).
    pub drain_mb_s: Option<f64>,
    /// Timed mode: when a flushed page's slot is free for another page: on-program (when its
    /// flush's operations complete) | on-evict (as it leaves the buffer; SSDsim's insert2buffer).
    pub release: String,
    /// Timed mode: how writes get slots in the buffer's DRAM: earliest-slot (each page the
    /// earliest free slot, whoever waits) | in-order (a write is admitted no earlier than the
    /// write handled before it: a firmware queue of writes waiting for cache space).
    pub admission: String,
    /// Buffers' parameter tables by name.
    #[serde(flatten)]
    pub tables: Tables,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            kind: "lru".into(),
            bytes: Size(16 << 20),
            fraction: None,
            padding: "auto".into(),
            padding_fill: "all".into(),
            drain_watermark: None,
            drain_idle_us: None,
            drain_mb_s: None,
            release: "on-program".into(),
            admission: "earliest-slot".into(),
            tables: Tables::new(),
        }
    }
}

/// `[placement]`: which open line (write frontier) each page goes to, by the classifier `kind`
/// (registry; its parameters in `[placement.<kind>]`). FTLs with several frontiers (`lines`,
/// `page`) use it; `none` keeps the FTL's own placement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlacementConfig {
    pub kind: String,
    /// Classifiers' parameter tables by name.
    #[serde(flatten)]
    pub tables: Tables,
}

impl Default for PlacementConfig {
    fn default() -> Self {
        PlacementConfig {
            kind: "none".into(),
            tables: Tables::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub seed: u64,
    /// none | fill (write every logical page once, sequentially, before the run; not measured)
    /// | fill-random (fill, then single-page writes at uniformly random pages, twice the
    /// logical pages in all: a measurement campaign's preconditioning to steady state).
    pub precondition: String,
    /// Requests at the start of the run whose operations are excluded from the metrics.
    pub warmup_requests: u64,
    /// Replay the workload this many times.
    pub repeat: u32,
    /// Verify the mapping against the latest written versions after every GC and at the end.
    pub check_integrity: bool,
    /// Parse trace files on a second thread (same results, faster replay of text traces).
    pub reader_thread: bool,
    /// Timed mode: place operations in time on a second thread while the next requests are
    /// simulated (same results; only where time feeds nothing back into the simulation).
    pub clock_thread: bool,
    /// Record a time-series row every this many requests (warm-up included) and at the end;
    /// 0 = off.
    pub sample_every: u64,
    /// counts (NAND operations and their summed cost, no clock) | timed (a discrete-event model
    /// of channels, dies and the host queue: latencies and throughput).
    pub mode: String,
    /// Timed mode: requests outstanding in a closed loop (arrival times ignored); 0 = open loop,
    /// requests arrive at the trace's (or the generator's) times.
    pub queue_depth: u32,
    /// Timed mode, open loop: factor on arrival times (0.5 = twice as fast).
    pub time_scale: f64,
    /// Timed mode: the order in which the controller takes requests from the host interface's
    /// queue: fifo | read-priority | write-stop (docs/config.md, "Timed mode").
    pub scheduler: String,
    /// Timed mode, open loop: at most this many requests outstanding (a replayer's threads); a
    /// request waits for a completion beyond it. 0 = no cap.
    pub max_inflight: u32,
    /// With `[[flows]]`: also run each flow alone on the device, for its slowdown and the
    /// fairness between flows.
    pub alone: bool,
    /// With `[[flows]]`: requests submitted before this simulated time (µs) are not measured
    /// (fio's `ramp_time`); 0 = off (`warmup_requests` counts instead).
    pub warmup_us: f64,
    /// With `[[flows]]`: no request is submitted after the warm-up plus this much simulated
    /// time (µs; fio's `runtime` of a `time_based` job); each workload's request count still
    /// bounds the run. 0 = off.
    pub runtime_us: f64,
}

impl RunConfig {
    /// Whether the device is filled before the run (`fill`, `fill-random`).
    pub fn fills(&self) -> bool {
        self.precondition != "none"
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 1,
            precondition: "none".into(),
            warmup_requests: 0,
            repeat: 1,
            check_integrity: false,
            reader_thread: true,
            clock_thread: true,
            sample_every: 0,
            mode: "counts".into(),
            queue_depth: 32,
            time_scale: 1.0,
            scheduler: "fifo".into(),
            max_inflight: 0,
            alone: false,
            warmup_us: 0.0,
            runtime_us: 0.0,
        }
    }
}

/// `[controller]`: the firmware cores that handle host commands (timed mode; docs/config.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// Cores serving commands, each one command at a time; 0 = no controller time (off).
    pub cores: u32,
    /// Firmware time per host command (µs).
    pub command_us: f64,
    /// Firmware time per page of a command (µs): mapping lookup, DMA set-up.
    pub page_us: f64,
    /// Firmware time of a write command (µs); None = `command_us`.
    pub write_command_us: Option<f64>,
    /// Each submission queue's commands are handled by one core (queue `i` by core `i mod
    /// cores`), as NVMe controllers bind queues to cores; false: the earliest free core.
    pub queue_affinity: bool,
    /// Idle time (µs) after which the controller enters a low-power state (NVMe APST).
    pub sleep_after_us: f64,
    /// Exit latency (µs) of that state: the first command after it waits this long; 0 = off.
    pub wake_us: f64,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            cores: 0,
            command_us: 0.0,
            page_us: 0.0,
            write_command_us: None,
            queue_affinity: false,
            sleep_after_us: 100_000.0,
            wake_us: 0.0,
        }
    }
}

/// `[host]`: the link between host and device and, with several flows, how the controller
/// fetches their commands (timed mode; docs/config.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Bandwidth shared by reads' and writes' data in MiB/s; 0 = unlimited.
    pub link_mib_s: f64,
    /// NVMe arbitration between the flows' submission queues: round-robin |
    /// weighted-round-robin (urgent class first, then by `weight`).
    pub arbitration: String,
    /// Commands the controller holds at once (fetched, not completed); a submission queue's
    /// head waits for a free one and the arbitration picks which queue gets it. 0 = no limit.
    pub device_queue_depth: u32,
    /// With `[[flows]]`: CPU time (µs) each request costs the core of the thread that submits
    /// it (submission and completion handling; one fio job is one thread). A core handles
    /// its completions one at a time, so a thread tops out at 1 / `cpu_us` requests per µs.
    /// 0 = off.
    pub cpu_us: f64,
    /// The part of `cpu_us` spent submitting the next request (fio's slat): a request's
    /// latency ends when its completion is handled, and its thread's next request reaches the
    /// device this much later. At most `cpu_us`.
    pub submit_us: f64,
    /// With `[[flows]]`: from a completion to when a thread that was idle (asleep, waiting for
    /// it) starts handling it: interrupt delivery and wake-up (µs). A busy thread takes the
    /// completion when it is done with what it was doing. 0 = off.
    pub wake_us: f64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            link_mib_s: 0.0,
            arbitration: "round-robin".into(),
            device_queue_depth: 0,
            cpu_us: 0.0,
            submit_us: 0.0,
            wake_us: 0.0,
        }
    }
}

/// `[readahead]`: the controller detects sequential read streams and reads the pages after them
/// into its DRAM before the host asks (docs/config.md). Off by default (`pages = 0`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReadAheadConfig {
    /// Logical pages read ahead beyond a detected stream's last read; 0 = off.
    pub pages: u32,
    /// Consecutive sequential reads that make a stream (a read whose first page follows a
    /// tracked stream's last read page continues it).
    pub trigger: u32,
    /// Streams tracked at once; the least recently used is replaced.
    pub streams: u32,
    /// DRAM pages holding read-ahead data, the least recently filled evicted; 0 = 4 × `pages`
    /// × `streams`.
    pub cache_pages: u64,
}

impl Default for ReadAheadConfig {
    fn default() -> Self {
        ReadAheadConfig {
            pages: 0,
            trigger: 2,
            streams: 8,
            cache_pages: 0,
        }
    }
}

/// The most pages the read-ahead cache may hold (its slots are numbered in 32 bits).
pub const READAHEAD_MAX_CACHE_PAGES: u64 = 1 << 31;

impl ReadAheadConfig {
    /// Whether read-ahead is on.
    pub fn on(&self) -> bool {
        self.pages > 0
    }

    /// The read-ahead cache's pages: `cache_pages`, or 4 × `pages` × `streams`.
    pub fn cache(&self) -> u64 {
        if self.cache_pages > 0 {
            self.cache_pages
        } else {
            (4 * self.pages as u64).saturating_mul(self.streams as u64)
        }
    }

    fn check(&self, e: &mut FieldErrors) {
        e.at_least_one("readahead.trigger", self.trigger as u64);
        e.at_least_one("readahead.streams", self.streams as u64);
        if self.cache_pages > READAHEAD_MAX_CACHE_PAGES {
            e.fail(
                "readahead.cache_pages",
                format!(
                    "{} pages; at most {READAHEAD_MAX_CACHE_PAGES}",
                    self.cache_pages
                ),
            );
        }
    }

    /// What read-ahead needs of its other keys once it is on.
    fn check_relations(&self, fail: &mut impl FnMut(&str, String)) {
        if !self.on() {
            return;
        }
        if self.cache_pages > 0 && self.cache_pages < self.pages as u64 {
            fail(
                "readahead.cache_pages",
                format!(
                    "{} pages cannot hold one read-ahead window of readahead.pages = {}",
                    self.cache_pages, self.pages
                ),
            );
        }
        if self.cache_pages == 0 && self.cache() > READAHEAD_MAX_CACHE_PAGES {
            fail(
                "readahead.streams",
                format!(
                    "the default readahead.cache_pages, 4 × pages × streams = 4 × {} × {}, is over \
                     {READAHEAD_MAX_CACHE_PAGES} pages; set readahead.cache_pages",
                    self.pages, self.streams
                ),
            );
        }
    }
}

pub const FDP_INITIALLY: &str = "initially-isolated";
pub const FDP_PERSISTENTLY: &str = "persistently-isolated";
/// The most handles (RUHs) a device may have here (the specification allows 65,535; shipped
/// FDP SSDs have 8 to 128).
pub const FDP_MAX_HANDLES: u32 = 256;
/// The most reclaim groups.
pub const FDP_MAX_GROUPS: u32 = 64;

crate::params! {
    /// NVMe Flexible Data Placement on the page FTL (`[fdp]`; docs/config.md; its rules are
    /// `ftl/fdp.rs`'s).
    pub struct FdpConfig {
        /// FDP on the page FTL: writes go to the open reclaim unit of the handle their placement identifier names.
        enabled: bool = false,
        /// Reclaim groups: the dies split into this many equal sets, each reclaimed on its own.
        reclaim_groups: u32 = 1,
        /// Reclaim unit handles (RUHs), each with one open reclaim unit per group.
        handles: u32 = 8,
        /// Reclaim unit size in bytes, a whole number of FTL blocks (superblocks across a group's dies); 0 = one.
        ru_bytes: Size = Size(0),
        /// initially-isolated (GC may mix handles' data) | persistently-isolated (GC keeps each handle's data apart).
        handle_type: String = FDP_INITIALLY.into(),
        /// Active reclaim unit time limit in seconds (the specification's ERUTL; 0 = none): a handle's RU open longer is switched for a new one at the handle's next write request, an "RU not fully written" event.
        ru_time_limit_s: f64 = 0.0,
    }
}

impl crate::params::Params for FdpConfig {
    fn check(&self, table: &str) -> Result<()> {
        if !(1..=FDP_MAX_GROUPS).contains(&self.reclaim_groups) {
            return Err(SimError::config(
                format!("{table}.reclaim_groups"),
                format!("{} is not in 1..={FDP_MAX_GROUPS}", self.reclaim_groups),
            ));
        }
        if !(1..=FDP_MAX_HANDLES).contains(&self.handles) {
            return Err(SimError::config(
                format!("{table}.handles"),
                format!("{} is not in 1..={FDP_MAX_HANDLES}", self.handles),
            ));
        }
        if !(self.ru_time_limit_s >= 0.0 && self.ru_time_limit_s.is_finite()) {
            return Err(SimError::config(
                format!("{table}.ru_time_limit_s"),
                format!("{} must be finite and ≥ 0", self.ru_time_limit_s),
            ));
        }
        crate::error::one_of(
            &format!("{table}.handle_type"),
            &self.handle_type,
            &[FDP_INITIALLY, FDP_PERSISTENTLY],
        )
    }
}

impl FdpConfig {
    /// Everything at its default (the section is left out of a resolved configuration, so
    /// that results without FDP keep their keys).
    pub fn is_default(&self) -> bool {
        *self == FdpConfig::default()
    }
}

/// `[[flows]]`: one I/O flow (a tenant) with its own submission queue (timed mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowConfig {
    /// Its requests (any kind, a trace included; `[flows.workload]`); addresses are relative
    /// to its range of the device.
    pub workload: WorkloadConfig,
    /// Requests outstanding in its closed loop; 0 = open loop at its arrival times.
    pub queue_depth: u32,
    /// Open loop: at most this many outstanding; 0 = no cap.
    pub max_inflight: u32,
    /// NVMe priority class: urgent | high | medium | low (weighted round robin).
    pub priority: String,
    /// Commands fetched from its queue per weighted-round-robin round.
    pub weight: u32,
    /// Its share of the device's logical capacity (its address range); None = an equal split
    /// (or, with `device.logical_bytes = "auto"`, its own footprint).
    pub share: Option<f64>,
    /// The channels its pages may use (empty = all).
    pub channels: Vec<u32>,
    /// The dies its pages may use, numbered channel by channel (`channel × dies per channel +
    /// way`; empty = all).
    pub dies: Vec<u32>,
    /// Flows with the same namespace share one range of logical pages (fio's jobs on one
    /// device: each job a flow); None = a range of its own.
    pub namespace: Option<u32>,
    /// The host core its submitting thread runs on (`host.cpu_us`): flows on one core share
    /// it. None = a core of its own.
    pub cpu: Option<u32>,
    /// Its first requests applied untimed before the measured replay (writes straight to the
    /// FTL, reads skipped; docs/config.md); 0 = none.
    pub fast_forward_requests: u64,
    /// The NVMe FDP placement identifier its writes carry (`[fdp]`), replacing its workload's
    /// own; None = the workload's.
    pub placement_id: Option<u16>,
    /// Its namespace's FDP placement handle list (`[fdp]`): a write naming placement handle k
    /// goes through reclaim unit handle `placement_handles[k]` (in its identifier's reclaim
    /// group); empty = handle k is RUH k. Flows of one namespace give the same list.
    pub placement_handles: Vec<u32>,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            workload: WorkloadConfig::default(),
            queue_depth: 32,
            max_inflight: 0,
            priority: "medium".into(),
            weight: 1,
            share: None,
            channels: Vec::new(),
            dies: Vec::new(),
            namespace: None,
            cpu: None,
            fast_forward_requests: 0,
            placement_id: None,
            placement_handles: Vec::new(),
        }
    }
}

impl FlowConfig {
    /// Whether it is confined to some channels or dies (its pages go to an FTL of their own).
    pub fn confined(&self) -> bool {
        !self.channels.is_empty() || !self.dies.is_empty()
    }
}

impl Config {
    /// The first flow of flow `i`'s namespace (`i` itself when it has a range of its own).
    pub fn namespace_leader(&self, i: usize) -> usize {
        match self.flows[i].namespace {
            Some(ns) => (0..i)
                .find(|&j| self.flows[j].namespace == Some(ns))
                .unwrap_or(i),
            None => i,
        }
    }

    /// Whether the host model is on (`host.cpu_us`, `host.wake_us`).
    pub fn host_model(&self) -> bool {
        self.host.cpu_us > 0.0 || self.host.wake_us > 0.0
    }

    /// Whether any flow is confined to channels or dies.
    pub fn flows_confined(&self) -> bool {
        self.flows.iter().any(FlowConfig::confined)
    }

    /// The dies flow `i` may use, ascending: those of its `channels` among its `dies` (each
    /// list empty = all).
    pub fn flow_dies(&self, i: usize) -> Vec<u32> {
        let f = &self.flows[i];
        let per_channel = self.device.chips_per_channel * self.device.dies_per_chip;
        (0..self.device.dies() as u32)
            .filter(|d| f.channels.is_empty() || f.channels.contains(&(d / per_channel)))
            .filter(|d| f.dies.is_empty() || f.dies.contains(d))
            .collect()
    }

    /// The configuration as flow `i` sees it: its workload, queue depth and cap in the places
    /// of the single-flow keys, and its synthetic seed (by default `run.seed` + i).
    pub fn flow_view(&self, i: usize) -> Config {
        let f = &self.flows[i];
        let mut c = self.clone();
        c.flows.clear();
        c.workload = f.workload.clone();
        c.workload.seed = Some(f.workload.seed.unwrap_or(self.run.seed + i as u64));
        c.run.queue_depth = f.queue_depth;
        c.run.max_inflight = f.max_inflight;
        c
    }
}

/// Sizes written with a decimal unit ("16MB"), found in the document's `*bytes` keys.
fn decimal_size_warnings(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                decimal_size_warnings(x, &p, out);
            }
        }
        serde_json::Value::String(t) if path.ends_with("bytes") => {
            if let Some(note) = crate::units::decimal_unit_note(t) {
                out.push(format!("{path} = {t} {note}"));
            }
        }
        _ => {}
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Where each key of a TOML text is: its dotted path (`buffer.hitstat.period`, array elements
/// as `jobs[1]`) and the line that gives it, from the parser's spans.
struct Places(Vec<(String, usize)>);

impl Places {
    fn new(text: &str) -> Places {
        let mut out = Vec::new();
        if let Ok(doc) = toml_edit::ImDocument::parse(text) {
            Self::table(doc.as_table(), "", text, &mut out);
        } else if let Some((_, masked, _)) = mask_out_of_range(text) {
            // Integers beyond TOML's range masked: every line keeps its number.
            if let Ok(doc) = toml_edit::ImDocument::parse(masked.as_str()) {
                Self::table(doc.as_table(), "", &masked, &mut out);
            }
        }
        Places(out)
    }

    fn table(t: &dyn toml_edit::TableLike, path: &str, text: &str, out: &mut Vec<(String, usize)>) {
        for (k, item) in t.iter() {
            let p = if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            };
            let span = t
                .get_key_value(k)
                .and_then(|(key, _)| key.span())
                .or_else(|| item.span());
            if let Some(s) = span {
                out.push((p.clone(), line_of(text, s.start)));
            }
            match item {
                toml_edit::Item::ArrayOfTables(a) => {
                    for (i, t) in a.iter().enumerate() {
                        let q = format!("{p}[{i}]");
                        if let Some(s) = t.span() {
                            out.push((q.clone(), line_of(text, s.start)));
                        }
                        Self::table(t, &q, text, out);
                    }
                }
                toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
                    for (i, v) in a.iter().enumerate() {
                        let q = format!("{p}[{i}]");
                        if let Some(s) = v.span() {
                            out.push((q.clone(), line_of(text, s.start)));
                        }
                        if let Some(t) = v.as_inline_table() {
                            Self::table(t, &q, text, out);
                        }
                    }
                }
                _ => {
                    if let Some(t) = item.as_table_like() {
                        Self::table(t, &p, text, out);
                    }
                }
            }
        }
    }

    /// The line that sets `path`, else the first line inside it (a table's first key).
    fn line(&self, path: &str) -> Option<usize> {
        let inside = |k: &str| {
            k.strip_prefix(path)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        };
        self.0
            .iter()
            .filter(|(k, _)| k == path)
            .map(|(_, l)| *l)
            .min()
            .or_else(|| {
                self.0
                    .iter()
                    .filter(|(k, _)| inside(k))
                    .map(|(_, l)| *l)
                    .min()
            })
    }
}

/// Errors found in a TOML file, each placed at `file:line` (a syntax error at the byte offset
/// it comes with, the others at the line of the key they name), in line order; all of them.
pub(crate) fn place_errors(
    errors: Vec<(SimError, Option<usize>)>,
    text: &str,
    file: &str,
) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    let places = Places::new(text);
    let mut placed: Vec<(Option<usize>, SimError)> = errors
        .into_iter()
        .flat_map(|(e, at)| {
            let at = at.map(|o| line_of(text, o));
            e.into_list().into_iter().map(move |e| (at, e))
        })
        .map(|(at, e)| {
            let line = at.or_else(|| match &e {
                SimError::Config { field, .. } => places.line(field),
                _ => None,
            });
            (line, e)
        })
        .collect();
    // Top to bottom; errors whose line is unknown last.
    placed.sort_by_key(|(l, _)| l.unwrap_or(usize::MAX));
    SimError::all(
        placed
            .into_iter()
            .map(|(l, e)| match l {
                Some(l) => e.at(format!("{file}:{l}")),
                None => e.at(file),
            })
            .collect(),
    )
}

/// A configuration parsed from a JSON value (what TOML and JSON texts become), with every error
/// found: unknown keys and wrong types. The configuration (with the wrong keys left out) is
/// there for further checks unless an error could not be isolated.
fn parse_value(mut v: serde_json::Value) -> (Option<Config>, Vec<SimError>) {
    let (c, mut errors) = crate::params::deserialize_all::<Config>(&mut v, "");
    let Some(mut c) = c else {
        return (None, errors);
    };
    errors.extend(c.take_stray_keys());
    decimal_size_warnings(&v, "", &mut c.warnings);
    (Some(c), errors)
}

/// Take the keys of `tables` that are not tables (a section's stray values) out of it, in order.
fn take_non_tables(tables: &mut Tables) -> Vec<String> {
    let stray: Vec<String> = tables
        .iter()
        .filter(|(_, v)| !v.is_object())
        .map(|(k, _)| k.clone())
        .collect();
    for k in &stray {
        tables.remove(k);
    }
    stray
}

/// What `mask_out_of_range` puts in place of a number (then its index).
const OUT_OF_RANGE: &str = "ssdlab-out-of-range-";

/// A masked text: its parsed value, the text, and each number (marker, as written, offset).
type Masked = (serde_json::Value, String, Vec<(String, String, usize)>);

/// A TOML text with each integer beyond TOML's 64-bit range replaced by a marker string, so
/// that it parses (the parser rejects such a number as a failure of the whole document, at the
/// number but without its key), and each number as (marker, number as written, byte offset in
/// `text`). None when the text does not parse for another reason too. Neither a number nor a
/// marker holds a newline: every line keeps its number.
fn mask_out_of_range(text: &str) -> Option<Masked> {
    const MAX_NUMBERS: usize = 64;
    let mut patched = text.to_string();
    let mut numbers = Vec::new();
    let mut shift = 0isize; // patched offset - original offset, past the markers so far
    loop {
        let e = match toml::from_str::<serde_json::Value>(&patched) {
            Ok(v) => return Some((v, patched, numbers)),
            Err(e) => e,
        };
        let overflow = ["number too large", "number too small"]
            .iter()
            .any(|m| e.message().contains(m));
        if !overflow || numbers.len() == MAX_NUMBERS {
            return None;
        }
        // The span may be the number, a part of it or a point in it: the whole token around it.
        let in_number = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-');
        let bytes = patched.as_bytes();
        let mut span = e.span().filter(|s| s.end <= bytes.len())?;
        while span.start > 0 && in_number(bytes[span.start - 1]) {
            span.start -= 1;
        }
        span.end = span.end.max(span.start);
        while span.end < bytes.len() && in_number(bytes[span.end]) {
            span.end += 1;
        }
        let number = patched.get(span.clone())?.to_string();
        if number.is_empty() || !number.bytes().all(in_number) {
            return None;
        }
        let marker = format!("{OUT_OF_RANGE}{}", numbers.len());
        let quoted = format!("\"{marker}\"");
        let at = (span.start as isize - shift) as usize;
        shift += quoted.len() as isize - (span.end - span.start) as isize;
        patched.replace_range(span, &quoted);
        numbers.push((marker, number, at));
    }
}

/// A file with integers beyond TOML's range: an error naming each one's key (at its offset),
/// and the file's other errors as for any file (placed by their keys: `Places` reads such a
/// text too). None when the text fails for another reason.
#[allow(clippy::type_complexity)]
fn out_of_range_integers(text: &str) -> Option<(Option<Config>, Vec<(SimError, Option<usize>)>)> {
    let (value, _, numbers) = mask_out_of_range(text)?;
    let mut paths = Vec::new();
    for (marker, number, at) in &numbers {
        let path = path_of_string(&value, marker, String::new())?;
        let bound = if number.starts_with('-') {
            format!("too small for a TOML integer (at least {})", i64::MIN)
        } else {
            format!("too large for a TOML integer (at most {})", i64::MAX)
        };
        paths.push((path, format!("{number} is {bound}"), *at));
    }
    // The numbers' keys left out (as if not given): the rest is checked as usual, and a check
    // of such a key meets no marker.
    let mut value = value;
    drop_markers(&mut value);
    let (c, others) = parse_value(value);
    let mut errors: Vec<(SimError, Option<usize>)> = paths
        .into_iter()
        .map(|(path, msg, at)| (SimError::config(path, msg), Some(at)))
        .collect();
    errors.extend(others.into_iter().map(|e| (e, None)));
    Some((c, errors))
}

/// Take the markers of `mask_out_of_range` out of a parsed value (keys and array elements).
fn drop_markers(v: &mut serde_json::Value) {
    let is_marker = |x: &serde_json::Value| x.as_str().is_some_and(|s| s.starts_with(OUT_OF_RANGE));
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !is_marker(x));
            m.values_mut().for_each(drop_markers);
        }
        serde_json::Value::Array(a) => {
            a.retain(|x| !is_marker(x));
            a.iter_mut().for_each(drop_markers);
        }
        _ => {}
    }
}

/// The dotted path (`flows[0].queue_depth`, as field errors name keys) of the string `s` in `v`.
fn path_of_string(v: &serde_json::Value, s: &str, path: String) -> Option<String> {
    match v {
        serde_json::Value::String(x) if x == s => Some(path),
        serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            path_of_string(x, s, p)
        }),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| path_of_string(x, s, format!("{path}[{i}]"))),
        _ => None,
    }
}

impl Config {
    /// Parse a TOML document; every unknown key and wrong type is reported.
    pub fn from_toml_str(text: &str) -> Result<Config> {
        let (c, errors) = Self::parse_toml(text);
        SimError::all(errors.into_iter().map(|(e, _)| e).collect())?;
        c.ok_or_else(|| SimError::Invalid("the configuration could not be read".into()))
    }

    /// Parse a TOML file's text; errors start with `file:line:` where the line is known.
    pub fn from_toml_file(text: &str, file: &str) -> Result<Config> {
        let (c, errors) = Self::parse_toml(text);
        place_errors(errors, text, file)?;
        c.ok_or_else(|| SimError::Invalid(format!("{file}: the configuration could not be read")))
    }

    /// Parse TOML: the configuration (unless it cannot be built) and every error found, each
    /// with the byte offset it points at when the parser knows it (a syntax error).
    pub(crate) fn parse_toml(text: &str) -> (Option<Config>, Vec<(SimError, Option<usize>)>) {
        match toml::from_str::<serde_json::Value>(text) {
            Ok(v) => {
                let (c, errors) = parse_value(v);
                (c, errors.into_iter().map(|e| (e, None)).collect())
            }
            Err(e) => {
                if let Some(found) = out_of_range_integers(text) {
                    return found;
                }
                let at = e.span().map(|s| s.start);
                let err = field_error(".".into(), e.message().to_string());
                (None, vec![(err, at)])
            }
        }
    }

    /// Parse a JSON document (what the Python layer sends); every unknown key and wrong type is
    /// reported.
    pub fn from_json_str(text: &str) -> Result<Config> {
        let (c, errors) = Self::parse_json(text);
        SimError::all(errors)?;
        c.ok_or_else(|| SimError::Invalid("the configuration could not be read".into()))
    }

    /// Parse JSON: the configuration (unless it cannot be built) and every error found.
    pub(crate) fn parse_json(text: &str) -> (Option<Config>, Vec<SimError>) {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => parse_value(v),
            // serde_json appends " at line L column C"; the field path is more useful here.
            Err(e) => {
                let msg = e.to_string();
                let msg = msg.split(" at line ").next().unwrap_or("").to_string();
                (None, vec![field_error(".".into(), msg)])
            }
        }
    }

    /// A section's keys that are not its own fields must be component tables
    /// (`[buffer.hitstat]`; which components exist is the registry's to check): the others are
    /// taken out and returned as errors.
    fn take_stray_keys(&mut self) -> Vec<SimError> {
        fn take<T: Serialize + Default>(section: &str, tables: &mut Tables) -> Vec<SimError> {
            let fields = serde_json::to_value(T::default()).unwrap_or_default();
            let fields: Vec<&str> = fields
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            take_non_tables(tables)
                .into_iter()
                .map(|k| {
                    let path = format!("{section}.{k}");
                    let msg = crate::error::unknown_key_message(&path, &fields);
                    let msg = if msg.contains("did you mean") {
                        msg
                    } else {
                        format!("{msg}, or a component's table such as [{section}.<name>]")
                    };
                    SimError::config(path, msg)
                })
                .collect()
        }
        let mut errors = take::<WorkloadConfig>("workload", &mut self.workload.tables);
        for (i, f) in self.flows.iter_mut().enumerate() {
            let section = format!("flows[{i}].workload");
            errors.extend(take::<WorkloadConfig>(&section, &mut f.workload.tables));
        }
        errors.extend(take::<FtlConfig>("ftl", &mut self.ftl.tables));
        errors.extend(take::<BufferConfig>("buffer", &mut self.buffer.tables));
        errors.extend(take::<PlacementConfig>(
            "placement",
            &mut self.placement.tables,
        ));
        for (section, tables) in [
            ("gc", &mut self.gc),
            ("padding", &mut self.padding),
            ("scheduler", &mut self.scheduler),
        ] {
            for k in take_non_tables(tables) {
                errors.push(SimError::config(
                    format!("{section}.{k}"),
                    format!(
                        "expected a table of a {section} policy's parameters, [{section}.<name>]"
                    ),
                ));
            }
        }
        errors
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    /// Check the sections' own fields, every error reported (components' parameters and names
    /// are checked by `engine::validate`, which calls this). Errors name the field.
    pub fn check_fields(&self) -> Result<()> {
        let mut errors = Vec::new();
        self.check_values(&mut errors);
        self.check_relations(&mut errors);
        SimError::all(errors)
    }

    /// The checks of one field's value on its own: wrong whatever the other keys say (a file
    /// is checked with these, since overrides may complete it). Each section checks its own.
    pub(crate) fn check_values(&self, errors: &mut Vec<SimError>) {
        let e = &mut FieldErrors(errors);
        self.workload.check(e);
        self.device.check(e);
        self.nand.check(e);
        self.ftl.check(e);
        self.buffer.check(e);
        self.run.check(e);
        self.controller.check(e);
        self.host.check(e);
        self.readahead.check(e);
        e.0.extend(crate::params::Params::check(&self.fdp, "fdp").err());
    }

    /// The checks between fields (a trace needs a path, background GC needs timed mode, ...).
    pub(crate) fn check_relations(&self, errors: &mut Vec<SimError>) {
        let mut fail = |field: &str, msg: String| errors.push(SimError::config(field, msg));
        if self.placement.kind == "oracle" && self.run.precondition == "fill-random" {
            fail(
                "run.precondition",
                "the oracle knows the fill's writes but not the random ones: use \"fill\" with placement.kind = \"oracle\"".into(),
            );
        }
        let w = &self.workload;
        if w.kind == "trace" && w.path.is_none() {
            fail(
                "workload.path",
                "kind = \"trace\" needs a trace path".into(),
            );
        }
        // Otherwise the synthetic workload would run and the trace be ignored without a word.
        if w.kind != "trace" && w.path.is_some() {
            fail(
                "workload.path",
                format!(
                    "is set but workload.kind = \"{}\"; set workload.kind = \"trace\" to replay the trace",
                    w.kind
                ),
            );
        }
        if w.kind != "trace" {
            if w.request_bytes.0 == 0 || !w.request_bytes.0.is_multiple_of(SECTOR_BYTES) {
                fail(
                    "workload.request_bytes",
                    format!("{} must be a positive multiple of 512", w.request_bytes.0),
                );
            } else if w.footprint_bytes.0 < w.request_bytes.0 {
                fail(
                    "workload.footprint_bytes",
                    "must be at least workload.request_bytes".into(),
                );
            }
            if w.requests == 0 {
                fail("workload.requests", "must be ≥ 1".into());
            }
        }
        let d = &self.device;
        if d.dies() > 65536 {
            fail(
                "device.channels",
                format!(
                    "{} dies in all (channels × chips × dies); at most 65536",
                    d.dies()
                ),
            );
        }
        let n = &self.nand;
        if n.channel_mb_s > 0.0 && n.transfer_us > 0.0 {
            fail(
                "nand.channel_mb_s",
                "set either nand.channel_mb_s or nand.transfer_us (the page transfer time), not both"
                    .into(),
            );
        }
        self.check_front_end(&mut fail);
        self.check_nand_mechanisms(&mut fail);
        self.readahead.check_relations(&mut fail);
        if self.ftl.background_gc {
            if self.run.scheduler != "fifo" {
                fail(
                    "ftl.background_gc",
                    format!(
                        "background GC runs only with run.scheduler = \"fifo\", not \"{}\"",
                        self.run.scheduler
                    ),
                );
            }
            if self.run.mode != "timed" {
                fail(
                    "ftl.background_gc",
                    "background GC needs idle time: set run.mode = \"timed\"".into(),
                );
            }
        }
        self.check_flows(errors);
    }
}

/// The errors of one configuration's value checks, each naming its field.
struct FieldErrors<'a>(&'a mut Vec<SimError>);

impl FieldErrors<'_> {
    fn fail(&mut self, field: &str, msg: String) {
        self.0.push(SimError::config(field, msg));
    }
    fn one_of(&mut self, field: &str, value: &str, valid: &[&str]) {
        self.0
            .extend(crate::error::one_of(field, value, valid).err());
    }
    /// A share: in [0, 1].
    fn fraction(&mut self, field: &str, v: f64) {
        if !(0.0..=1.0).contains(&v) {
            self.fail(field, format!("{v} is not in [0, 1]"));
        }
    }
    /// A time, rate or exponent: finite and ≥ 0.
    fn non_negative(&mut self, field: &str, v: f64) {
        if !(v >= 0.0 && v.is_finite()) {
            self.fail(field, format!("{v} must be ≥ 0"));
        }
    }
    fn positive(&mut self, field: &str, v: f64) {
        if !(v > 0.0 && v.is_finite()) {
            self.fail(field, format!("{v} must be > 0"));
        }
    }
    fn at_least_one(&mut self, field: &str, v: u64) {
        if v == 0 {
            self.fail(field, "must be ≥ 1".into());
        }
    }
}

impl WorkloadConfig {
    fn check(&self, e: &mut FieldErrors) {
        if let Some(f) = &self.format {
            if let Err(err) = crate::trace::Format::from_name(f) {
                e.fail("workload.format", err.to_string());
            }
        }
        e.one_of(
            "workload.address_map",
            &self.address_map,
            &["none", "fold", "compact"],
        );
        e.one_of("workload.arrival", &self.arrival, &["fixed", "poisson"]);
        if let Some(p) = &self.placement_ids {
            e.one_of("workload.placement_ids", p, &["none", "streams"]);
        }
        if let Some(a) = &self.blkparse_action {
            e.one_of("workload.blkparse_action", a, &["Q", "D", "C"]);
        }
        if let Some(t) = &self.timestamp {
            e.one_of("workload.timestamp", t, &["submit", "record"]);
        }
        if let Some(v) = &self.volumes {
            e.one_of("workload.volumes", v, crate::trace::Volumes::NAMES);
        }
        e.fraction("workload.read_fraction", self.read_fraction);
        e.non_negative("workload.zipf_theta", self.zipf_theta);
        e.at_least_one("workload.streams", self.streams as u64);
        e.positive("workload.iops", self.iops);
    }
}

impl DeviceConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.one_of(
            "device.stripe",
            &self.stripe,
            &["channel-first", "die-first"],
        );
        let page_bytes = self.page_bytes.0;
        match check_power_of_two("device.page_bytes", page_bytes) {
            Err(err) => e.0.push(err),
            Ok(()) if !(512..=32768).contains(&page_bytes) => e.fail(
                "device.page_bytes",
                format!("{page_bytes} must be between 512 and 32768"),
            ),
            Ok(()) => {}
        }
        if !(2..=65536).contains(&self.pages_per_block) {
            e.fail(
                "device.pages_per_block",
                format!("{} must be in 2..=65536", self.pages_per_block),
            );
        }
        if let Some(op) = self.op.filter(|op| !(*op > 0.0 && *op < 100.0)) {
            e.fail(
                "device.op",
                format!("{op} must be > 0 (ρ = physical/logical − 1)"),
            );
        }
        e.at_least_one("device.channels", self.channels as u64);
        e.at_least_one("device.chips_per_channel", self.chips_per_channel as u64);
        e.at_least_one("device.dies_per_chip", self.dies_per_chip as u64);
        e.at_least_one("device.planes_per_die", self.planes_per_die as u64);
    }
}

impl NandConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.one_of("nand.service", &self.service, &["fixed", "exponential"]);
        e.one_of("nand.cell", &self.cell, &["slc", "mlc", "tlc"]);
        e.one_of(
            "nand.suspend",
            &self.suspend,
            &["none", "program", "program-erase"],
        );
        for (k, v) in [
            ("nand.read_us", self.read_us),
            ("nand.program_us", self.program_us),
            ("nand.erase_us", self.erase_us),
            ("nand.transfer_us", self.transfer_us),
            ("nand.channel_mb_s", self.channel_mb_s),
            ("nand.command_us", self.command_us),
            ("nand.dram_us", self.dram_us),
            ("nand.suspend_us", self.suspend_us),
            ("nand.resume_us", self.resume_us),
            ("nand.read_csb_us", self.read_csb_us.unwrap_or(0.0)),
            ("nand.read_msb_us", self.read_msb_us.unwrap_or(0.0)),
            ("nand.program_csb_us", self.program_csb_us.unwrap_or(0.0)),
            ("nand.program_msb_us", self.program_msb_us.unwrap_or(0.0)),
        ] {
            e.non_negative(k, v);
        }
    }
}

impl FtlConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.non_negative("ftl.background_gc_idle_us", self.background_gc_idle_us);
    }
}

impl BufferConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.one_of(
            "buffer.padding_fill",
            &self.padding_fill,
            &["all", "existing"],
        );
        e.one_of("buffer.release", &self.release, &["on-program", "on-evict"]);
        e.one_of(
            "buffer.admission",
            &self.admission,
            &["earliest-slot", "in-order"],
        );
        if let Some(w) = self.drain_watermark {
            e.fraction("buffer.drain_watermark", w);
        }
        if let Some(i) = self.drain_idle_us {
            e.non_negative("buffer.drain_idle_us", i);
        }
        if let Some(r) = self.drain_mb_s {
            e.positive("buffer.drain_mb_s", r);
        }
        if let Some(f) = self.fraction {
            e.fraction("buffer.fraction", f);
        }
    }
}

impl RunConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.one_of("run.mode", &self.mode, &["counts", "timed"]);
        e.one_of(
            "run.scheduler",
            &self.scheduler,
            &["fifo", "read-priority", "write-stop"],
        );
        e.one_of(
            "run.precondition",
            &self.precondition,
            &["none", "fill", "fill-random"],
        );
        e.positive("run.time_scale", self.time_scale);
        e.at_least_one("run.repeat", self.repeat as u64);
        e.non_negative("run.warmup_us", self.warmup_us);
        e.non_negative("run.runtime_us", self.runtime_us);
    }
}

impl ControllerConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.non_negative("controller.command_us", self.command_us);
        e.non_negative("controller.page_us", self.page_us);
        e.non_negative(
            "controller.write_command_us",
            self.write_command_us.unwrap_or(0.0),
        );
        e.non_negative("controller.sleep_after_us", self.sleep_after_us);
        e.non_negative("controller.wake_us", self.wake_us);
    }
}

impl HostConfig {
    fn check(&self, e: &mut FieldErrors) {
        e.one_of(
            "host.arbitration",
            &self.arbitration,
            &["round-robin", "weighted-round-robin"],
        );
        e.non_negative("host.link_mib_s", self.link_mib_s);
        e.non_negative("host.cpu_us", self.cpu_us);
        e.non_negative("host.wake_us", self.wake_us);
        e.non_negative("host.submit_us", self.submit_us);
        if self.submit_us > self.cpu_us {
            e.fail(
                "host.submit_us",
                format!(
                    "{} is more than host.cpu_us = {} (it is part of it)",
                    self.submit_us, self.cpu_us
                ),
            );
        }
    }
}

impl Config {
    /// The host queue's cap, the controller and draining: what they need of the other keys
    /// (the cap, controller and link are timing only: counts mode ignores them, as it does
    /// `run.queue_depth`; draining changes counts, so it needs timed mode).
    fn check_front_end(&self, fail: &mut impl FnMut(&str, String)) {
        if self.run.max_inflight > 0 && self.run.queue_depth > 0 {
            fail(
                "run.max_inflight",
                format!(
                    "caps the open loop; with run.queue_depth = {} the closed loop already keeps that many outstanding: set run.queue_depth = 0",
                    self.run.queue_depth
                ),
            );
        }
        let c = &self.controller;
        let write_us = c.write_command_us.unwrap_or(0.0);
        if c.cores == 0 && (c.command_us > 0.0 || c.page_us > 0.0 || write_us > 0.0) {
            let k = if c.command_us > 0.0 {
                "controller.command_us"
            } else if c.page_us > 0.0 {
                "controller.page_us"
            } else {
                "controller.write_command_us"
            };
            fail(k, "needs controller.cores ≥ 1 (0 = no controller)".into());
        }
        if c.cores == 0 && c.queue_affinity {
            fail(
                "controller.queue_affinity",
                "needs controller.cores ≥ 1 (0 = no controller)".into(),
            );
        }
        let b = &self.buffer;
        for (k, on) in [
            (
                "buffer.drain_watermark",
                b.drain_watermark.is_some_and(|w| w < 1.0),
            ),
            ("buffer.drain_idle_us", b.drain_idle_us.is_some()),
            ("buffer.drain_mb_s", b.drain_mb_s.is_some()),
        ] {
            if on && self.run.mode != "timed" {
                fail(k, "a timed-mode setting: set run.mode = \"timed\"".into());
            }
        }
        if b.drain_idle_us.is_some() && self.run.scheduler != "fifo" {
            fail(
                "buffer.drain_idle_us",
                format!(
                    "idle draining runs only with run.scheduler = \"fifo\", not \"{}\"",
                    self.run.scheduler
                ),
            );
        }
    }

    /// `[[flows]]`: each flow's own keys, and what several flows need of the rest (a flow's
    /// workload is checked as `[workload]` is, by `engine::validate`).
    fn check_flows(&self, errors: &mut Vec<SimError>) {
        let mut fail = |field: &str, msg: String| errors.push(SimError::config(field, msg));
        if self.flows.is_empty() {
            // These time the submitting threads and the window of the flows' loop.
            let set = [
                ("host.cpu_us", self.host.cpu_us > 0.0),
                ("host.wake_us", self.host.wake_us > 0.0),
                ("run.warmup_us", self.run.warmup_us > 0.0),
                ("run.runtime_us", self.run.runtime_us > 0.0),
            ];
            for (k, _) in set.iter().filter(|(_, on)| *on) {
                fail(
                    k,
                    "needs [[flows]] (one flow per submitting thread; a single flow is fine)"
                        .into(),
                );
            }
            return;
        }
        if self.run.warmup_us > 0.0 && self.run.warmup_requests > 0 {
            fail(
                "run.warmup_us",
                "set run.warmup_us or run.warmup_requests, not both".into(),
            );
        }
        if self.run.mode != "timed" {
            fail(
                "flows",
                "several flows share the device in time: set run.mode = \"timed\"".into(),
            );
        }
        if self.workload != WorkloadConfig::default() {
            fail(
                "workload",
                "with [[flows]] each flow has its own workload ([flows.workload]); [workload] would not be used".into(),
            );
        }
        if self.placement.kind == "oracle" {
            fail(
                "placement.kind",
                "the oracle's pre-pass reads one workload; it is not available with [[flows]]"
                    .into(),
            );
        }
        if self.flows.len() > 32767 {
            fail(
                "flows",
                format!("{} flows; at most 32,767", self.flows.len()),
            );
        }
        let mut shares = 0.0;
        for (i, f) in self.flows.iter().enumerate() {
            let key = |k: &str| format!("flows[{i}].{k}");
            if !["urgent", "high", "medium", "low"].contains(&f.priority.as_str()) {
                let e = crate::error::one_of(
                    &key("priority"),
                    &f.priority,
                    &["urgent", "high", "medium", "low"],
                );
                if let Err(SimError::Config { msg, .. }) = e {
                    fail(&key("priority"), msg);
                }
            }
            if f.weight == 0 {
                fail(&key("weight"), "must be ≥ 1".into());
            }
            if f.fast_forward_requests > 0 && f.queue_depth == 0 {
                fail(
                    &key("fast_forward_requests"),
                    "needs a closed loop (queue_depth ≥ 1): an open loop's arrivals would start where the skipped requests end".into(),
                );
            }
            if f.max_inflight > 0 && f.queue_depth > 0 {
                fail(
                    &key("max_inflight"),
                    format!("caps an open loop; with queue_depth = {} the closed loop already keeps that many outstanding: set queue_depth = 0", f.queue_depth),
                );
            }
            let (channels, dies) = (self.device.channels, self.device.dies());
            if let Some(c) = f.channels.iter().find(|&&c| c >= channels) {
                fail(
                    &key("channels"),
                    format!(
                        "channel {c} does not exist: the device has {channels} (0 … {})",
                        channels - 1
                    ),
                );
            } else if let Some(d) = f.dies.iter().find(|&&d| d as u64 >= dies) {
                fail(
                    &key("dies"),
                    format!(
                        "die {d} does not exist: the device has {dies} (0 … {})",
                        dies - 1
                    ),
                );
            } else if f.confined() && self.flow_dies(i).is_empty() {
                fail(&key("dies"), "none of its dies is on its channels".into());
            }
            let leader = self.namespace_leader(i);
            if leader != i {
                let l = &self.flows[leader];
                if f.share != l.share {
                    fail(&key("share"), format!("flows of one namespace share one range: give it the share flows[{leader}] gives (or none, as it does)"));
                }
                if self.flow_dies(i) != self.flow_dies(leader) {
                    fail(&key("dies"), format!("flows of one namespace share one range, so its pages go to flows[{leader}]'s dies: give it the same channels and dies"));
                }
                continue;
            }
            match f.share {
                Some(s) if !(s > 0.0 && s <= 1.0) => {
                    fail(&key("share"), format!("{s} is not in (0, 1]"))
                }
                Some(s) => shares += s,
                None => {}
            }
        }
        if self.flows_confined() && self.placement.kind != "none" {
            fail("placement.kind", "flows confined to channels or dies place their pages in their own FTLs: set placement.kind = \"none\"".into());
        }
        let given = self.flows.iter().filter(|f| f.share.is_some()).count();
        if given > 0 && given < self.flows.len() {
            fail(
                "flows",
                format!("{given} of {} flows give a share of the device: give every flow one, or none (equal shares)", self.flows.len()),
            );
        }
        if shares > 1.0 + 1e-9 {
            fail(
                "flows",
                format!("the flows' shares add up to {shares}, more than the whole device (1)"),
            );
        }
    }

    /// Page types, physical pages and multi-plane: the keys each needs, and none it ignores.
    fn check_nand_mechanisms(&self, fail: &mut impl FnMut(&str, String)) {
        let (n, d) = (&self.nand, &self.device);
        let needed: &[&str] = match n.cell.as_str() {
            "mlc" => &["read_msb_us", "program_msb_us"],
            "tlc" => &[
                "read_csb_us",
                "read_msb_us",
                "program_csb_us",
                "program_msb_us",
            ],
            _ => &[],
        };
        for (key, v) in [
            ("read_csb_us", n.read_csb_us),
            ("read_msb_us", n.read_msb_us),
            ("program_csb_us", n.program_csb_us),
            ("program_msb_us", n.program_msb_us),
        ] {
            match (needed.contains(&key), v) {
                (true, None) => fail(
                    &format!("nand.{key}"),
                    format!("nand.cell = \"{}\" needs this page type's time", n.cell),
                ),
                (false, Some(_)) => fail(
                    &format!("nand.{key}"),
                    format!(
                        "is set but nand.cell = \"{}\" has no such page type",
                        n.cell
                    ),
                ),
                _ => {}
            }
        }
        if n.suspend != "none" && d.scheduler != "fifo" {
            fail(
                "nand.suspend",
                format!(
                    "suspension is modelled with device.scheduler = \"fifo\", not \"{}\"",
                    d.scheduler
                ),
            );
        }
        let unit = d.page_bytes.0;
        if let Some(Size(b)) = n.physical_page_bytes {
            if b < unit || b % unit.max(1) != 0 {
                fail(
                    "nand.physical_page_bytes",
                    format!("{b} must be a multiple of device.page_bytes ({unit})"),
                );
            }
        }
        let (k, p) = (n.units_per_page(unit), d.planes_per_die as u64);
        if (k > 1 || p > 1) && d.pages_per_block % (k * p) != 0 {
            fail(
                "device.pages_per_block",
                format!(
                    "{} must be a multiple of {} (units per NAND page × planes per die)",
                    d.pages_per_block,
                    k * p
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_lists_valid_ones() {
        let e = Config::from_toml_str("[buffer]\nkind = \"lru\"\nbites = 5\n").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("buffer.bites"), "{s}");
        assert!(s.contains("bytes"), "{s}");
    }

    #[test]
    fn sizes_with_units() {
        let c = Config::from_toml_str(
            "[buffer]\nbytes = \"2MiB\"\n[device]\nlogical_bytes = \"1GiB\"\n",
        )
        .unwrap();
        assert_eq!(c.buffer.bytes.0, 2 << 20);
        assert_eq!(c.device.logical_bytes, Capacity::Bytes(1 << 30));
        c.validate().unwrap();
    }

    fn error(toml: &str) -> String {
        match Config::from_toml_str(toml) {
            Ok(c) => c.validate().unwrap_err().to_string(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn buffer_keys_validated() {
        let c = Config::default();
        assert_eq!(c.buffer.padding, "auto");
        c.validate().unwrap();
        let bplru = "[buffer]\nkind = \"bplru\"\n[buffer.bplru]\n";
        let e = error(&format!("{bplru}compensation = \"lazy\"\n"));
        assert_eq!(
            e,
            "config field `buffer.bplru.compensation`: unknown value `lazy`; valid: strict, full, off"
        );
        let hs = "[buffer]\nkind = \"hitstat\"\n[buffer.hitstat]\n";
        let e = error(&format!("{hs}initial_levels = 66\n"));
        assert_eq!(
            e,
            "config field `buffer.hitstat.initial_levels`: 66 must be in 1..=buffer.hitstat.hit_log + 1 (65)"
        );
        assert!(error(&format!("{hs}period = 0\n")).contains("buffer.hitstat.period"));
        assert!(error(&format!("{hs}hit_log = 0\n")).contains("buffer.hitstat.hit_log"));
        let e = error("[buffer]\npadding = \"sometimes\"\n");
        assert!(e.contains("buffer.padding") && e.contains("model"), "{e}");
        let e = error("[buffer]\npadding = \"fixed\"\n[padding.fixed]\nthreshold = 2\n");
        assert_eq!(
            e,
            "config field `padding.fixed.threshold`: 2 is not in [0, 1]"
        );
    }

    #[test]
    fn component_tables_belong_to_the_selected_component() {
        // Parameters of a component that is not selected: the error names both.
        let e = error("[buffer]\nkind = \"fab\"\n[buffer.hitstat]\ninitial_levels = 8\n");
        assert_eq!(
            e,
            "config field `buffer.hitstat`: parameters for buffer `hitstat`, but buffer.kind = \"fab\": \
             set buffer.kind = \"hitstat\" or remove [buffer.hitstat]"
        );
        // bplru's default padding is fixed, so [padding.fixed] is in use; with fab it is not.
        let fixed = "[padding.fixed]\nthreshold = 0.25\n";
        Config::from_toml_str(&format!("[buffer]\nkind = \"bplru\"\n{fixed}"))
            .unwrap()
            .validate()
            .unwrap();
        let e = error(&format!("[buffer]\nkind = \"fab\"\n{fixed}"));
        assert!(e.starts_with("config field `padding.fixed`: parameters for padding `fixed`, but buffer.padding = \"none\""), "{e}");
        // Unknown components and keys get the nearest valid name.
        let e = error("[buffer]\nkind = \"hitstat\"\n[buffer.hitstatt]\ninitial_levels = 8\n");
        assert_eq!(e, "config field `buffer.hitstatt`: unknown buffer `hitstatt`; did you mean [buffer.hitstat]?");
        let e = error("[buffer]\nkind = \"hitstat\"\n[buffer.hitstat]\ninitial_level = 8\n");
        assert_eq!(e, "config field `buffer.hitstat.initial_level`: unknown key; did you mean `buffer.hitstat.initial_levels`?");
        let e = error("[ftl]\nkind = \"bast\"\nbast_variant = \"single\"\n");
        assert!(
            e.starts_with("config field `ftl.bast_variant`: unknown key"),
            "{e}"
        );
    }

    #[test]
    fn file_errors_name_the_line() {
        let text = "[buffer]\nkind = \"lru\"\nbites = 5\n";
        let e = Config::from_toml_file(text, "c.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "c.toml:3: config field `buffer.bites`: unknown key; did you mean `buffer.bytes`?"
        );
        let text =
            "[buffer]\nkind = \"hitstat\"\n\n[buffer.hitstat]\ninitial_levels = 8\nperiodd = 3\n";
        let e = crate::engine::parse_toml_file(text, "c.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:6: config field `buffer.hitstat.periodd`"),
            "{e}"
        );
        let places = Places::new(
            "[a]\nx.y = 1\n[b.c]\nz = 2\n[[b.d]]\nk = 1\n[[b.d]]\nk = { m = [1, 2] }\n",
        );
        assert_eq!(places.line("b.c"), Some(3));
        assert_eq!(places.line("a.x.y"), Some(2));
        assert_eq!(places.line("b"), Some(3)); // the first line inside it
        assert_eq!(places.line("b.d[1].k.m"), Some(8));
        assert_eq!(places.line("b.d[0].k"), Some(6));
        assert_eq!(places.line("c"), None);
    }

    /// `engine::parse_toml_file`'s error message for `text` as `c.toml`.
    fn file_error(text: &str) -> String {
        crate::engine::parse_toml_file(text, "c.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn integers_beyond_toml_range_name_their_key_and_line() {
        assert_eq!(
            file_error("[workload]\nkind = \"zipf\"\nrequests = 99999999999999999999\n"),
            "c.toml:3: config field `workload.requests`: 99999999999999999999 is too large for a \
             TOML integer (at most 9223372036854775807)"
        );
        // Every one of them, in inline tables and arrays of tables too, beside the file's other
        // errors, each at its line.
        let text = "[buffer]\nbites = 1\n[[flows]]\nqueue_depth = 1_000_000_000_000_000_000_000\n\
                    workload = { kind = \"zipf\", seed = -99999999999999999999 }\n\
                    [run]\nmode = \"timd\"\n";
        assert_eq!(
            file_error(text),
            "4 errors:\n  \
             c.toml:2: config field `buffer.bites`: unknown key; did you mean `buffer.bytes`?\n  \
             c.toml:4: config field `flows[0].queue_depth`: 1_000_000_000_000_000_000_000 is too \
             large for a TOML integer (at most 9223372036854775807)\n  \
             c.toml:5: config field `flows[0].workload.seed`: -99999999999999999999 is too small \
             for a TOML integer (at least -9223372036854775808)\n  \
             c.toml:7: config field `run.mode`: unknown value `timd`; did you mean `timed`?"
        );
        // A string field holding one: the range, not the marker's name.
        let e = file_error("[workload]\nkind = 99999999999999999999\n");
        assert!(
            e.starts_with(
                "c.toml:2: config field `workload.kind`: 99999999999999999999 is too large"
            ) && !e.contains("ssdlab-out-of-range"),
            "{e}"
        );
        // Another syntax error still reports as one.
        assert!(file_error("[run]\nseed = 99999999999999999999\nmode = \n").starts_with("c.toml:"));
    }

    #[test]
    fn file_value_errors_name_the_line_and_all_are_listed() {
        let text = "[device]\nop = -0.1\n\n[buffer]\nkind = \"lur\"\nbytes = \"8MiB\"\n\
                    [run]\nmode = \"timd\"\nrepeat = \"twice\"\n";
        assert_eq!(
            file_error(text),
            "4 errors:\n  \
             c.toml:2: config field `device.op`: -0.1 must be > 0 (ρ = physical/logical − 1)\n  \
             c.toml:5: config field `buffer.kind`: unknown buffer `lur`; did you mean `lru`?\n  \
             c.toml:8: config field `run.mode`: unknown value `timd`; did you mean `timed`?\n  \
             c.toml:9: config field `run.repeat`: string \"twice\", expected a whole number ≥ 0"
        );
        // One error stays one line; inline tables and component tables are placed too.
        assert_eq!(
            file_error("buffer = { kind = \"fifo\", fifo = { batch_pages = -1 } }\n"),
            "c.toml:1: config field `buffer.fifo.batch_pages`: integer `-1`, expected a whole number ≥ 0"
        );
        let e =
            file_error("[ftl]\nkind = \"lines\"\n[ftl.lines]\nvictim = \"gredy\"\ngc = \"brst\"\n");
        assert_eq!(
            e,
            "2 errors:\n  \
             c.toml:4: config field `ftl.lines.victim`: unknown value `gredy`; did you mean `greedy`?\n  \
             c.toml:5: config field `ftl.lines.gc`: unknown value `brst`; did you mean `burst`?"
        );
        // A check between keys waits for the whole configuration (overrides may complete the
        // file): a trace without its path passes the file check, not validation.
        let c = crate::engine::parse_toml_file("[workload]\nkind = \"trace\"\n", "c.toml").unwrap();
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("workload.path"));
    }

    #[test]
    fn errors_beyond_twenty_are_counted() {
        let text: String = (0..25).map(|i| format!("k{i} = 1\n")).collect();
        let e = file_error(&format!("[device]\n{text}"));
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 22, "{e}");
        assert_eq!(lines[0], "25 errors:");
        assert!(
            lines[1].starts_with("  c.toml:2: config field `device.k0`: unknown key"),
            "{e}"
        );
        assert!(
            lines[20].starts_with("  c.toml:21: config field `device.k19`"),
            "{e}"
        );
        assert_eq!(lines[21], "  … and 5 more");
    }

    #[test]
    fn every_enumerated_key_suggests_the_nearest_value() {
        for (text, field, near) in [
            ("[ftl]\nkind = \"dftll\"", "ftl.kind", "dftl"),
            ("[ftl]\ngc = \"greedi\"", "ftl.gc", "greedy"),
            ("[workload]\nkind = \"zpf\"", "workload.kind", "zipf"),
            (
                "[workload]\nformat = \"blkparce\"",
                "workload.format",
                "blkparse",
            ),
            (
                "[workload]\naddress_map = \"compactt\"",
                "workload.address_map",
                "compact",
            ),
            ("[run]\nprecondition = \"fil\"", "run.precondition", "fill"),
            (
                "[run]\nscheduler = \"read-priorty\"",
                "run.scheduler",
                "read-priority",
            ),
            ("[buffer]\npadding = \"modle\"", "buffer.padding", "model"),
            (
                "[buffer]\npadding_fill = \"exsting\"",
                "buffer.padding_fill",
                "existing",
            ),
            (
                "[buffer]\nrelease = \"on-evic\"",
                "buffer.release",
                "on-evict",
            ),
            (
                "[device]\nstripe = \"die_first\"",
                "device.stripe",
                "die-first",
            ),
            ("[nand]\nservice = \"fixd\"", "nand.service", "fixed"),
            (
                "[workload]\nkind = \"fio\"\n[workload.fio]\nrw = \"randwirte\"",
                "workload.fio.rw",
                "randwrite",
            ),
        ] {
            let e = file_error(text);
            assert!(
                e.contains(&format!("config field `{field}`: unknown")),
                "{e}"
            );
            assert!(e.ends_with(&format!("; did you mean `{near}`?")), "{e}");
        }
        // A component's table checked twice (on its own, then by the workload it drives) gives
        // its error once.
        let e = error("[workload]\nkind = \"fio\"\n[workload.fio]\nrw = \"randwirte\"\n");
        assert_eq!(
            e,
            "config field `workload.fio.rw`: unknown value `randwirte`; did you mean `randwrite`?"
        );
    }

    #[test]
    fn unknown_key_suggests_the_same_key_elsewhere() {
        let e = file_error("[workload]\nkind = \"fio\"\nrw = \"randwrite\"\n");
        assert_eq!(
            e,
            "c.toml:3: config field `workload.rw`: unknown key; did you mean `workload.fio.rw`?"
        );
        let e = crate::engine::parse_json(r#"{"device": {"read_us": 50}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config field `device.read_us`: unknown key; did you mean `nand.read_us`?"
        );
        let e = crate::engine::parse_json(r#"{"ftl": {"seed": 5}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config field `ftl.seed`: unknown key; did you mean `run.seed` or `workload.seed`?"
        );
        // Unknown keys of a component's table too, at validation.
        let mut c = Config::default();
        c.workload.kind = "fio".into();
        c.workload
            .tables
            .insert("fio".into(), serde_json::json!({"read_fraction": 0.5}));
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "config field `workload.fio.read_fraction`: unknown key; did you mean `workload.read_fraction`?"
        );
    }

    #[test]
    fn hybrid_ftl_fields_validated() {
        let bast = "[ftl]\nkind = \"bast\"\n[ftl.bast]\n";
        Config::from_toml_str(bast).unwrap().validate().unwrap();
        assert!(error(&format!("{bast}variant = \"double\"\n")).contains("ftl.bast.variant"));
        let e = error(&format!("{bast}variant = \"single\"\nlookahead = 0\n"));
        assert_eq!(e, "config field `ftl.bast.lookahead`: must be ≥ 1");
        let e = error("[ftl]\nkind = \"fast\"\nlog_blocks = 1\n");
        assert!(e.contains("ftl.log_blocks"), "{e}");
    }

    #[test]
    fn bad_component_names_field() {
        let mut c = Config::default();
        c.buffer.kind = "lfu".into();
        let s = c.validate().unwrap_err().to_string();
        assert_eq!(
            s,
            "config field `buffer.kind`: unknown buffer `lfu`; did you mean `lru`?"
        );
        c.buffer.kind = "zzzzzz".into();
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.kind") && s.contains("block-lru"), "{s}");
    }
}

#[cfg(test)]
mod nand_mechanism_tests {
    use super::*;

    fn errors(toml: &str) -> String {
        let c = Config::from_toml_str(toml).unwrap();
        c.check_fields().unwrap_err().to_string()
    }

    #[test]
    fn page_types_need_their_times_and_nothing_else() {
        let e = errors("[nand]\ncell = \"tlc\"\nread_csb_us = 70\n");
        assert!(
            e.contains("nand.read_msb_us") && e.contains("nand.program_csb_us"),
            "{e}"
        );
        assert!(!e.contains("nand.read_csb_us"), "{e}");
        let e = errors(
            "[nand]\ncell = \"mlc\"\nread_msb_us = 1\nprogram_msb_us = 1\nread_csb_us = 1\n",
        );
        assert!(
            e.contains("nand.read_csb_us`: is set but nand.cell = \"mlc\""),
            "{e}"
        );
        let e = errors("[nand]\nread_msb_us = 1\n");
        assert!(e.contains("nand.read_msb_us"), "{e}");
    }

    #[test]
    fn physical_pages_are_whole_units_on_the_page_ftl() {
        let e = errors("[nand]\nphysical_page_bytes = \"6KiB\"\n");
        assert!(
            e.contains(
                "nand.physical_page_bytes`: 6144 must be a multiple of device.page_bytes (4096)"
            ),
            "{e}"
        );
        let e = errors("[nand]\nphysical_page_bytes = \"16KiB\"\n[device]\npages_per_block = 6\nplanes_per_die = 2\n");
        assert!(
            e.contains("device.pages_per_block`: 6 must be a multiple of 8"),
            "{e}"
        );
        let e = errors("[nand]\nsuspend = \"reads\"\n");
        assert!(e.contains("nand.suspend"), "{e}");
    }
}
