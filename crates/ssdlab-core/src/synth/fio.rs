//! The `fio` workload's parameters (`[workload.fio]`, `[[workload.fio.jobs]]`) and the job
//! engine behind the `fio`, `uniform`, `zipf` and `sequential` generators: a set of jobs, each
//! with its own region of the footprint, block sizes (fio's `bs` or `bssplit`), pattern
//! (random or sequential) and share of the requests. Each request picks its job by share.
//!
//! Offsets and sizes follow fio (io_u.c, init.c, filesetup.c): a random offset is the region's
//! start plus a uniformly (or Zipf) drawn multiple of `blockalign` (through fio's random map
//! unless `norandommap`: every block once per pass), which defaults to the
//! job's smallest block size, over the blocks where the smallest size still fits; the size is
//! then drawn from the split among the sizes that fit before the region's end (fio redraws
//! until one fits, which is the split restricted to them). A sequential job's cursor advances
//! by each request's size and wraps to the region's start when the smallest size no longer fits.

use super::Scatter;
use crate::config::WorkloadConfig;
use crate::error::{Result, SimError};
use crate::params::Params;
use crate::request::Op;
use crate::rng::{Rng, Zipf};
use crate::units::{parse_size, SECTOR_BYTES};
use serde::{Deserialize, Serialize};

crate::params! {
    /// The `fio` generator's parameters (`[workload.fio]`).
    pub struct FioParams {
        /// fio rw: write | read | rw (= readwrite; sequential) | randwrite | randread | randrw |
        /// randwrite-then-randread (a random write job, then a random read job over the same
        /// footprint, as two fio jobs separated by a stonewall).
        rw: String = "randwrite".into(),
        /// fio rwmixread: percent of reads of a mixed job (rw, readwrite, randrw); the other of
        /// rwmixread and rwmixwrite left at 50 yields to the one set.
        rwmixread: u32 = 50,
        /// fio rwmixwrite: percent of writes of a mixed job.
        rwmixwrite: u32 = 50,
        /// fio random_distribution of random offsets: random (uniform) | zipf:THETA (θ > 0) | zoned:ACCESS/SIZE:… (percentages).
        random_distribution: String = "random".into(),
        /// fio norandommap: true = every random offset drawn afresh (blocks may repeat before
        /// others are touched); false = fio's random map: each pass touches every block once.
        norandommap: bool = false,
        /// randwrite-then-randread: requests of the write job; the rest read. 0 = half of them.
        write_requests: u64 = 0,
        /// fio bssplit: request sizes drawn per request, `size/percent` pairs joined by `:`
        /// (`4k/50:64k/30:256k/20`; k, m, g binary; a pair without a percent shares the rest
        /// equally; the percentages sum to 100). Replaces workload.request_bytes. "" = off.
        bssplit: String = String::new(),
        /// fio blockalign: random offsets are multiples of it; 0 = the smallest block size.
        blockalign: FioSize = FioSize::Bytes(0),
        /// Concurrent fio jobs (`[[workload.fio.jobs]]`: rw, bs or bssplit, offset, size,
        /// share, rwmixread, rwmixwrite, random_distribution, norandommap, zipf_theta,
        /// blockalign; docs/workloads.md); each request picks a job by share. Empty = one job
        /// from the keys above; with jobs, rwmixread, rwmixwrite, random_distribution and
        /// norandommap above are the jobs' defaults (fio's global section).
        jobs: Vec<FioJob> = Vec::new(),
        /// fio fdp_pli: the FDP placement identifiers the job's writes carry, in turn (`[fdp]`);
        /// empty = identifier 0. With jobs, each job's own (absent: this list).
        fdp_pli: Vec<u16> = Vec::new(),
        /// fio plid_select: how a write picks its identifier from fdp_pli: roundrobin | random.
        plid_select: String = "roundrobin".into(),
    }
}

/// One fio job of `[[workload.fio.jobs]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FioJob {
    /// write | randwrite | read | randread | rw (= readwrite) | randrw.
    pub rw: String,
    /// Percent of reads of a mixed job; absent = workload.fio.rwmixread (or rwmixwrite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u32>,
    /// Percent of writes of a mixed job; absent = from rwmixread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rwmixwrite: Option<u32>,
    /// random | zipf:THETA | zoned:ACCESS/SIZE:…; absent = workload.fio.random_distribution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<String>,
    /// Absent = workload.fio.norandommap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub norandommap: Option<bool>,
    /// Block size; absent = workload.request_bytes (unless `bssplit` is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bs: Option<FioSize>,
    /// Request sizes as fio's bssplit; "" = `bs`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub bssplit: String,
    /// Random offsets are multiples of it from the region's start; absent = smallest size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<FioSize>,
    /// Start of the job's region: bytes, a size, or a percentage of workload.footprint_bytes
    /// (rounded up to the smallest block size, as fio does).
    pub offset: FioSize,
    /// Length of the region (bytes, a size or a percentage of the footprint); absent = the rest
    /// of the footprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<FioSize>,
    /// The job's fraction of the requests; absent = an equal part of what the others leave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Zipf skew of the random offsets, shorthand for random_distribution = "zipf:THETA"
    /// (0 = "random"); absent = the job's random_distribution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zipf_theta: Option<f64>,
    /// FDP placement identifiers its writes carry, in turn; absent = workload.fio.fdp_pli.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp_pli: Option<Vec<u16>>,
    /// roundrobin | random; absent = workload.fio.plid_select.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plid_select: Option<String>,
}

impl Default for FioJob {
    fn default() -> Self {
        FioJob {
            rw: "randwrite".into(),
            rwmixread: None,
            rwmixwrite: None,
            random_distribution: None,
            norandommap: None,
            bs: None,
            bssplit: String::new(),
            blockalign: None,
            offset: FioSize::Bytes(0),
            size: None,
            share: None,
            zipf_theta: None,
            fdp_pli: None,
            plid_select: None,
        }
    }
}

/// A size as a fio job file writes it: a number of bytes, or a string with a unit. The units
/// k, m, g, t (with or without a trailing b, any case; also KiB, MiB...) are binary, as under
/// fio's default kb_base = 1024: "4k" = "4KB" = 4096. Offsets and region sizes also take a
/// percentage of the footprint, "25%".
#[derive(Clone, Debug, PartialEq)]
pub enum FioSize {
    Bytes(u64),
    Text(String),
}

impl Serialize for FioSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            FioSize::Bytes(b) => s.serialize_u64(*b),
            FioSize::Text(t) => s.serialize_str(t),
        }
    }
}

