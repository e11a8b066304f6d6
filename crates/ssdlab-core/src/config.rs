//! Configuration: typed sections with documented defaults, parsed from TOML or JSON.
//! Unknown keys are errors that list the valid ones; values are validated with the field named.
//! The public section and key names are documented in docs/config.md.

use crate::error::{Result, SimError};
use crate::registry;
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
    pub run: RunConfig,
    /// Warnings found while parsing (sizes with decimal units); `simulate` reports them.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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
    /// Synthetic: request size (fio bs).
    pub request_bytes: Size,
    /// Synthetic: address range touched.
    pub footprint_bytes: Size,
    /// Synthetic: share of read requests.
    pub read_fraction: f64,
    /// Synthetic: Zipf skew (kind = zipf, fio, desktop).
    pub zipf_theta: f64,
    /// Synthetic: number of interleaved sequential streams (sequential, fio).
    pub streams: u32,
    /// fio rw: write | randwrite | randrw (kind = fio).
    pub rw: String,
    /// Synthetic: seed; None = run.seed.
    pub seed: Option<u64>,
    /// desktop: share of the footprint that holds data (ever written once swept).
    pub desktop_written_fraction: f64,
    /// desktop: share of write requests that write new data (first writes).
    pub desktop_first_write_fraction: f64,
    /// desktop: small random updates of a region land in a window of this many 4 KiB pages.
    pub desktop_cluster_pages: u64,
    /// desktop: number of very hot sectors (file-system metadata); 0 = none.
    pub desktop_hot_sectors: u64,
    /// desktop: share of write requests that go to the very hot sectors.
    pub desktop_hot_write_fraction: f64,
    /// desktop: Zipf skew of the very hot pages' popularity (0 = all equally hot).
    pub desktop_hot_zipf_theta: f64,
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
            rw: "randwrite".into(),
            seed: None,
            desktop_written_fraction: 0.365,
            desktop_first_write_fraction: 0.112,
            desktop_cluster_pages: 64,
            desktop_hot_sectors: 48,
            desktop_hot_write_fraction: 0.27,
            desktop_hot_zipf_theta: 1.5,
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
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            page_bytes: Size(4096),
            pages_per_block: 128,
            logical_bytes: Capacity::Auto,
            op: 0.07,
        }
    }
}

/// NAND costs in microseconds (defaults: the MLC figures of seed 000, Table 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NandConfig {
    pub read_us: f64,
    pub program_us: f64,
    pub erase_us: f64,
    /// Bus transfer per page, added to every page read and program.
    pub transfer_us: f64,
}

