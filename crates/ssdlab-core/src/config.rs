//! Configuration: typed sections with documented defaults, parsed from TOML or JSON.
//! Unknown keys are errors that list the valid ones; values are validated with the field named.
//! The public section and key names are documented in docs/config.md.

use crate::error::{field_error, nearest, Result, SimError};
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
    /// blkparse action to replay: Q, D or C (default D when present, else Q).
    pub blkparse_action: Option<String>,
    /// Column layout for format = "generic".
    pub generic: Option<GenericSpec>,
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
            blkparse_action: None,
            generic: None,
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
    /// Over-provisioning ρ = physical / logical − 1.
    pub op: f64,
    /// Timed mode: channels (each a bus shared by its chips).
    pub channels: u32,
    /// Timed mode: chips on each channel.
    pub chips_per_channel: u32,
    /// Timed mode: dies per chip (each executes one array operation at a time).
    pub dies_per_chip: u32,
    /// Timed mode: planes per die (blocks are spread over them; no multi-plane operations).
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
            op: 0.07,
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            stripe: "channel-first".into(),
            scheduler: "fifo".into(),
        }
    }
}

impl DeviceConfig {
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
    /// none | fill (write every logical page once, sequentially, before the run; not measured).
    pub precondition: String,
    /// Requests at the start of the run whose operations are excluded from the metrics.
    pub warmup_requests: u64,
    /// Replay the workload this many times.
    pub repeat: u32,
    /// Verify the mapping against the latest written versions after every GC and at the end.
    pub check_integrity: bool,
    /// Parse trace files on a second thread (same results, faster replay of text traces).
    pub reader_thread: bool,
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
            sample_every: 0,
            mode: "counts".into(),
            queue_depth: 32,
            time_scale: 1.0,
            scheduler: "fifo".into(),
        }
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

/// An error in a TOML file as `file:line: message`: at `span` when the parser knows it, else
/// at the first line that sets the error's field (or opens its table).
pub fn locate(e: SimError, span: Option<usize>, text: &str, file: &str) -> SimError {
    let line = match (span, &e) {
        (Some(at), _) => Some(line_of(text, at)),
        (None, SimError::Config { field, .. }) => line_of_key(text, field),
        _ => None,
    };
    match line {
        Some(l) => SimError::Invalid(format!("{file}:{l}: {e}")),
        None => SimError::Invalid(format!("{file}: {e}")),
    }
}

/// First line of a TOML text whose key (under its table header) is `path` or inside it.
fn line_of_key(text: &str, path: &str) -> Option<usize> {
    let norm = |k: &str| -> String {
        k.split('.')
            .map(|p| p.trim().trim_matches('"'))
            .collect::<Vec<_>>()
            .join(".")
    };
    let mut table = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let key = if let Some(h) = line.strip_prefix('[') {
            table = norm(h.trim_start_matches('[').split(']').next().unwrap_or(""));
            table.clone()
        } else if let Some((k, _)) = line.split_once('=') {
            let k = norm(k);
            if table.is_empty() {
                k
            } else {
                format!("{table}.{k}")
            }
        } else {
            continue;
        };
        if key == path || key.starts_with(&format!("{path}.")) {
            return Some(i + 1);
        }
    }
    None
}

impl Config {
    /// Parse a TOML document.
    pub fn from_toml_str(text: &str) -> Result<Config> {
        Self::toml(text).map_err(|(e, _)| e)
    }

    /// Parse a TOML file's text; errors start with `file:line:` where the line is known.
    pub fn from_toml_file(text: &str, file: &str) -> Result<Config> {
        Self::toml(text).map_err(|(e, span)| locate(e, span, text, file))
    }