impl<'de> Deserialize<'de> for FioSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = FioSize;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a size such as 4096, \"64k\" or \"25%\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<FioSize, E> {
                Ok(FioSize::Bytes(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<FioSize, E> {
                u64::try_from(v)
                    .map(FioSize::Bytes)
                    .map_err(|_| E::custom(format!("{v} is negative; expected a size")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<FioSize, E> {
                if v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64 {
                    Ok(FioSize::Bytes(v as u64))
                } else {
                    Err(E::custom(format!("{v} is not a whole number of bytes")))
                }
            }
            fn visit_str<E: serde::de::Error>(self, t: &str) -> std::result::Result<FioSize, E> {
                Ok(FioSize::Text(t.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl std::fmt::Display for FioSize {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            FioSize::Bytes(b) => write!(f, "{b}"),
            FioSize::Text(t) => write!(f, "\"{t}\""),
        }
    }
}

/// A size or a share of a whole.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Amount {
    Bytes(u64),
    /// Percent, 0..=100.
    Percent(f64),
}

impl FioSize {
    fn amount(&self, percent_ok: bool) -> std::result::Result<Amount, String> {
        let text = match self {
            FioSize::Bytes(b) => return Ok(Amount::Bytes(*b)),
            FioSize::Text(t) => t.trim(),
        };
        if let Some(p) = text.strip_suffix('%') {
            if !percent_ok {
                return Err(format!("`{text}`: a percentage is not allowed here"));
            }
            return match p.trim().parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => Ok(Amount::Percent(v)),
                _ => Err(format!("`{text}` is not a percentage in 0..100")),
            };
        }
        fio_bytes(text).map(Amount::Bytes)
    }

    /// Bytes, with no percentage allowed; a positive multiple of 512.
    fn block(&self) -> std::result::Result<u64, String> {
        match self.amount(false)? {
            Amount::Bytes(b) => sector_multiple(b, &self.to_string(), false),
            Amount::Percent(_) => unreachable!("percentages are refused above"),
        }
    }
}

/// Bytes of a size string with fio's binary units ("4k" = "4KB" = "4KiB" = 4096).
pub fn fio_bytes(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    parse_size(t).map_err(|_| {
        format!("`{text}` is not a size (expected bytes or a number with k, m, g or t, e.g. 64k)")
    })
}

fn sector_multiple(b: u64, shown: &str, zero_ok: bool) -> std::result::Result<u64, String> {
    if (b == 0 && !zero_ok) || !b.is_multiple_of(SECTOR_BYTES) {
        let what = if zero_ok {
            "a multiple"
        } else {
            "a positive multiple"
        };
        return Err(format!("{shown} is not {what} of 512 bytes"));
    }
    Ok(b)
}

/// Request sizes of a block-size split: sizes ascending, each with its probability (> 0).
#[derive(Clone, Debug, PartialEq)]
pub struct BsSplit(pub Vec<(u64, f64)>);

impl BsSplit {
    fn single(bs: u64) -> BsSplit {
        BsSplit(vec![(bs, 1.0)])
    }

    fn min(&self) -> u64 {
        self.0[0].0
    }

    fn max(&self) -> u64 {
        self.0[self.0.len() - 1].0
    }
}

/// Parse fio's `bssplit`: `size/percent` pairs joined by `:`. As in fio, a pair without a
/// percent (`64k` or `64k/`) or with 0 shares what the others leave equally, the percentages
/// must not exceed 100, and the same size twice adds up; unlike fio, the shares are exact
/// (fio divides the rest in whole percents) and the given percentages must sum to exactly 100
/// when no pair is blank. Sizes must be multiples of 512 and of the smallest size drawn.
pub fn parse_bssplit(text: &str) -> std::result::Result<BsSplit, String> {
    let mut given: Vec<(u64, Option<f64>)> = Vec::new();
    for pair in text.split(':') {
        let (size, perc) = match pair.split_once('/') {
            Some((s, p)) => (s, p.trim()),
            None => (pair, ""),
        };
        if size.trim().is_empty() {
            return Err(format!(
                "empty entry in `{text}` (expected e.g. 4k/50:64k/50)"
            ));
        }
        let bytes = sector_multiple(fio_bytes(size)?, size.trim(), false)?;
        let perc = if perc.is_empty() {
            None
        } else {
            match perc.parse::<f64>() {
                Ok(0.0) => None, // fio reads a 0 as blank
                Ok(p) if p > 0.0 && p.is_finite() => Some(p),
                _ => return Err(format!("`{perc}` in `{pair}` is not a percentage")),
            }
        };
        given.push((bytes, perc));
    }
    let sum: f64 = given.iter().filter_map(|g| g.1).sum();
    let blank = given.iter().filter(|g| g.1.is_none()).count();
    if sum > 100.0 + 1e-9 || (blank == 0 && (sum - 100.0).abs() > 1e-9) {
        return Err(format!("`{text}`: the percentages sum to {sum}, not 100"));
    }
    let rest = ((100.0 - sum) / blank.max(1) as f64).max(0.0);
    let mut split: Vec<(u64, f64)> = Vec::new();
    for (bytes, perc) in given {
        let p = perc.unwrap_or(rest) / 100.0;
        match split.iter_mut().find(|s| s.0 == bytes) {
            Some(s) => s.1 += p,
            None => split.push((bytes, p)),
        }
    }
    split.retain(|s| s.1 > 0.0);
    split.sort_by_key(|s| s.0);
    let min = split[0].0;
    if let Some(&(b, _)) = split.iter().find(|s| s.0 % min != 0) {
        return Err(format!(
            "`{text}`: {b} is not a multiple of the smallest size drawn, {min} (fio would round it down)"
        ));
    }
    Ok(BsSplit(split))
}

/// How a random job draws its offsets (fio's `random_distribution`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dist {
    Uniform,
    /// Zipf(θ), θ > 0, hot ranks scattered over the region.
    Zipf(f64),
    /// fio's `zoned`: (access %, size %) per zone, consecutive zones from the region's start,
    /// uniform inside each; both columns sum to 100.
    Zoned(Vec<(f64, f64)>),
}

impl Dist {
    /// `zipf_theta`'s shorthand: 0 = uniform.
    fn from_theta(theta: f64) -> Dist {
        if theta > 0.0 {
            Dist::Zipf(theta)
        } else {
            Dist::Uniform
        }
    }
}

/// fio's `random_distribution`: "random" (uniform), "zipf:θ" (θ > 0) or
/// "zoned:A/S:A/S:…" (A% of the accesses to the next S% of the region). fio's other models
/// (pareto, normal, zoned_abs, …) and zipf's centre are not implemented.
fn distribution(text: &str) -> std::result::Result<Dist, String> {
    let t = text.trim();
    if t == "random" {
        return Ok(Dist::Uniform);
    }
    if let Some(z) = t.strip_prefix("zoned:") {
        return zoned(z).map(Dist::Zoned).map_err(|e| format!("`{t}`: {e}"));
    }
    let theta = t.strip_prefix("zipf:").map(|v| v.trim().parse::<f64>());
    match theta {
        Some(Ok(v)) if v > 0.0 && v.is_finite() => Ok(Dist::Zipf(v)),
        _ => Err(format!(
            "`{t}` is not supported; valid: \"random\" (uniform), \"zipf:THETA\" with THETA > 0 \
             or \"zoned:ACCESS/SIZE:…\" (percentages)"
        )),
    }
}

/// The zones of "A/S:A/S:…": each A% of the accesses to the next S% of the region.
fn zoned(text: &str) -> std::result::Result<Vec<(f64, f64)>, String> {
    let zones = text
        .split(':')
        .map(|z| {
            let (a, s) = z
                .split_once('/')
                .ok_or_else(|| format!("zone `{z}` is not ACCESS/SIZE"))?;
            let pct = |v: &str| match v.trim().parse::<f64>() {
                Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
                _ => Err(format!("zone `{z}`: `{v}` is not a percentage in 0..=100")),
            };
            let (a, s) = (pct(a)?, pct(s)?);
            if s == 0.0 && a > 0.0 {
                return Err(format!("zone `{z}` takes accesses but has no size"));
            }
            Ok((a, s))
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    for (col, what) in [(0, "access"), (1, "size")] {
        let sum: f64 = zones.iter().map(|z| if col == 0 { z.0 } else { z.1 }).sum();
        if (sum - 100.0).abs() > 1e-9 {
            return Err(format!("the {what} percentages sum to {sum}, not 100"));
        }
    }
    Ok(zones)
}

/// The read share of a mixed job from fio's rwmixread and rwmixwrite (percent). fio lets the
/// one given last override the other; here one left at its default (50) yields to the other.
fn read_share(read: u32, write: u32) -> std::result::Result<f64, String> {
    if read > 100 || write > 100 {
        return Err(format!(
            "rwmixread = {read}, rwmixwrite = {write}: percentages are 0..100"
        ));
    }
    let r = match (read, write) {
        (r, w) if r + w == 100 => r,
        (50, w) => 100 - w,
        (r, 50) => r,
        (r, w) => {
            return Err(format!(
                "rwmixread = {r} and rwmixwrite = {w} do not sum to 100: give one of them"
            ))
        }
    };
    Ok(r as f64 / 100.0)
}

/// fio rw values and what they mean here: (sequential, direction kind).
const RW_VALUES: &[&str] = &[
    "write",
    "read",
    "rw",
    "readwrite",
    "randwrite",
    "randread",
    "randrw",
];

/// Direction of a job's requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Dir {
    Write,
    Read,
    /// Reads with this probability (drawn only when > 0).
    Mix(f64),
}

/// A job resolved against the footprint (nothing drawn yet).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JobPlan {
    /// Region [start, end) in bytes.
    pub start: u64,
    pub end: u64,
    pub sizes: BsSplit,
    /// Random offsets: multiples of this from `start`.
    pub align: u64,
    pub sequential: bool,
    /// Sequential cursors, spread evenly over the region.
    pub streams: u64,
    /// Sequential: reads and writes follow cursors of their own (fio's per-direction
    /// position); false = one cursor for both (the `sequential` kind).
    pub split_dirs: bool,
    /// Random offsets through fio's random map (every block once per pass).
    pub random_map: bool,
    pub dir: Dir,
    pub dist: Dist,
    pub share: f64,
    /// FDP placement identifiers of its writes, in turn or at random (empty: 0).
    pub pli: Vec<u16>,
    pub pli_random: bool,
}

impl JobPlan {
    /// Random offsets: blocks of `align` whose start leaves room for the smallest size (fio's
    /// last_block()).
    fn blocks(&self) -> u64 {
        let min = self.sizes.min();
        let room = (self.end - self.start).saturating_sub(min.saturating_sub(self.align));
        room / self.align
    }
}

/// fio's plid_select: whether a write picks its identifier at random (else in turn).
fn plid_random(v: &str, field: &str) -> Result<bool> {
    crate::error::one_of(field, v, &["roundrobin", "random"])?;
    Ok(v == "random")
}

fn job_key(i: usize, k: &str) -> String {
    format!("workload.fio.jobs[{i}].{k}")
}

impl Params for FioParams {
    fn check(&self, table: &str) -> Result<()> {
        let key = |k: &str| format!("{table}.{k}");
        if self.rw != "randwrite-then-randread" && rw_kind(&self.rw).is_none() {
            let valid = [RW_VALUES, &["randwrite-then-randread"]].concat();
            return Err(crate::error::unknown_value(key("rw"), &self.rw, &valid));
        }
        read_share(self.rwmixread, self.rwmixwrite)
            .map_err(|e| SimError::config(key("rwmixread"), e))?;
        distribution(&self.random_distribution)
            .map_err(|e| SimError::config(key("random_distribution"), e))?;
        if self.write_requests > 0 && self.rw != "randwrite-then-randread" {
            return Err(SimError::config(
                key("write_requests"),
                format!(
                    "applies to rw = \"randwrite-then-randread\", not \"{}\"",
                    self.rw
                ),
            ));
        }
        if !self.bssplit.is_empty() {
            parse_bssplit(&self.bssplit).map_err(|e| SimError::config(key("bssplit"), e))?;
        }
        let ba = match self.blockalign.amount(false) {
            Ok(Amount::Bytes(b)) => sector_multiple(b, &self.blockalign.to_string(), true),
            Ok(Amount::Percent(_)) => unreachable!("percentages are refused above"),
            Err(e) => Err(e),
        }
        .map_err(|e| SimError::config(key("blockalign"), e))?;
        if self.jobs.is_empty() {
            return Ok(());
        }
        // With jobs, each job says its own rw, sizes and alignment.
        let per_job = "with [[workload.fio.jobs]] each job has its own";
        if self.rw != "randwrite" {
            return Err(SimError::config(
                key("rw"),
                format!("is \"{}\", but {per_job} rw: remove it", self.rw),
            ));
        }
        if !self.bssplit.is_empty() {
            return Err(SimError::config(
                key("bssplit"),
                format!(
                    "is \"{}\", but {per_job} bs or bssplit: move it into the jobs",
                    self.bssplit
                ),
            ));
        }
        if ba != 0 {
            return Err(SimError::config(
                key("blockalign"),
                format!("is {ba}, but {per_job} blockalign: move it into the jobs"),
            ));
        }
        let mut given = 0.0;
        let mut blank = 0;
        for (i, j) in self.jobs.iter().enumerate() {
            if rw_kind(&j.rw).is_none() {
                return Err(crate::error::unknown_value(
                    job_key(i, "rw"),
                    &j.rw,
                    RW_VALUES,
                ));
            }
            self.job_read_share(j)
                .map_err(|e| SimError::config(job_key(i, "rwmixread"), e))?;
            self.job_dist(j)
                .map_err(|e| SimError::config(job_key(i, "random_distribution"), e))?;
            if let Some(bs) = &j.bs {
                if !j.bssplit.is_empty() {
                    return Err(SimError::config(
                        job_key(i, "bssplit"),
                        format!("is set together with bs = {bs}: give one of them"),
                    ));
                }
                bs.block()
                    .map_err(|e| SimError::config(job_key(i, "bs"), e))?;
            }
            if !j.bssplit.is_empty() {
                parse_bssplit(&j.bssplit)
                    .map_err(|e| SimError::config(job_key(i, "bssplit"), e))?;
            }
            if let Some(ba) = &j.blockalign {
                ba.block()
                    .map_err(|e| SimError::config(job_key(i, "blockalign"), e))?;
            }
            j.offset
                .amount(true)
                .map_err(|e| SimError::config(job_key(i, "offset"), e))?;
            if let Some(s) = &j.size {
                s.amount(true)
                    .map_err(|e| SimError::config(job_key(i, "size"), e))?;
            }
            if let Some(t) = j.zipf_theta {
                if !(t >= 0.0 && t.is_finite()) {
                    return Err(SimError::config(
                        job_key(i, "zipf_theta"),
                        format!("{t} must be ≥ 0"),
                    ));
                }
                if let Some(d) = &j.random_distribution {
                    return Err(SimError::config(
                        job_key(i, "zipf_theta"),
                        format!(
                            "is set together with random_distribution = \"{d}\": give one of them"
                        ),
                    ));
                }
            }
            match j.share {
                Some(s) if !(0.0..=1.0).contains(&s) => {
                    return Err(SimError::config(
                        job_key(i, "share"),
                        format!("{s} is not in [0, 1]"),
                    ))
                }
                Some(s) => given += s,
                None => blank += 1,
            }
        }
        if given > 1.0 + 1e-9 || (blank == 0 && (given - 1.0).abs() > 1e-9) {
            let shares: Vec<String> = self
                .jobs
                .iter()
                .map(|j| j.share.map_or("unset".into(), |s| s.to_string()))
                .collect();
            return Err(SimError::config(
                key("jobs"),
                format!(
                    "the jobs' shares ({}) sum to {given}; they must sum to 1",
                    shares.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// A fio rw value's pattern: (sequential, direction), for every value but
/// randwrite-then-randread; None = unknown. A mixed direction carries no share yet.
fn rw_kind(rw: &str) -> Option<(bool, Dir)> {
    Some(match rw {
        "write" => (true, Dir::Write),
        "read" => (true, Dir::Read),
        "rw" | "readwrite" => (true, Dir::Mix(0.0)),
        "randwrite" => (false, Dir::Write),
        "randread" => (false, Dir::Read),
        "randrw" => (false, Dir::Mix(0.0)),
        _ => return None,
    })
}

impl FioParams {
    /// A job's read share: its own rwmixread/rwmixwrite, else the table's.
    fn job_read_share(&self, j: &FioJob) -> std::result::Result<f64, String> {
        if j.rwmixread.is_none() && j.rwmixwrite.is_none() {
            return read_share(self.rwmixread, self.rwmixwrite);
        }
        read_share(j.rwmixread.unwrap_or(50), j.rwmixwrite.unwrap_or(50))
    }

    /// A job's offset distribution: zipf_theta, else its random_distribution, else the table's.
    fn job_dist(&self, j: &FioJob) -> std::result::Result<Dist, String> {
        match (j.zipf_theta, &j.random_distribution) {
            (Some(t), _) => Ok(Dist::from_theta(t)),
            (None, Some(d)) => distribution(d),
            (None, None) => distribution(&self.random_distribution),
        }
    }

    /// The jobs of a synthetic workload `w` (kind fio, uniform, zipf or sequential), resolved
    /// against its footprint. Errors name the field.
    pub(crate) fn plan(&self, w: &WorkloadConfig) -> Result<Vec<JobPlan>> {
        let footprint = w.footprint_bytes.0;
        let fio = w.kind == "fio";
        if fio && w.read_fraction > 0.0 {
            return Err(SimError::config(
                "workload.read_fraction",
                format!(
                    "is {}, but a fio workload takes its reads from rw and its mix from \
                     workload.fio.rwmixread (fio's): set rw = \"randrw\" (or rw, randread, read) \
                     and rwmixread = {} instead",
                    w.read_fraction,
                    (w.read_fraction * 100.0).round()
                ),
            ));
        }
        let default_theta = WorkloadConfig::default().zipf_theta;
        if fio && w.zipf_theta != default_theta {
            // fio's offsets follow random_distribution; a workload-wide θ would be ignored silently.
            let wanted = if w.zipf_theta == 0.0 {
                "random".to_string()
            } else {
                format!("zipf:{}", w.zipf_theta)
            };
            return Err(SimError::config(
                "workload.zipf_theta",
                format!(
                    "is {}, but a fio workload draws its offsets by workload.fio.random_distribution \
                     (fio's default: uniform): set random_distribution = \"{wanted}\" instead and \
                     leave workload.zipf_theta out",
                    w.zipf_theta
                ),
            ));
        }
        if !fio || self.jobs.is_empty() {
            let sizes = if fio && !self.bssplit.is_empty() {
                let default = WorkloadConfig::default().request_bytes;
                if w.request_bytes != default {
                    return Err(SimError::config(
                        "workload.request_bytes",
                        format!(
                            "is {} but workload.fio.bssplit = \"{}\" sets the request sizes: \
                             leave workload.request_bytes at its default ({}) or remove bssplit",
                            w.request_bytes.0, self.bssplit, default.0
                        ),
                    ));
                }
                parse_bssplit(&self.bssplit)
                    .map_err(|e| SimError::config("workload.fio.bssplit", e))?
            } else {
                BsSplit::single(w.request_bytes.0)
            };
            let ba = match self.blockalign.amount(false) {
                Ok(Amount::Bytes(b)) if fio && b > 0 => b,
                _ => sizes.min(), // 0 = fio's default; check() refused anything else
            };
            // uniform, zipf and sequential: workload.read_fraction and zipf_theta, no map.
            let (sequential, dir, dist, random_map) = if fio {
                let (seq, dir) = rw_kind(&self.rw).unwrap_or((false, Dir::Write));
                let dist = distribution(&self.random_distribution)
                    .map_err(|e| SimError::config("workload.fio.random_distribution", e))?;
                let dir = match dir {
                    Dir::Mix(_) => Dir::Mix(
                        read_share(self.rwmixread, self.rwmixwrite)
                            .map_err(|e| SimError::config("workload.fio.rwmixread", e))?,
                    ),
                    d => d,
                };
                // fio keeps no random map for a non-uniform distribution.
                let map = !seq && dist == Dist::Uniform && !self.norandommap;
                (seq, dir, dist, map)
            } else {
                let theta = if w.kind == "zipf" { w.zipf_theta } else { 0.0 };
                let seq = w.kind == "sequential";
                (
                    seq,
                    Dir::Mix(w.read_fraction),
                    Dist::from_theta(theta),
                    false,
                )
            };
            let plan = JobPlan {
                start: 0,
                end: footprint,
                align: ba,
                sequential,
                streams: if sequential {
                    w.streams.max(1) as u64
                } else {
                    1
                },
                split_dirs: fio,
                random_map,
                dir,
                dist,
                share: 1.0,
                sizes,
                pli: self.fdp_pli.clone(),
                pli_random: plid_random(&self.plid_select, "workload.fio.plid_select")?,
            };
            let (field, what) = if fio && !self.bssplit.is_empty() {
                ("workload.fio.bssplit", "the largest size")
            } else {
                ("workload.footprint_bytes", "workload.request_bytes")
            };
            if plan.sizes.max() > footprint {
                return Err(SimError::config(
                    field,
                    format!(
                        "{what} ({}) exceeds workload.footprint_bytes ({footprint})",
                        plan.sizes.max()
                    ),
                ));
            }
            if plan.blocks() == 0 {
                return Err(SimError::config(
                    "workload.fio.blockalign",
                    format!("{ba} leaves no offset in workload.footprint_bytes ({footprint})"),
                ));
            }
            return Ok(vec![plan]);
        }
        if w.streams > 1 {
            return Err(SimError::config(
                "workload.streams",
                format!(
                    "is {}, but with [[workload.fio.jobs]] each sequential job has one cursor: \
                     give each stream a job of its own",
                    w.streams
                ),
            ));
        }
        let given: f64 = self.jobs.iter().filter_map(|j| j.share).sum();
        let blank = self.jobs.iter().filter(|j| j.share.is_none()).count();
        let rest = ((1.0 - given) / blank.max(1) as f64).max(0.0);
        let mut plans = Vec::with_capacity(self.jobs.len());
        for (i, j) in self.jobs.iter().enumerate() {
            let err = |k: &str, e: String| SimError::config(job_key(i, k), e);
            let sizes = match (&j.bs, j.bssplit.is_empty()) {
                (Some(bs), _) => BsSplit::single(bs.block().map_err(|e| err("bs", e))?),
                (None, false) => parse_bssplit(&j.bssplit).map_err(|e| err("bssplit", e))?,
                (None, true) => BsSplit::single(w.request_bytes.0),
            };
            let min = sizes.min();
            let align = match &j.blockalign {
                Some(b) => b.block().map_err(|e| err("blockalign", e))?,
                None => min,
            };
            // As fio: a percentage offset is rounded up to the smallest block size; a
            // percentage size is rounded down to it.
            let pct = |p: f64| (footprint as f64 * p / 100.0) as u64;
            let (raw_offset, offset) = match j.offset.amount(true).map_err(|e| err("offset", e))? {
                Amount::Bytes(b) => {
                    let b = sector_multiple(b, &j.offset.to_string(), true)
                        .map_err(|e| err("offset", e))?;
                    (b, b)
                }
                Amount::Percent(p) => (pct(p), pct(p).div_ceil(min) * min),
            };
            if offset >= footprint {
                return Err(err(
                    "offset",
                    format!(
                        "{} = {offset} bytes is not inside workload.footprint_bytes ({footprint})",
                        j.offset
                    ),
                ));
            }
            let size = match &j.size {
                None => footprint - offset,
                Some(s) => {
                    let (raw, bytes) = match s.amount(true).map_err(|e| err("size", e))? {
                        Amount::Bytes(b) => {
                            let b = sector_multiple(b, &s.to_string(), false)
                                .map_err(|e| err("size", e))?;
                            (b, b)
                        }
                        Amount::Percent(p) => {
                            let b = pct(p).min(footprint - offset);
                            (pct(p), b - b % min)
                        }
                    };
                    let from = if matches!(s, FioSize::Text(t) if t.trim().ends_with('%')) {
                        raw_offset
                    } else {
                        offset
                    };
                    if from + raw > footprint {
                        return Err(err(
                            "size",
                            format!(
                                "{s}: the region [{offset}, {}) ends beyond workload.footprint_bytes ({footprint})",
                                from + raw
                            ),
                        ));
                    }
                    bytes
                }
            };
            let (sequential, dir) = rw_kind(&j.rw)
                .ok_or_else(|| crate::error::unknown_value(job_key(i, "rw"), &j.rw, RW_VALUES))?;
            let dir = match dir {
                Dir::Mix(_) => Dir::Mix(self.job_read_share(j).map_err(|e| err("rwmixread", e))?),
                d => d,
            };
            let dist = self
                .job_dist(j)
                .map_err(|e| err("random_distribution", e))?;
            let plan = JobPlan {
                start: offset,
                end: offset + size,
                align,
                sequential,
                streams: 1,
                split_dirs: true,
                random_map: !sequential
                    && dist == Dist::Uniform
                    && !j.norandommap.unwrap_or(self.norandommap),
                dir,
                dist,
                share: j.share.unwrap_or(rest),
                sizes,
                pli: j.fdp_pli.clone().unwrap_or_else(|| self.fdp_pli.clone()),
                pli_random: plid_random(
                    j.plid_select.as_deref().unwrap_or(&self.plid_select),
                    &job_key(i, "plid_select"),
                )?,
            };
            if plan.sizes.max() > size {
                return Err(err(
                    "size",
                    format!(
                        "the region [{offset}, {}) is smaller than the job's largest block ({})",
                        plan.end,
                        plan.sizes.max()
                    ),
                ));
            }
            if plan.blocks() == 0 {
                return Err(err(
                    "blockalign",
                    format!(
                        "{align} leaves no offset in the region [{offset}, {})",
                        plan.end
                    ),
                ));
            }
            plans.push(plan);
        }
        Ok(plans)
    }
}

/// fio's random map (its `axmap`): the blocks a pass has touched. A drawn block already
/// touched gives way to the next untouched one after it (wrapping, as `axmap_next_free`), a
/// request stops short at the first touched block after its start (as `mark_random_map`), and
/// when every block is touched the next pass starts afresh. One bit a block, with one bit a
/// word of them marking full words, so that a search skips 4,096 touched blocks at a time.
#[derive(Clone, Debug)]
struct RandomMap {
    words: Vec<u64>,
    full: Vec<u64>,
    blocks: u64,
    touched: u64,
}

impl RandomMap {
    fn new(blocks: u64) -> RandomMap {
        let n = blocks.div_ceil(64) as usize;
        RandomMap {
            words: vec![0; n],
            full: vec![0; n.div_ceil(64)],
            blocks,
            touched: 0,
        }
    }

    fn new_pass(&mut self) {
        self.words.fill(0);
        self.full.fill(0);
        self.touched = 0;
    }

    fn is_touched(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] >> (b % 64) & 1 == 1
    }

    /// The bits of word `w` that stand for blocks.
    fn mask(&self, w: usize) -> u64 {
        let tail = self.blocks % 64;
        if w + 1 == self.words.len() && tail != 0 {
            (1 << tail) - 1
        } else {
            u64::MAX
        }
    }

    fn touch(&mut self, b: u64) {
        let w = (b / 64) as usize;
        self.words[w] |= 1 << (b % 64);
        self.touched += 1;
        if self.words[w] == self.mask(w) {
            self.full[w / 64] |= 1 << (w % 64);
        }
    }

    /// The first untouched block in [from, blocks).
    fn first_free(&self, from: u64) -> Option<u64> {
        if from >= self.blocks {
            return None;
        }
        let free = |w: usize| !self.words[w] & self.mask(w);
        let at = |w: usize, bits: u64| w as u64 * 64 + bits.trailing_zeros() as u64;
        let w = (from / 64) as usize;
        let here = free(w) & (u64::MAX << (from % 64));
        if here != 0 {
            return Some(at(w, here));
        }
        let mut w = w + 1;
        while w < self.words.len() {
            let open = !self.full[w / 64] & (u64::MAX << (w % 64));
            if open == 0 {
                w = (w / 64 + 1) * 64;
                continue;
            }
            let next = w / 64 * 64 + open.trailing_zeros() as usize;
            return (next < self.words.len()).then(|| at(next, free(next)));
        }
        None
    }

    /// The first untouched block after `b`, wrapping to the start (the map is not full).
    fn next_free(&self, b: u64) -> u64 {
        self.first_free(b + 1)
            .or_else(|| self.first_free(0))
            .unwrap_or(b)
    }

    /// Touch up to `n` blocks from `b` on, stopping at a touched one or the map's end;
    /// returns how many were touched.
    fn take(&mut self, b: u64, n: u64) -> u64 {
        let mut k = 0;
        while k < n && b + k < self.blocks && !self.is_touched(b + k) {
            self.touch(b + k);
            k += 1;
        }
        k
    }
}

/// A job while requests are drawn.
#[derive(Clone, Debug)]
struct Job {
    plan: JobPlan,
    /// Cumulative probabilities of `plan.sizes`.
    cum_sizes: Vec<f64>,
    blocks: u64,
    zipf: Option<Zipf>,
    /// fio's zoned distribution: (cumulative access share, first block, end block) per zone.
    zones: Vec<(f64, u64, u64)>,
    scatter: Scatter,
    cursors: Vec<u64>,
    /// Reads' own cursors (fio keeps a position per direction); empty = shared.
    read_cursors: Vec<u64>,
    map: Option<RandomMap>,
    /// The next identifier of `plan.pli` (round robin).
    pli_at: usize,
}

impl Job {
    fn new(plan: JobPlan, rng: &mut Rng) -> Job {
        let blocks = plan.blocks();
        let mut acc = 0.0;
        let cum_sizes = plan
            .sizes
            .0
            .iter()
            .map(|s| {
                acc += s.1;
                acc
            })
            .collect();
        let len = plan.end - plan.start;
        let cursors: Vec<u64> = (0..plan.streams)
            .map(|i| plan.start + (len / plan.streams * i) / plan.align * plan.align)
            .collect();
        Job {
            zipf: match plan.dist {
                Dist::Zipf(theta) => Some(Zipf::new(blocks, theta)),
                _ => None,
            },
            zones: match &plan.dist {
                Dist::Zoned(z) => zone_blocks(z, blocks),
                _ => Vec::new(),
            },
            scatter: Scatter::new(blocks, rng),
            blocks,
            cum_sizes,
            read_cursors: if plan.split_dirs && plan.sequential && plan.dir != Dir::Write {
                cursors.clone()
            } else {
                Vec::new()
            },
            cursors,
            map: plan.random_map.then(|| RandomMap::new(blocks)),
            pli_at: 0,
            plan,
        }
    }

    /// A size from the split among those that fit in `room` bytes (the smallest always does).
    fn size(&self, rng: &mut Rng, room: u64) -> u64 {
        let sizes = &self.plan.sizes.0;
        if sizes.len() == 1 {
            return sizes[0].0;
        }
        let fit = sizes.partition_point(|s| s.0 <= room).max(1);
        let u = rng.f64() * self.cum_sizes[fit - 1];
        let i = self.cum_sizes[..fit].partition_point(|&c| c <= u);
        sizes[i.min(fit - 1)].0
    }

    /// The placement identifier of its next write (fio's fdp_pli and plid_select; reads and
    /// jobs without a list: 0, no draw).
    #[inline]
    fn placement_id(&mut self, rng: &mut Rng, op: Op) -> u16 {
        let n = self.plan.pli.len();
        if op != Op::Write || n == 0 {
            return 0;
        }
        let i = if self.plan.pli_random {
            rng.below(n as u64) as usize
        } else {
            let i = self.pli_at;
            self.pli_at = (i + 1) % n;
            i
        };
        self.plan.pli[i]
    }

    /// (offset, length, stream hint) of a request in direction `op`.
    #[inline]
    fn next(&mut self, rng: &mut Rng, op: Op) -> (u64, u64, u32) {
        if self.plan.sequential {
            let s = rng.below(self.cursors.len() as u64) as usize;
            let own = op == Op::Read && !self.read_cursors.is_empty();
            let at = if own {
                self.read_cursors[s]
            } else {
                self.cursors[s]
            };
            let (start, end) = (self.plan.start, self.plan.end);
            let off = if at + self.plan.sizes.min() > end {
                start
            } else {
                at
            };
            let len = self.size(rng, end - off);
            if own {
                self.read_cursors[s] = off + len;
            } else {
                self.cursors[s] = off + len;
            }
            return (off, len, s as u32);
        }
        let block = match (&self.zipf, &mut self.map) {
            // Zoned (no Zipf, and fio keeps no map for it): a zone by its access share, then
            // uniform inside it.
            _ if !self.zones.is_empty() => {
                let u = rng.f64();
                let i = self.zones.partition_point(|z| z.0 <= u);
                let (_, first, end) = self.zones[i.min(self.zones.len() - 1)];
                first + rng.below(end - first)
            }
            (Some(z), _) => self.scatter.map(z.sample(rng) - 1),
            (None, None) => rng.below(self.blocks),
            (None, Some(map)) => {
                if map.touched == map.blocks {
                    map.new_pass();
                }
                let b = rng.below(self.blocks);
                if map.is_touched(b) {
                    map.next_free(b)
                } else {
                    b
                }
            }
        };
        let (start, align, min) = (self.plan.start, self.plan.align, self.plan.sizes.min());
        let off = start + block * align;
        let mut len = self.size(rng, self.plan.end - off);
        if let Some(map) = &mut self.map {
            // Cut at the first block already touched, never below the smallest size.
            let n = map.take(block, len.div_ceil(align));
            len = len.min(n * align).max(min);
        }
        (off, len, 0)
    }
}

/// fio's zones over `blocks` blocks: (cumulative access share, first block, end block), the
/// zones without accesses left out; each zone keeps at least one block.
fn zone_blocks(zones: &[(f64, f64)], blocks: u64) -> Vec<(f64, u64, u64)> {
    let (mut acc, mut size) = (0.0, 0.0);
    let mut out = Vec::new();
    for &(a, s) in zones {
        let first = ((size / 100.0 * blocks as f64).round() as u64).min(blocks - 1);
        size += s;
        let end = ((size / 100.0 * blocks as f64).round() as u64).clamp(first + 1, blocks);
        acc += a / 100.0;
        if a > 0.0 {
            out.push((acc, first, end));
        }
    }
    // The last zone with accesses takes every draw the rounding of the shares leaves over.
    if let Some(last) = out.last_mut() {
        last.0 = 1.0;
    }
    out
}

/// The jobs of a workload and the draw of each request's job.
#[derive(Clone, Debug)]
pub(crate) struct Jobs {
    jobs: Vec<Job>,
    cum_shares: Vec<f64>,
}

impl Jobs {
    /// Jobs in order, each drawing its scatter permutation from `rng`.
    pub fn new(plans: Vec<JobPlan>, rng: &mut Rng) -> Jobs {
        let mut acc = 0.0;
        let mut cum_shares: Vec<f64> = plans
            .iter()
            .map(|p| {
                acc += p.share;
                acc
            })
            .collect();
        // Shares sum to 1 within 1e-9: from the last job with a share on, the sum is 1
        // exactly, so that rounding never picks a job without one.
        if let Some(last) = plans.iter().rposition(|p| p.share > 0.0) {
            cum_shares[last..].fill(1.0);
        }
        Jobs {
            jobs: plans.into_iter().map(|p| Job::new(p, rng)).collect(),
            cum_shares,
        }
    }

    /// The next request: its job by share (no draw with one job), its direction (`op` when
    /// the workload fixes it), offset, length, stream hint and FDP placement identifier.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng, op: Option<Op>) -> (Op, u64, u64, u32, u16) {
        let j = if self.jobs.len() > 1 {
            let u = rng.f64();
            self.cum_shares
                .partition_point(|&c| c <= u)
                .min(self.jobs.len() - 1)
        } else {
            0
        };
        let job = &mut self.jobs[j];
        let op = op.unwrap_or_else(|| match job.plan.dir {
            Dir::Write => Op::Write,
            Dir::Read => Op::Read,
            Dir::Mix(p) if p > 0.0 && rng.f64() < p => Op::Read,
            Dir::Mix(_) => Op::Write,
        });
        let (off, len, dev) = job.next(rng, op);
        (op, off, len, dev, job.placement_id(rng, op))
    }

    /// Start a new pass of every random map: a new fio job over the same region (the read
    /// job after the stonewall of randwrite-then-randread).
    pub fn new_pass(&mut self) {
        for map in self.jobs.iter_mut().filter_map(|j| j.map.as_mut()) {
            map.new_pass();
        }
    }
}

/// The registry entry of workload `fio`.
pub const FIO: crate::component::Component = crate::component::Component::new("workload", "fio", "fio jobs with fio's defaults: one (rw = write, read, rw, randwrite, randread, randrw or randwrite-then-randread; bs or bssplit; rwmixread; random_distribution; fio's random map unless norandommap; streams) or several concurrent [[workload.fio.jobs]], each with its rw, bs or bssplit, region and share of the requests (docs/workloads.md).",
      crate::params::spec::<FioParams>(),
      &["workload.requests", "workload.request_bytes", "workload.footprint_bytes", "workload.streams", "workload.seed", "workload.placement_ids"]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::request::Request;
    use crate::synth::Synth;
    use crate::units::Size;
    use serde_json::{json, Value};

    const GIB: u64 = 1 << 30;

    fn workload(fio: Value, requests: u64, footprint: u64) -> WorkloadConfig {
        let mut w = WorkloadConfig {
            kind: "fio".into(),
            requests,
            footprint_bytes: Size(footprint),
            ..Default::default()
        };
        w.tables.insert("fio".into(), fio);
        w
    }

    fn run(w: &WorkloadConfig, seed: u64) -> Vec<Request> {
        Synth::new(w, seed).unwrap().map(|r| r.unwrap()).collect()
    }

    /// The configuration error of a whole configuration, as text.
    fn config_error(fio: Value, f: impl FnOnce(&mut WorkloadConfig)) -> String {
        let mut cfg = Config {
            workload: workload(fio, 1000, 4 * GIB),
            ..Default::default()
        };
        f(&mut cfg.workload);
        cfg.validate().unwrap_err().to_string()
    }

    /// |count − n·p| within 4 standard errors of a binomial count.
    fn within_4se(count: usize, n: usize, p: f64) -> bool {
        let se = (n as f64 * p * (1.0 - p)).sqrt();
        (count as f64 - n as f64 * p).abs() <= 4.0 * se
    }

    #[test]
    fn zoned_distribution_sends_each_zone_its_share() {
        // fio's zoned:80/20:10/20:10/60 over a job of 100 blocks of 4 KiB at 1 MiB: 80% of
        // the writes to blocks 0..20, 10% to 20..40, 10% to 40..100, uniform inside each zone
        // (the last zone's 60 blocks each 1/600); no random map (fio keeps none).
        let n = 200_000;
        let w = workload(
            json!({"jobs": [{"rw": "randwrite", "offset": "1MiB", "size": "400KiB",
                             "random_distribution": "zoned:80/20:10/20:10/60"}]}),
            n as u64,
            2 << 20,
        );
        let mut per_block = vec![0usize; 100];
        for r in run(&w, 3) {
            assert_eq!(r.len_bytes, 4096);
            per_block[((r.offset_bytes - (1 << 20)) / 4096) as usize] += 1;
        }
        let zone = |a: usize, b: usize| per_block[a..b].iter().sum::<usize>();
        assert!(within_4se(zone(0, 20), n, 0.8), "{}", zone(0, 20));
        assert!(within_4se(zone(20, 40), n, 0.1), "{}", zone(20, 40));
        assert!(within_4se(zone(40, 100), n, 0.1), "{}", zone(40, 100));
        assert!(per_block[40..]
            .iter()
            .all(|&c| within_4se(c, n, 0.1 / 60.0)));
        assert!(per_block[..20]
            .iter()
            .all(|&c| within_4se(c, n, 0.8 / 20.0)));
        // Percentages that do not sum to 100, a malformed zone, a zone with accesses and no size.
        for (bad, says) in [
            ("zoned:80/20:10/20", "sum to 90"),
            ("zoned:80-20:20/80", "not ACCESS/SIZE"),
            ("zoned:50/100:50/0", "no size"),
            ("zoned:50/50:50/x", "not a percentage"),
        ] {
            let e = config_error(
                json!({"random_distribution": bad, "rw": "randwrite"}),
                |_| {},
            );
            assert!(
                e.contains("workload.fio.random_distribution") && e.contains(says),
                "{bad}: {e}"
            );
        }
    }

    fn approx(split: &BsSplit, want: &[(u64, f64)]) -> bool {
        split.0.len() == want.len()
            && split
                .0
                .iter()
                .zip(want)
                .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-12)
    }

    #[test]
    fn bssplit_hand_cases() {
        let s = |t: &str| parse_bssplit(t).unwrap();
        assert_eq!(
            s("4k/50:64k/30:256k/20"),
            BsSplit(vec![(4096, 0.5), (65536, 0.3), (262144, 0.2)])
        );
        // fio's own example: the blanks share the remaining 50% equally.
        assert_eq!(
            s("4k/50:1k/:32k/"),
            BsSplit(vec![(1024, 0.25), (4096, 0.5), (32768, 0.25)])
        );
        // No percent at all: equal thirds; order does not matter; a bare size is blank too.
        assert!(approx(
            &s("16k:4k:8k"),
            &[(4096, 1.0 / 3.0), (8192, 1.0 / 3.0), (16384, 1.0 / 3.0)]
        ));
        assert!(approx(
            &s("4k/60:64k/30:256k"),
            &[(4096, 0.6), (65536, 0.3), (262144, 0.1)]
        ));
        // fio reads a 0 percent as blank; a blank left with nothing is never drawn.
        assert_eq!(s("4k/0:64k/50"), BsSplit(vec![(4096, 0.5), (65536, 0.5)]));
        assert_eq!(
            s("4k/60:64k/40:8k/"),
            BsSplit(vec![(4096, 0.6), (65536, 0.4)])
        );
        // The same size twice adds up; fio's units are binary, with or without B.
        assert_eq!(
            s("4k/20:4KB/30:8KiB/50"),
            BsSplit(vec![(4096, 0.5), (8192, 0.5)])
        );
        assert_eq!(s("1m/100"), BsSplit(vec![(1 << 20, 1.0)]));
        assert_eq!(
            s("512/25:1536/75"),
            BsSplit(vec![(512, 0.25), (1536, 0.75)])
        );
        for (text, says) in [
            ("4k/50:64k/30", "sum to 80, not 100"),
            ("4k/50:64k/60:1m/", "sum to 110, not 100"),
            ("4k/50::64k/50", "empty entry"),
            (
                "6k/50:4k/50",
                "6144 is not a multiple of the smallest size drawn, 4096",
            ),
            ("1000/100", "1000 is not a positive multiple of 512"),
            ("4k/abc", "`abc` in `4k/abc` is not a percentage"),
            ("4k/-5:8k/", "is not a percentage"),
            ("4x/100", "`4x` is not a size"),
            ("", "empty entry"),
        ] {
            let e = parse_bssplit(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn bssplit_sizes_follow_the_split() {
        // 100,000 requests over 4 GiB: a 256 KiB request fails to fit only at offsets in the
        // last 252 KiB (6e-5 of them), far below the 4 standard errors allowed.
        let n = 100_000;
        // Without the random map, which would cut large requests short at touched blocks.
        let w = workload(
            json!({"bssplit": "4k/50:64k/30:256k/20", "norandommap": true}),
            n,
            4 * GIB,
        );
        let reqs = run(&w, 3);
        for (size, p) in [(4096, 0.5), (65536, 0.3), (262144, 0.2)] {
            let c = reqs.iter().filter(|r| r.len_bytes == size).count();
            assert!(within_4se(c, n as usize, p), "{size}: {c}");
        }
        // Offsets: multiples of the smallest size (fio's blockalign default), inside the
        // footprint, spread over all of it.
        assert!(reqs
            .iter()
            .all(|r| r.offset_bytes % 4096 == 0 && r.end_bytes() <= 4 * GIB && r.op == Op::Write));
        assert!(reqs.iter().any(|r| r.offset_bytes % 65536 != 0));
        assert!(reqs.iter().any(|r| r.offset_bytes > 4 * GIB - GIB / 8));
        // blockalign = 256k: every offset a multiple of it.
        let w = workload(
            json!({"bssplit": "4k/50:64k/30:256k/20", "blockalign": "256k"}),
            10_000,
            4 * GIB,
        );
        assert!(run(&w, 3).iter().all(|r| r.offset_bytes % 262144 == 0));
    }

    #[test]
    fn sizes_that_do_not_fit_are_redrawn() {
        // A 12 KiB region, 4k/50:8k/50: blockalign 4 KiB, three offsets (0, 4k, 8k) equally
        // likely; at 8k only 4 KiB fits, so it always gets 4 KiB: P(8 KiB) = 2/3 · 1/2 = 1/3.
        let n = 60_000;
        let w = workload(
            json!({"bssplit": "4k/50:8k/50", "norandommap": true}),
            n,
            12288,
        );
        let reqs = run(&w, 5);
        assert!(reqs.iter().all(|r| r.end_bytes() <= 12288));
        assert!(!reqs
            .iter()
            .any(|r| r.offset_bytes == 8192 && r.len_bytes == 8192));
        for off in [0, 4096, 8192] {
            let c = reqs.iter().filter(|r| r.offset_bytes == off).count();
            assert!(within_4se(c, n as usize, 1.0 / 3.0), "offset {off}: {c}");
        }
        let big = reqs.iter().filter(|r| r.len_bytes == 8192).count();
        assert!(within_4se(big, n as usize, 1.0 / 3.0), "8 KiB: {big}");
    }

    /// Three jobs that make size predict the region: 4 KiB random writes over the first
    /// 12.5% (60%), a 64k/256k mix over the rest (30%, Zipf), 128 KiB sequential writes over
    /// 1 MiB at 50% (the 10% left).
    fn three_jobs() -> Value {
        json!({"jobs": [
            {"rw": "randwrite", "bs": "4k", "size": "12.5%", "share": 0.6},
            {"rw": "randwrite", "bssplit": "64k/50:256k/50", "offset": "12.5%", "share": 0.3,
             "zipf_theta": 0.8},
            {"rw": "write", "bs": 131072, "offset": "50%", "size": "1m"},
        ]})
    }

    #[test]
    fn jobs_shares_regions_alignment() {
        let n = 100_000;
        let reqs = run(&workload(three_jobs(), n, 4 * GIB), 9);
        // Every request is identified by its size.
        let job = |r: &Request| match r.len_bytes {
            4096 => 0,
            65536 | 262144 => 1,
            131072 => 2,
            l => panic!("size {l}"),
        };
        let regions = [
            (0, GIB / 2),
            (GIB / 2, 4 * GIB),
            (2 * GIB, 2 * GIB + (1 << 20)),
        ];
        let aligns = [4096, 65536, 131072];
        let mut counts = [0; 3];
        for r in &reqs {
            let j = job(r);
            counts[j] += 1;
            let (start, end) = regions[j];
            assert!(
                r.offset_bytes >= start && r.end_bytes() <= end,
                "job {j}: {r:?}"
            );
            assert_eq!((r.offset_bytes - start) % aligns[j], 0, "job {j}: {r:?}");
            assert_eq!(r.offset_bytes % aligns[j], 0, "job {j}: {r:?}");
            assert_eq!((r.op, r.dev), (Op::Write, 0));
        }
        for (j, p) in [0.6, 0.3, 0.1].into_iter().enumerate() {
            assert!(
                within_4se(counts[j], n as usize, p),
                "job {j}: {}",
                counts[j]
            );
        }
        // Job 1 draws its sizes from its own split.
        let big = reqs.iter().filter(|r| r.len_bytes == 262144).count();
        assert!(within_4se(big, counts[1], 0.5), "{big} of {}", counts[1]);
        // The sequential job: its own cursor from the region's start, 128 KiB at a time,
        // wrapping after 8 requests; the other jobs' requests in between do not move it.
        let seq: Vec<u64> = reqs
            .iter()
            .filter(|r| job(r) == 2)
            .map(|r| r.offset_bytes)
            .collect();
        for (k, off) in seq.iter().enumerate() {
            assert_eq!(*off, 2 * GIB + (k as u64 % 8) * 131072, "request {k}");
        }
        // Same seed, same requests; another seed, others.
        assert_eq!(reqs, run(&workload(three_jobs(), n, 4 * GIB), 9));
        assert_ne!(reqs, run(&workload(three_jobs(), n, 4 * GIB), 10));
    }

    #[test]
    fn sequential_job_with_a_split() {
        // A write job over [8k, 48k) with 4k/50:12k/50: the cursor advances by each size, a
        // 12 KiB request is drawn only where it fits, and the cursor wraps to 8k when not even
        // 4 KiB fits.
        let w = workload(
            json!({"jobs": [{"rw": "write", "bssplit": "4k/50:12k/50", "offset": 8192,
                             "size": "40k"}]}),
            20_000,
            GIB,
        );
        let reqs = run(&w, 2);
        let (start, end) = (8192, 49152);
        assert_eq!(reqs[0].offset_bytes, start);
        for p in reqs.windows(2) {
            let (a, b) = (&p[0], &p[1]);
            assert!(b.offset_bytes >= start && b.end_bytes() <= end, "{b:?}");
            if a.end_bytes() + 4096 <= end {
                assert_eq!(b.offset_bytes, a.end_bytes());
            } else {
                assert_eq!(b.offset_bytes, start);
            }
        }
        // Where 12 KiB fits, the split holds.
        let (mut fits, mut big) = (0, 0);
        for r in &reqs {
            if r.offset_bytes + 12288 <= end {
                fits += 1;
                big += (r.len_bytes == 12288) as usize;
            }
        }
        assert!(within_4se(big, fits, 0.5), "{big} of {fits}");
    }

    #[test]
    fn job_defaults_and_directions() {
        // No share: equal parts; no size: the rest of the footprint; no bs: request_bytes;
        // randread reads, randrw reads with its rwmixread, zipf_theta per job.
        let mut w = workload(
            json!({"jobs": [
                {"rw": "randread", "offset": "50%"},
                {"rw": "randrw", "size": "50%", "zipf_theta": 1.0, "rwmixread": 25},
            ]}),
            40_000,
            256 << 20,
        );
        w.request_bytes = Size(8192);
        let reqs = run(&w, 4);
        let half = 128 << 20;
        let (hi, lo): (Vec<&Request>, Vec<&Request>) =
            reqs.iter().partition(|r| r.offset_bytes >= half);
        assert!(reqs
            .iter()
            .all(|r| r.len_bytes == 8192 && r.end_bytes() <= 256 << 20));
        assert!(lo.iter().all(|r| r.end_bytes() <= half));
        assert!(within_4se(hi.len(), reqs.len(), 0.5), "{}", hi.len());
        assert!(hi.iter().all(|r| r.op == Op::Read));
        let reads = lo.iter().filter(|r| r.op == Op::Read).count();
        assert!(within_4se(reads, lo.len(), 0.25), "{reads} of {}", lo.len());
        // Zipf(1.0) over the 16,384 blocks of the lower half: the top block takes
        // 1/H(16384, 1) = 1/10.28 of them.
        let mut c = rustc_hash::FxHashMap::<u64, usize>::default();
        for r in &lo {
            *c.entry(r.offset_bytes).or_default() += 1;
        }
        let top = *c.values().max().unwrap();
        assert!(
            within_4se(top, lo.len(), 1.0 / 10.28),
            "{top} of {}",
            lo.len()
        );
    }

    #[test]
    fn errors_name_the_field() {
        let none = |_: &mut WorkloadConfig| {};
        for (fio, field, says) in [
            (
                json!({"bssplit": "4k/50:64k/30"}),
                "workload.fio.bssplit",
                "`4k/50:64k/30`: the percentages sum to 80",
            ),
            (
                json!({"bssplit": "4k/50:64k/50", "jobs": [{}]}),
                "workload.fio.bssplit",
                "each job has its own",
            ),
            (
                json!({"rw": "write", "jobs": [{}]}),
                "workload.fio.rw",
                "each job has its own rw",
            ),
            (
                json!({"blockalign": "1000"}),
                "workload.fio.blockalign",
                "not a multiple of 512",
            ),
            (
                json!({"jobs": [{"rw": "trim"}]}),
                "workload.fio.jobs[0].rw",
                "unknown value `trim`",
            ),
            (
                json!({"jobs": [{"bs": "4k", "bssplit": "4k/100"}]}),
                "workload.fio.jobs[0].bssplit",
                "together with bs",
            ),
            (
                json!({"jobs": [{"bs": "25%"}]}),
                "workload.fio.jobs[0].bs",
                "percentage is not allowed",
            ),
            (
                json!({"jobs": [{}, {"bssplit": "4k/10"}]}),
                "workload.fio.jobs[1].bssplit",
                "sum to 10",
            ),
            (
                json!({"jobs": [{"share": 0.5}, {"share": 0.4}]}),
                "workload.fio.jobs",
                "(0.5, 0.4) sum to 0.9",
            ),
            (
                json!({"jobs": [{"share": 0.7}, {"share": 0.4}, {}]}),
                "workload.fio.jobs",
                "(0.7, 0.4, unset) sum to 1.1",
            ),
            (
                json!({"jobs": [{"share": 1.5}]}),
                "workload.fio.jobs[0].share",
                "not in [0, 1]",
            ),
            (
                json!({"jobs": [{"zipf_theta": -1.0}]}),
                "workload.fio.jobs[0].zipf_theta",
                "must be ≥ 0",
            ),
            (
                json!({"jobs": [{}, {"offset": "4g"}]}),
                "workload.fio.jobs[1].offset",
                "not inside workload.footprint_bytes",
            ),
            (
                json!({"jobs": [{}, {"offset": "120%"}]}),
                "workload.fio.jobs[1].offset",
                "not a percentage",
            ),
            (
                json!({"jobs": [{"offset": "3g", "size": "2g"}]}),
                "workload.fio.jobs[0].size",
                "ends beyond workload.footprint_bytes",
            ),
            (
                json!({"jobs": [{"offset": "75%", "size": "50%"}]}),
                "workload.fio.jobs[0].size",
                "ends beyond",
            ),
            (
                json!({"jobs": [{"size": 1000}]}),
                "workload.fio.jobs[0].size",
                "not a positive multiple of 512",
            ),
            (
                json!({"jobs": [{"bs": "64k", "size": "32k"}]}),
                "workload.fio.jobs[0].size",
                "smaller than the job's largest block (65536)",
            ),
            (
                json!({"jobs": [{"colour": "red"}]}),
                "workload.fio.jobs[0]",
                "unknown",
            ),
        ] {
            let e = config_error(fio.clone(), none);
            assert!(e.contains(field) && e.contains(says), "{fio}: {e}");
        }
        let e = config_error(json!({"bssplit": "4k/50:64k/50"}), |w| {
            w.request_bytes = Size(8192)
        });
        assert!(
            e.contains("workload.request_bytes") && e.contains("its default (4096)"),
            "{e}"
        );
        let e = config_error(json!({"jobs": [{}]}), |w| w.streams = 2);
        assert!(e.contains("workload.streams"), "{e}");
        let e = config_error(json!({"jobs": [{}]}), |w| w.read_fraction = 0.3);
        assert!(
            e.contains("workload.read_fraction") && e.contains("randrw"),
            "{e}"
        );
        let e = config_error(json!({"rw": "randwrite"}), |w| w.zipf_theta = 0.8);
        assert!(
            e.contains("workload.zipf_theta") && e.contains("random_distribution = \"zipf:0.8\""),
            "{e}"
        );
        let e = config_error(json!({"rw": "randwrite"}), |w| w.zipf_theta = 0.0);
        assert!(e.contains("random_distribution = \"random\""), "{e}");
        let e = config_error(json!({"blockalign": "8g"}), none);
        assert!(
            e.contains("workload.fio.blockalign") && e.contains("no offset"),
            "{e}"
        );
        let e = config_error(
            json!({"jobs": [{"size": "64k", "blockalign": "128k"}]}),
            none,
        );
        assert!(e.contains("workload.fio.jobs[0].blockalign"), "{e}");
        let e = config_error(json!({"bssplit": "4k/50:8g/50"}), none);
        assert!(
            e.contains("workload.fio.bssplit") && e.contains("exceeds"),
            "{e}"
        );
        // A bssplit with request_bytes at its default is fine, and so are jobs that leave
        // request_bytes as every job's bs.
        let mut cfg = Config {
            workload: workload(
                json!({"bssplit": "4k/50:64k/50", "blockalign": "0"}),
                1000,
                GIB,
            ),
            ..Default::default()
        };
        cfg.validate().unwrap();
        cfg.workload = workload(three_jobs(), 1000, 4 * GIB);
        cfg.workload.request_bytes = Size(8192);
        cfg.validate().unwrap();
    }

    #[test]
    fn resolved_jobs_round_trip() {
        // The resolved configuration (every default written out) validates again and gives
        // the same requests: the sizes keep their text, absent keys stay absent.
        let mut cfg = Config {
            workload: workload(three_jobs(), 5000, 4 * GIB),
            ..Default::default()
        };
        let before = run(&cfg.workload, 1);
        crate::engine::fill_params(&mut cfg).unwrap();
        let jobs = &cfg.workload.tables["fio"]["jobs"];
        assert_eq!(jobs[0]["size"], json!("12.5%"));
        assert_eq!(jobs[2]["bs"], json!(131072));
        assert!(jobs[2].get("share").is_none());
        cfg.validate().unwrap();
        assert_eq!(run(&cfg.workload, 1), before);
    }

    #[test]
    fn toml_jobs_parse() {
        let text = r#"
[workload]
kind = "fio"
footprint_bytes = "4GiB"
requests = 1000

[[workload.fio.jobs]]
rw = "randwrite"
bs = "4k"
size = "10%"
share = 0.8

[[workload.fio.jobs]]
rw = "randwrite"
bssplit = "128k/50:256k/50"
offset = "10%"
"#;
        let cfg = crate::engine::parse_toml_file(text, "jobs.toml").unwrap();
        cfg.validate().unwrap();
        let reqs = run(&cfg.workload, 1);
        let cut = (4 * GIB / 10).div_ceil(131072) * 131072;
        // The second job's region starts at 10% rounded up to its smallest block, 128 KiB.
        assert!(reqs.iter().all(|r| if r.len_bytes == 4096 {
            r.end_bytes() <= 4 * GIB / 10
        } else {
            r.offset_bytes >= cut && r.offset_bytes % 131072 == 0
        }));
        assert!(reqs.iter().any(|r| r.len_bytes == 262144));
    }

    /// Lifetime of the data each write request leaves, in requests, for 4 KiB and for larger
    /// requests: the time until each of its pages is written again, estimated as exposure /
    /// rewrites (the exponential's maximum likelihood, so pages still alive at the end count
    /// their time without a rewrite rather than being dropped).
    fn lifetimes(reqs: &[Request], pages: usize) -> [f64; 2] {
        let mut last: Vec<(u32, u8)> = vec![(u32::MAX, 0); pages];
        let (mut exposure, mut rewrites) = ([0.0; 2], [0.0; 2]);
        for (t, r) in reqs.iter().enumerate() {
            let class = (r.len_bytes > 4096) as u8;
            for p in r.offset_bytes / 4096..r.end_bytes() / 4096 {
                let (t0, c) = last[p as usize];
                if t0 != u32::MAX {
                    exposure[c as usize] += (t as u32 - t0) as f64;
                    rewrites[c as usize] += 1.0;
                }
                last[p as usize] = (t as u32, class);
            }
        }
        for &(t0, c) in last.iter().filter(|l| l.0 != u32::MAX) {
            exposure[c as usize] += (reqs.len() as u32 - t0) as f64;
        }
        [exposure[0] / rewrites[0], exposure[1] / rewrites[1]]
    }

    /// The example of docs/workloads.md.
    const SIZE_PREDICTS_LIFETIME: &str = r#"
[workload]
kind = "fio"
footprint_bytes = "4GiB"
requests = 3000000

[workload.fio]
norandommap = true

[[workload.fio.jobs]]
rw = "randwrite"
bs = "4k"
size = "5%"
share = 0.95

[[workload.fio.jobs]]
rw = "randwrite"
bs = "256k"
offset = "5%"
share = 0.05
"#;

    #[test]
    fn size_predicts_lifetime_or_not() {
        let pages = (4 * GIB / 4096) as usize;
        let cfg = crate::engine::parse_toml_file(SIZE_PREDICTS_LIFETIME, "ex.toml").unwrap();
        cfg.validate().unwrap();
        let [small, large] = lifetimes(&run(&cfg.workload, 1), pages);
        // 5% of 4 GiB, rounded down to 4 KiB: 52,428 pages, one written by 95% of the
        // requests: each lives 52,428 / 0.95 = 55,187 requests. The rest starts at 5% rounded
        // up to 256 KiB (block 820) and holds 15,564 blocks of 256 KiB, each written by 5% of
        // the requests: 15,564 / 0.05 = 311,280 requests.
        assert!((small / 55_187.0 - 1.0).abs() < 0.02, "4 KiB: {small}");
        assert!((large / 311_280.0 - 1.0).abs() < 0.02, "256 KiB: {large}");
        // The same mix of sizes and requests as one bssplit over the whole device: a page is
        // written by (0.95 + 0.05 · 64) / 1,048,576 of the requests whatever their size, so
        // both sizes' data lives 1,048,576 / 4.15 = 252,669 requests.
        let mut w = cfg.workload.clone();
        w.tables.insert(
            "fio".into(),
            json!({"bssplit": "4k/95:256k/5", "norandommap": true}),
        );
        let [small, large] = lifetimes(&run(&w, 1), pages);
        assert!((small / 252_669.0 - 1.0).abs() < 0.02, "4 KiB: {small}");
        assert!((large / 252_669.0 - 1.0).abs() < 0.02, "256 KiB: {large}");
    }

    /// FNV-1a over every field of every request.
    fn digest(reqs: &[Request]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for r in reqs {
            for v in [
                r.time_us.to_bits(),
                r.op as u64,
                r.offset_bytes,
                r.len_bytes,
                r.dev as u64,
            ] {
                for b in v.to_le_bytes() {
                    h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
        h
    }

    #[test]
    fn uniform_zipf_sequential_keep_their_requests() {
        // The digests of these streams as drawn before the fio workload followed fio's
        // defaults (random map, uniform offsets, rwmix): the other kinds share the job engine
        // and must not change by a bit.
        /// Generator, change to the workload, digest.
        type Case = (&'static str, fn(&mut WorkloadConfig), u64);
        let cases: [Case; 5] = [
            ("uniform", |w| w.read_fraction = 0.3, 0x42a4_5105_c6e6_3727),
            ("zipf", |w| w.read_fraction = 0.3, 0x206d_d66a_70f6_60d6),
            ("zipf", |w| w.zipf_theta = 1.2, 0x0735_80f0_3830_aeb2),
            ("sequential", |w| w.streams = 3, 0x5f4c_95a6_103e_b8ad),
            (
                "sequential",
                |w| w.read_fraction = 0.5,
                0x1326_2d0d_cbae_87ef,
            ),
        ];
        let (mut got, mut want) = (vec![], vec![]);
        for (kind, f, digest_before) in cases {
            let mut w = WorkloadConfig {
                kind: kind.into(),
                requests: 20_000,
                footprint_bytes: Size(64 << 20),
                ..Default::default()
            };
            f(&mut w);
            got.push(format!("{kind}: {:#x}", digest(&run(&w, 11))));
            want.push(format!("{kind}: {digest_before:#x}"));
        }
        assert_eq!(got, want);
    }

    #[test]
    fn norandommap_gives_the_former_draw() {
        // Digests of the fio workload as it drew before it followed fio's defaults (offsets
        // with replacement, Zipf from workload.zipf_theta = 0.9, reads from read_fraction):
        // the same draws now come from norandommap = true, random_distribution and rwmixread.
        let toml = |fio: &str| {
            format!(
                "[workload]\nkind = \"fio\"\nrequests = 20000\nfootprint_bytes = \"64MiB\"\n\
                 seed = 11\n[workload.fio]\n{fio}\n"
            )
        };
        let jobs = "norandommap = true\n[[workload.fio.jobs]]\nrw = \"randwrite\"\nbs = \"4k\"\n\
                    size = \"25%\"\nshare = 0.5\n[[workload.fio.jobs]]\nrw = \"randwrite\"\n\
                    bssplit = \"8k/50:16k/50\"\noffset = \"25%\"\nzipf_theta = 0.8\n";
        for (fio, before) in [
            (
                "random_distribution = \"zipf:0.9\"",
                0xa8c8_3818_b19a_fe33_u64,
            ),
            (
                "rw = \"randrw\"\nrwmixread = 30\nnorandommap = true",
                0x42a4_5105_c6e6_3727,
            ),
            (
                "bssplit = \"4k/50:64k/50\"\nnorandommap = true",
                0x7a8f_15f9_92e3_afe7,
            ),
            (
                "rw = \"randwrite-then-randread\"\nwrite_requests = 10000\nnorandommap = true",
                0x4527_6c65_9662_45d9,
            ),
            (jobs, 0x0b63_5267_52ba_d911),
            ("rw = \"write\"", 0xc60c_de44_6eb3_00dd),
        ] {
            let mut cfg = crate::engine::parse_toml_file(&toml(fio), "t.toml").unwrap();
            if fio.contains("\"write\"") {
                cfg.workload.streams = 2;
            }
            cfg.validate().unwrap();
            let seed = cfg.workload.seed.unwrap();
            assert_eq!(digest(&run(&cfg.workload, seed)), before, "{fio}");
        }
    }

    /// The blocks of `align` bytes each request covers.
    fn blocks_of(r: &Request, start: u64, align: u64) -> std::ops::Range<u64> {
        (r.offset_bytes - start) / align..(r.end_bytes() - start).div_ceil(align)
    }

    #[test]
    fn random_map_touches_every_block_once_per_pass() {
        // 1,000 blocks of 4 KiB, three passes: each pass of 1,000 requests writes every block
        // exactly once, in an order of its own; another seed, another order.
        let blocks = 1000;
        let w = workload(json!({}), 3 * blocks, blocks * 4096);
        let reqs = run(&w, 3);
        let orders: Vec<Vec<u64>> = reqs
            .chunks(blocks as usize)
            .map(|pass| pass.iter().map(|r| r.offset_bytes / 4096).collect())
            .collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..blocks).collect::<Vec<_>>());
        }
        assert_ne!(orders[0], orders[1]);
        assert_ne!(orders[1], orders[2]);
        assert_eq!(reqs, run(&w, 3));
        assert_ne!(reqs, run(&w, 4));
        // norandommap: drawn with replacement, 1000 draws over 1000 blocks leave about
        // 1000 · (1 − 1/1000)^1000 = 368 blocks untouched.
        let w = workload(json!({"norandommap": true}), blocks, blocks * 4096);
        let mut seen = vec![false; blocks as usize];
        for r in run(&w, 3) {
            seen[(r.offset_bytes / 4096) as usize] = true;
        }
        let missed = seen.iter().filter(|s| !**s).count();
        assert!((300..440).contains(&missed), "{missed}");
    }

    #[test]
    fn random_map_with_a_split_never_overlaps_within_a_pass() {
        // 4k/50:16k/50 over 256 blocks: a request never covers a block its pass has touched
        // (a 16 KiB request stops short at one), and a pass ends when all 256 are touched.
        let blocks = 256;
        let w = workload(json!({"bssplit": "4k/50:16k/50"}), 5000, blocks * 4096);
        let mut touched = vec![false; blocks as usize];
        let (mut left, mut passes, mut short) = (blocks, 0, 0);
        for r in run(&w, 8) {
            if left == 0 {
                touched.fill(false);
                left = blocks;
                passes += 1;
            }
            assert!(matches!(r.len_bytes, 4096 | 8192 | 12288 | 16384), "{r:?}");
            short += matches!(r.len_bytes, 8192 | 12288) as usize;
            for b in blocks_of(&r, 0, 4096) {
                assert!(
                    !touched[b as usize],
                    "block {b} twice in pass {passes}: {r:?}"
                );
                touched[b as usize] = true;
                left -= 1;
            }
        }
        assert!(passes > 10, "{passes}");
        assert!(short > 0);
    }

    #[test]
    fn reads_after_writes_never_miss_written_pages() {
        // The ptsd set-up in small: random writes of twice the footprint, then random reads
        // of it. With fio's random map every page is written (twice) and read once; drawn
        // with replacement, a page is unwritten with probability (1 − 1/n)^2n ≈ e^−2 = 13.5%.
        let pages = 4096;
        let fio = json!({"rw": "randwrite-then-randread", "write_requests": 2 * pages});
        let w = workload(fio, 3 * pages, pages * 4096);
        let unwritten_reads = |reqs: &[Request]| {
            let mut written = vec![0u32; pages as usize];
            let mut reads = vec![0u32; pages as usize];
            let mut miss = 0;
            for r in reqs {
                let p = (r.offset_bytes / 4096) as usize;
                match r.op {
                    Op::Write => written[p] += 1,
                    _ => {
                        reads[p] += 1;
                        miss += (written[p] == 0) as u64;
                    }
                }
            }
            (miss, written, reads)
        };
        let (miss, written, reads) = unwritten_reads(&run(&w, 5));
        assert_eq!(miss, 0);
        assert!(written.iter().all(|&n| n == 2));
        assert!(reads.iter().all(|&n| n == 1));
        let mut w = w.clone();
        w.tables.get_mut("fio").unwrap()["norandommap"] = json!(true);
        let (miss, _, _) = unwritten_reads(&run(&w, 5));
        let p = (1.0 - 1.0 / pages as f64).powi(2 * pages as i32);
        assert!(within_4se(miss as usize, pages as usize, p), "{miss}");
    }

    #[test]
    fn rw_values_and_rwmix() {
        let n = 20_000;
        let ops = |fio: Value| {
            let reqs = run(&workload(fio, n, 64 << 20), 2);
            let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
            (reqs, reads)
        };
        // read and randread read only; write and randwrite write only.
        assert_eq!(ops(json!({"rw": "read"})).1, n as usize);
        assert_eq!(ops(json!({"rw": "randread"})).1, n as usize);
        assert_eq!(ops(json!({"rw": "randwrite"})).1, 0);
        // Mixed: fio's 50/50 by default; rwmixread or rwmixwrite alone set the mix.
        for (fio, p) in [
            (json!({"rw": "randrw"}), 0.5),
            (json!({"rw": "randrw", "rwmixread": 30}), 0.3),
            (json!({"rw": "randrw", "rwmixwrite": 30}), 0.7),
            (
                json!({"rw": "randrw", "rwmixread": 80, "rwmixwrite": 20}),
                0.8,
            ),
            (json!({"rw": "readwrite", "rwmixread": 0}), 0.0),
            (json!({"rw": "rw", "rwmixread": 100}), 1.0),
        ] {
            let (_, reads) = ops(fio.clone());
            assert!(within_4se(reads, n as usize, p), "{fio}: {reads}");
        }
        // rw = rw: reads and writes each follow their own cursor from the start (fio's
        // position per direction), so each direction alone is sequential.
        let (reqs, _) = ops(json!({"rw": "rw"}));
        for op in [Op::Read, Op::Write] {
            let offs: Vec<u64> = reqs
                .iter()
                .filter(|r| r.op == op)
                .map(|r| r.offset_bytes)
                .collect();
            assert_eq!(offs[0], 0);
            assert!(offs.windows(2).all(|w| w[1] == w[0] + 4096), "{op:?}");
        }
        // randrw with the random map: one map for both directions, as fio's file has.
        let (reqs, _) = ops(json!({"rw": "randrw"}));
        let pages = (64 << 20) / 4096;
        let mut first: Vec<u64> = reqs[..pages].iter().map(|r| r.offset_bytes).collect();
        first.sort_unstable();
        first.dedup();
        assert_eq!(first.len(), pages);
    }

    #[test]
    fn fio_errors_name_the_field() {
        let none = |_: &mut WorkloadConfig| {};
        let e = config_error(json!({"rw": "randrw"}), |w| w.read_fraction = 0.3);
        assert!(
            e.contains("workload.read_fraction") && e.contains("rwmixread = 30"),
            "{e}"
        );
        let e = config_error(json!({"rwmixread": 70, "rwmixwrite": 40}), none);
        assert!(
            e.contains("workload.fio.rwmixread") && e.contains("sum"),
            "{e}"
        );
        let e = config_error(json!({"rwmixread": 101}), none);
        assert!(e.contains("workload.fio.rwmixread"), "{e}");
        for d in ["pareto:1.2", "zipf:0", "zipf", "zipf:1.2:0.25"] {
            let e = config_error(json!({"random_distribution": d}), none);
            assert!(e.contains("workload.fio.random_distribution"), "{d}: {e}");
        }
        let e = config_error(
            json!({"jobs": [{"zipf_theta": 0.5, "random_distribution": "random"}]}),
            none,
        );
        assert!(e.contains("workload.fio.jobs[0].zipf_theta"), "{e}");
        let e = config_error(json!({"jobs": [{"rw": "randrw", "rwmixread": 200}]}), none);
        assert!(e.contains("workload.fio.jobs[0].rwmixread"), "{e}");
    }

    #[test]
    fn random_map_search_wraps() {
        // 130 blocks (two full words and a tail of 2): the next free block after a touched
        // one, wrapping past the end; full words skipped.
        let mut m = RandomMap::new(130);
        assert_eq!(m.take(0, 128), 128);
        assert_eq!(m.next_free(5), 128);
        assert_eq!(m.take(129, 5), 1); // the map's end stops it
        assert_eq!(m.next_free(129), 128);
        assert_eq!(m.take(128, 1), 1);
        assert_eq!(m.touched, 130);
        m.new_pass();
        assert_eq!(m.take(3, 2), 2);
        assert_eq!(m.take(0, 10), 3); // stops at block 3
        assert_eq!(m.next_free(4), 5);
        assert_eq!(m.next_free(2), 5);
    }
}