impl Default for NandConfig {
    fn default() -> Self {
        NandConfig {
            read_us: 60.0,
            program_us: 800.0,
            erase_us: 1500.0,
            transfer_us: 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    pub kind: String,
    /// GC victim selection: greedy | cost-benefit | fifo.
    pub gc: String,
    /// GC runs when free blocks fall below this (≥ 2); 0 = automatic (open frontiers + 2).
    pub gc_free_blocks: u64,
    /// Host write frontiers (open blocks). Host pages go to frontier `hint % streams`.
    pub streams: u32,
    /// GC writes into its own frontier (true) or into the host frontier of stream 0 (false).
    pub separate_gc_frontier: bool,
    /// Hybrid FTLs (bast, fast): log blocks, FAST's SW log included; 0 = automatic
    /// (3% of the data blocks, at least 2).
    pub log_blocks: u64,
    /// BAST: chain (an LBN may own a chain of log blocks; seed 000 Table 3) | single.
    pub bast_variant: String,
    /// BAST chain: a chain that would grow beyond this many log blocks is merged first.
    pub bast_chain_limit: u32,
    /// BAST chain: victim = longest chain among this many chains in round-robin order.
    pub bast_lookahead: u32,
    /// Hybrid FTLs: which merges feed the padding model's R_DB / R_LB / U_LB: seed (full merges,
    /// and switch merges that reclaim log blocks early; seed 000 §3.5) | all-merges.
    pub model_stats: String,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: "page".into(),
            gc: "greedy".into(),
            gc_free_blocks: 0,
            streams: 1,
            separate_gc_frontier: true,
            log_blocks: 0,
            bast_variant: "chain".into(),
            bast_chain_limit: 4,
            bast_lookahead: 50,
            model_stats: "seed".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    pub kind: String,
    /// Capacity in bytes (ignored when `fraction` is set).
    pub bytes: Size,
    /// Capacity as a fraction of the workload's footprint (overrides `bytes`).
    pub fraction: Option<f64>,
    /// Pad-or-log decision for flushed groups: auto | none | fixed | model. `auto` = the buffer's
    /// own default (see registry::default_padding); the run's `Result.config` shows the policy used.
    pub padding: String,
    /// `fixed` padding: pad groups holding at least this fraction of a block.
    pub padding_threshold: f64,
    /// What a padded flush writes: all (every page of the block; offsets never written get filler,
    /// as seed 000 charges N page writes per padded flush) | existing (only pages with data).
    pub padding_fill: String,
    /// BPLRU LRU compensation: strict (sequential 0..N−1 fill) | full (any full group) | off.
    pub bplru_compensation: String,
    /// HitStat: length of the hit log (ages at group hits).
    pub hitstat_hit_log: u64,
    /// HitStat: initial number of AgeRank levels (1 ..= hitstat_hit_log + 1).
    pub hitstat_levels: u32,
    /// HitStat: write requests between adaptations of the levels.
    pub hitstat_period: u64,
    /// HitStat: a group older than this many write requests is flushed first.
    pub hitstat_age_threshold: u64,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            kind: "lru".into(),
            bytes: Size(16 << 20),
            fraction: None,
            padding: "auto".into(),
            padding_threshold: 0.5,
            padding_fill: "all".into(),
            bplru_compensation: "strict".into(),
            hitstat_hit_log: 64,
            hitstat_levels: 32,
            hitstat_period: 4096,
            hitstat_age_threshold: 150_000,
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
        }
    }
}

/// A deserialisation error at a field path ("." = the whole document), in plain words.
fn path_error(path: String, msg: String) -> SimError {
    let path = if path == "." {
        "<document>".to_string()
    } else {
        path
    };
    let msg = plain_words(&msg);
    match unknown_key(&msg) {
        Some((key, valid)) => {
            let section = path.rsplit_once('.').map_or("", |(s, _)| s);
            let msg = match nearest(key, &valid) {
                Some(k) if section.is_empty() => format!("unknown key; did you mean `{k}`?"),
                Some(k) => format!("unknown key; did you mean `{section}.{k}`?"),
                None => format!("unknown key; valid: {}", valid.join(", ")),
            };
            SimError::config(path, msg)
        }
        None => SimError::config(path, msg),
    }
}

/// serde's type names ("expected u64") as a user would say them.
fn plain_words(msg: &str) -> String {
    let mut m = msg.to_string();
    for (from, to) in [
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("invalid type: ", ""),
        ("invalid value: ", ""),
    ] {
        m = m.replace(from, to);
    }
    m
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a`") as (x, [a, b]).
fn unknown_key(msg: &str) -> Option<(&str, Vec<&str>)> {
    let rest = msg.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let valid = rest.split('`').skip(1).step_by(2).collect();
    Some((key, valid))
}

/// The valid key closest to `key` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    };
    let (best, d) = valid
        .iter()
        .map(|v| (*v, distance(key, v)))
        .min_by_key(|(_, d)| *d)?;
    (d <= (key.chars().count() / 3).max(2)).then_some(best)
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

impl Config {
    /// Parse a TOML document.
    pub fn from_toml_str(text: &str) -> Result<Config> {
        Self::toml(text).map_err(|(e, _)| e)
    }