    /// Parse TOML; an error comes with the byte offset it points at, when known.
    fn toml(text: &str) -> std::result::Result<Config, (SimError, Option<usize>)> {
        let de = toml::Deserializer::new(text);
        let mut c: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let at = inner.span().map(|s| s.start);
            (field_error(path, inner.message().to_string()), at)
        })?;
        c.check_keys().map_err(|e| (e, None))?;
        if let Ok(v) = toml::from_str::<toml::Value>(text) {
            if let Ok(json) = serde_json::to_value(v) {
                decimal_size_warnings(&json, "", &mut c.warnings);
            }
        }
        Ok(c)
    }

    /// Parse a JSON document (what the Python layer sends).
    pub fn from_json_str(text: &str) -> Result<Config> {
        let mut de = serde_json::Deserializer::from_str(text);
        let mut c: Config = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let msg = e.into_inner().to_string();
            // serde_json appends " at line L column C"; the field path is more useful here.
            field_error(
                path,
                msg.split(" at line ").next().unwrap_or("").to_string(),
            )
        })?;
        c.check_keys()?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            decimal_size_warnings(&v, "", &mut c.warnings);
        }
        Ok(c)
    }

    /// A section's keys that are not its own fields must be component tables
    /// (`[buffer.hitstat]`); which components exist is the registry's to check.
    fn check_keys(&self) -> Result<()> {
        fn check<T: Serialize + Default>(section: &str, tables: &Tables) -> Result<()> {
            let fields = serde_json::to_value(T::default()).unwrap_or_default();
            let fields: Vec<&str> = fields
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for (k, v) in tables {
                if !v.is_object() {
                    let msg = match nearest(k, &fields) {
                        Some(f) => format!("unknown key; did you mean `{section}.{f}`?"),
                        None => format!(
                            "unknown key; valid: {}, or a component's table such as [{section}.<name>]",
                            fields.join(", ")
                        ),
                    };
                    return Err(SimError::config(format!("{section}.{k}"), msg));
                }
            }
            Ok(())
        }
        check::<WorkloadConfig>("workload", &self.workload.tables)?;
        check::<FtlConfig>("ftl", &self.ftl.tables)?;
        check::<BufferConfig>("buffer", &self.buffer.tables)?;
        check::<PlacementConfig>("placement", &self.placement.tables)?;
        for (section, tables) in [
            ("gc", &self.gc),
            ("padding", &self.padding),
            ("scheduler", &self.scheduler),
        ] {
            if let Some((k, _)) = tables.iter().find(|(_, v)| !v.is_object()) {
                return Err(SimError::config(
                    format!("{section}.{k}"),
                    format!(
                        "expected a table of a {section} policy's parameters, [{section}.<name>]"
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    /// Check the sections' own fields (components' parameters and names are checked by
    /// `registry::validate`, which calls this). Errors name the field.
    pub fn check_fields(&self) -> Result<()> {
        let w = &self.workload;
        if w.kind == "trace" && w.path.is_none() {
            return Err(SimError::config(
                "workload.path",
                "kind = \"trace\" needs a trace path",
            ));
        }
        // Otherwise the synthetic workload would run and the trace be ignored without a word.
        if w.kind != "trace" && w.path.is_some() {
            return Err(SimError::config(
                "workload.path",
                format!(
                    "is set but workload.kind = \"{}\"; set workload.kind = \"trace\" to replay the trace",
                    w.kind
                ),
            ));
        }
        if let Some(f) = &w.format {
            crate::trace::Format::from_name(f)
                .map_err(|e| SimError::config("workload.format", e.to_string()))?;
        }
        if let Some(a) = &w.blkparse_action {
            if !matches!(a.as_str(), "Q" | "D" | "C") {
                return Err(SimError::config(
                    "workload.blkparse_action",
                    format!("`{a}`: expected Q, D or C"),
                ));
            }
        }
        if !matches!(w.address_map.as_str(), "none" | "fold" | "compact") {
            return Err(SimError::config(
                "workload.address_map",
                format!(
                    "unknown value `{}`; valid: none, fold, compact",
                    w.address_map
                ),
            ));
        }
        if !(0.0..=1.0).contains(&w.read_fraction) {
            return Err(SimError::config(
                "workload.read_fraction",
                format!("{} is not in [0, 1]", w.read_fraction),
            ));
        }
        if !(w.zipf_theta >= 0.0 && w.zipf_theta.is_finite()) {
            return Err(SimError::config(
                "workload.zipf_theta",
                format!("{} must be ≥ 0", w.zipf_theta),
            ));
        }
        if w.streams == 0 {
            return Err(SimError::config("workload.streams", "must be ≥ 1"));
        }
        if w.kind != "trace" {
            if w.request_bytes.0 == 0 || !w.request_bytes.0.is_multiple_of(SECTOR_BYTES) {
                return Err(SimError::config(
                    "workload.request_bytes",
                    format!("{} must be a positive multiple of 512", w.request_bytes.0),
                ));
            }
            if w.footprint_bytes.0 < w.request_bytes.0 {
                return Err(SimError::config(
                    "workload.footprint_bytes",
                    "must be at least workload.request_bytes",
                ));
            }
            if w.requests == 0 {
                return Err(SimError::config("workload.requests", "must be ≥ 1"));
            }
        }
        let d = &self.device;
        check_power_of_two("device.page_bytes", d.page_bytes.0)?;
        if d.page_bytes.0 < 512 || d.page_bytes.0 > 32768 {
            return Err(SimError::config(
                "device.page_bytes",
                format!("{} must be between 512 and 32768", d.page_bytes.0),
            ));
        }
        if d.pages_per_block < 2 || d.pages_per_block > 65536 {
            return Err(SimError::config(
                "device.pages_per_block",
                format!("{} must be in 2..=65536", d.pages_per_block),
            ));
        }
        if !(d.op > 0.0 && d.op < 100.0) {
            return Err(SimError::config(
                "device.op",
                format!("{} must be > 0 (ρ = physical/logical − 1)", d.op),
            ));
        }
        for (k, v) in [
            ("device.channels", d.channels),
            ("device.chips_per_channel", d.chips_per_channel),
            ("device.dies_per_chip", d.dies_per_chip),
            ("device.planes_per_die", d.planes_per_die),
        ] {
            if v == 0 {
                return Err(SimError::config(k, "must be ≥ 1"));
            }
        }
        if d.dies() > 65536 {
            return Err(SimError::config(
                "device.channels",
                format!(
                    "{} dies in all (channels × chips × dies); at most 65536",
                    d.dies()
                ),
            ));
        }
        if !matches!(d.stripe.as_str(), "channel-first" | "die-first") {
            return Err(SimError::config(
                "device.stripe",
                format!(
                    "unknown value `{}`; valid: channel-first, die-first",
                    d.stripe
                ),
            ));
        }
        let n = &self.nand;
        for (k, v) in [
            ("nand.read_us", n.read_us),
            ("nand.program_us", n.program_us),
            ("nand.erase_us", n.erase_us),
            ("nand.transfer_us", n.transfer_us),
            ("nand.channel_mb_s", n.channel_mb_s),
            ("nand.command_us", n.command_us),
            ("nand.dram_us", n.dram_us),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(SimError::config(k, format!("{v} must be ≥ 0")));
            }
        }
        if n.channel_mb_s > 0.0 && n.transfer_us > 0.0 {
            return Err(SimError::config(
                "nand.channel_mb_s",
                "set either nand.channel_mb_s or nand.transfer_us (the page transfer time), not both",
            ));
        }
        if !matches!(n.service.as_str(), "fixed" | "exponential") {
            return Err(SimError::config(
                "nand.service",
                format!("unknown value `{}`; valid: fixed, exponential", n.service),
            ));
        }
        if !matches!(w.arrival.as_str(), "fixed" | "poisson") {
            return Err(SimError::config(
                "workload.arrival",
                format!("unknown value `{}`; valid: fixed, poisson", w.arrival),
            ));
        }
        if !(w.iops > 0.0 && w.iops.is_finite()) {
            return Err(SimError::config(
                "workload.iops",
                format!("{} must be > 0", w.iops),
            ));
        }
        if !matches!(self.run.mode.as_str(), "counts" | "timed") {
            return Err(SimError::config(
                "run.mode",
                format!("unknown value `{}`; valid: counts, timed", self.run.mode),
            ));
        }
        if !matches!(
            self.run.scheduler.as_str(),
            "fifo" | "read-priority" | "write-stop"
        ) {
            return Err(SimError::config(
                "run.scheduler",
                format!(
                    "unknown value `{}`; valid: fifo, read-priority, write-stop",
                    self.run.scheduler
                ),
            ));
        }
        if self.run.scheduler != "fifo" && self.ftl.background_gc {
            return Err(SimError::config(
                "ftl.background_gc",
                format!(
                    "background GC runs only with run.scheduler = \"fifo\", not \"{}\"",
                    self.run.scheduler
                ),
            ));
        }
        if self.ftl.background_gc {
            if self.run.mode != "timed" {
                return Err(SimError::config(
                    "ftl.background_gc",
                    "background GC needs idle time: set run.mode = \"timed\"",
                ));
            }
            if self.ftl.kind != "page" {
                return Err(SimError::config(
                    "ftl.background_gc",
                    format!(
                        "background GC is implemented for the page FTL, not ftl.kind = \"{}\"",
                        self.ftl.kind
                    ),
                ));
            }
        }
        let idle = self.ftl.background_gc_idle_us;
        if !(idle >= 0.0 && idle.is_finite()) {
            return Err(SimError::config(
                "ftl.background_gc_idle_us",
                format!("{idle} must be ≥ 0"),
            ));
        }
        if !(self.run.time_scale > 0.0 && self.run.time_scale.is_finite()) {
            return Err(SimError::config(
                "run.time_scale",
                format!("{} must be > 0", self.run.time_scale),
            ));
        }
        if let Some(f) = self.buffer.fraction {
            if !(0.0..=1.0).contains(&f) {
                return Err(SimError::config(
                    "buffer.fraction",
                    format!("{f} is not in [0, 1]"),
                ));
            }
        }
        if !matches!(self.buffer.padding_fill.as_str(), "all" | "existing") {
            return Err(SimError::config(
                "buffer.padding_fill",
                format!(
                    "unknown value `{}`; valid: all, existing",
                    self.buffer.padding_fill
                ),
            ));
        }
        if !matches!(self.run.precondition.as_str(), "none" | "fill") {
            return Err(SimError::config(
                "run.precondition",
                format!(
                    "unknown value `{}`; valid: none, fill",
                    self.run.precondition
                ),
            ));
        }
        if self.run.repeat == 0 {
            return Err(SimError::config("run.repeat", "must be ≥ 1"));
        }
        Ok(())
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
        let e = crate::registry::parse_toml_file(text, "c.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:6: config field `buffer.hitstat.periodd`"),
            "{e}"
        );
        assert_eq!(line_of_key("[a]\nx.y = 1\n[b.c]\n", "b.c"), Some(3));
        assert_eq!(line_of_key("[a]\nx.y = 1\n", "a.x.y"), Some(2));
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
        assert!(s.contains("buffer.kind") && s.contains("block-lru"), "{s}");
    }
}