    /// Parse a TOML file's text; errors start with `file:line:` where the line is known.
    pub fn from_toml_file(text: &str, file: &str) -> Result<Config> {
        Self::toml(text).map_err(|(e, span)| match span {
            Some(at) => SimError::Invalid(format!("{file}:{}: {e}", line_of(text, at))),
            None => SimError::Invalid(format!("{file}: {e}")),
        })
    }

    /// Parse TOML; an error comes with the byte offset it points at, when known.
    fn toml(text: &str) -> std::result::Result<Config, (SimError, Option<usize>)> {
        let de = toml::Deserializer::new(text);
        let mut c: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let at = inner.span().map(|s| s.start);
            (path_error(path, inner.message().to_string()), at)
        })?;
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
            path_error(
                path,
                msg.split(" at line ").next().unwrap_or("").to_string(),
            )
        })?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            decimal_size_warnings(&v, "", &mut c.warnings);
        }
        Ok(c)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    /// Check every field that does not need the workload. Errors name the field.
    pub fn validate(&self) -> Result<()> {
        let w = &self.workload;
        registry::check_name("workload", "workload.kind", &w.kind)?;
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
        if !matches!(w.rw.as_str(), "write" | "randwrite" | "randrw") {
            return Err(SimError::config(
                "workload.rw",
                format!("unknown value `{}`; valid: write, randwrite, randrw", w.rw),
            ));
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
        if !(w.desktop_written_fraction > 0.0 && w.desktop_written_fraction <= 1.0) {
            return Err(SimError::config(
                "workload.desktop_written_fraction",
                format!("{} is not in (0, 1]", w.desktop_written_fraction),
            ));
        }
        for (k, v) in [
            (
                "workload.desktop_first_write_fraction",
                w.desktop_first_write_fraction,
            ),
            (
                "workload.desktop_hot_write_fraction",
                w.desktop_hot_write_fraction,
            ),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(SimError::config(k, format!("{v} is not in [0, 1]")));
            }
        }
        // What is neither new data nor a sequential rewrite is a random update; the hot
        // writes are taken from those.
        let random_updates =
            (1.0 - w.desktop_first_write_fraction) * (1.0 - crate::synth::UPDATE_SEQ_SHARE);
        if w.desktop_hot_write_fraction > random_updates + 1e-12 {
            return Err(SimError::config(
                "workload.desktop_hot_write_fraction",
                format!(
                    "{} exceeds the share of random updates ({random_updates:.3} = 0.729 × (1 − \
                     workload.desktop_first_write_fraction))",
                    w.desktop_hot_write_fraction
                ),
            ));
        }
        if !(w.desktop_hot_zipf_theta >= 0.0 && w.desktop_hot_zipf_theta.is_finite()) {
            return Err(SimError::config(
                "workload.desktop_hot_zipf_theta",
                format!("{} must be ≥ 0", w.desktop_hot_zipf_theta),
            ));
        }
        if !(1..=128).contains(&w.desktop_cluster_pages) {
            return Err(SimError::config(
                "workload.desktop_cluster_pages",
                format!(
                    "{} is not in 1..=128 (pages of a 512 KiB region)",
                    w.desktop_cluster_pages
                ),
            ));
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
        let n = &self.nand;
        for (k, v) in [
            ("nand.read_us", n.read_us),
            ("nand.program_us", n.program_us),
            ("nand.erase_us", n.erase_us),
            ("nand.transfer_us", n.transfer_us),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(SimError::config(k, format!("{v} must be ≥ 0")));
            }
        }
        registry::check_name("ftl", "ftl.kind", &self.ftl.kind)?;
        registry::check_name("gc", "ftl.gc", &self.ftl.gc)?;
        if self.ftl.gc_free_blocks == 1 {
            return Err(SimError::config(
                "ftl.gc_free_blocks",
                "must be 0 (automatic) or ≥ 2: GC needs a free block to copy valid pages into",
            ));
        }
        if self.ftl.streams == 0 || self.ftl.streams > 64 {
            return Err(SimError::config("ftl.streams", "must be in 1..=64"));
        }
        if !matches!(self.ftl.bast_variant.as_str(), "chain" | "single") {
            return Err(SimError::config(
                "ftl.bast_variant",
                format!(
                    "unknown value `{}`; valid: chain, single",
                    self.ftl.bast_variant
                ),
            ));
        }
        crate::ftl::hybrid::ModelStats::parse(&self.ftl.model_stats)?;
        if self.ftl.bast_chain_limit == 0 {
            return Err(SimError::config("ftl.bast_chain_limit", "must be ≥ 1"));
        }
        if self.ftl.bast_lookahead == 0 {
            return Err(SimError::config("ftl.bast_lookahead", "must be ≥ 1"));
        }
        if self.ftl.kind == "fast" && self.ftl.log_blocks == 1 {
            return Err(SimError::config(
                "ftl.log_blocks",
                "FAST needs 0 (automatic) or ≥ 2 log blocks: 1 SW log plus ≥ 1 RW log",
            ));
        }
        registry::check_name("buffer", "buffer.kind", &self.buffer.kind)?;
        if self.buffer.padding != "auto" {
            registry::check_name("padding", "buffer.padding", &self.buffer.padding)?;
        }
        let b = &self.buffer;
        crate::buffer::bplru::Compensation::from_name(&b.bplru_compensation)?;
        if b.hitstat_hit_log == 0 || b.hitstat_hit_log > 1 << 20 {
            return Err(SimError::config(
                "buffer.hitstat_hit_log",
                format!("{} must be in 1..=1048576", b.hitstat_hit_log),
            ));
        }
        if b.hitstat_levels == 0 || b.hitstat_levels as u64 > b.hitstat_hit_log + 1 {
            return Err(SimError::config(
                "buffer.hitstat_levels",
                format!(
                    "{} must be in 1..=buffer.hitstat_hit_log + 1 ({})",
                    b.hitstat_levels,
                    b.hitstat_hit_log + 1
                ),
            ));
        }
        if b.hitstat_period == 0 {
            return Err(SimError::config("buffer.hitstat_period", "must be ≥ 1"));
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
        let t = self.buffer.padding_threshold;
        if !(0.0..=1.0).contains(&t) {
            return Err(SimError::config(
                "buffer.padding_threshold",
                format!("{t} is not in [0, 1]"),
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

    #[test]
    fn buffer_keys_validated() {
        let mut c = Config::default();
        assert_eq!(c.buffer.padding, "auto");
        c.validate().unwrap();
        c.buffer.bplru_compensation = "lazy".into();
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.bplru_compensation"), "{s}");
        let mut c = Config::default();
        c.buffer.hitstat_levels = 66;
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.hitstat_levels"), "{s}");
        let mut c = Config::default();
        c.buffer.hitstat_period = 0;
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.hitstat_period"), "{s}");
        let mut c = Config::default();
        c.buffer.hitstat_hit_log = 0;
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.hitstat_hit_log"), "{s}");
        let mut c = Config::default();
        c.buffer.padding = "sometimes".into();
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.padding") && s.contains("model"), "{s}");
    }

    #[test]
    fn hybrid_ftl_fields_validated() {
        let mut c = Config::default();
        c.ftl.kind = "bast".into();
        c.validate().unwrap();
        c.ftl.bast_variant = "double".into();
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("ftl.bast_variant"), "{s}");
        c.ftl.bast_variant = "single".into();
        c.ftl.bast_lookahead = 0;
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("ftl.bast_lookahead"), "{s}");
        c.ftl.bast_lookahead = 50;
        c.ftl.kind = "fast".into();
        c.ftl.log_blocks = 1;
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("ftl.log_blocks"), "{s}");
    }

    #[test]
    fn bad_component_names_field() {
        let mut c = Config::default();
        c.buffer.kind = "lfu".into();
        let s = c.validate().unwrap_err().to_string();
        assert!(s.contains("buffer.kind") && s.contains("block-lru"), "{s}");
    }
}
