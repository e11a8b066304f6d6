//! Metric assembly: the counters of the measured window (host, NAND, FTL) turned into metrics,
//! with the buffer's gauges and the buffer layer's flushed-group statistics, into a [`RunResult`].

use super::replay::Replayed;
use super::sim::{Sim, Snapshot};
use super::timed::FlowStats;
use super::RunResult;
use crate::config::{Config, NandConfig};
use crate::metrics::{self, Measured};
use crate::timed::latency::Latencies;
use std::collections::BTreeMap;

impl Sim {
    /// The metrics of everything since `base` (the counters' difference; gauges as they are
    /// now), with the buffer's policy gauges. Used for the end-of-run metrics and every sample.
    pub(super) fn metrics_since(
        &mut self,
        base: &Snapshot,
        timing: &NandConfig,
    ) -> BTreeMap<String, f64> {
        let end = self.snapshot();
        let erases_per_block: Vec<u32> = end
            .erases
            .iter()
            .zip(&base.erases)
            .map(|(a, b)| a - b)
            .collect();
        let ftl_counters: Vec<(&'static str, u64)> = end
            .ftl
            .iter()
            .map(|(k, v)| {
                (
                    *k,
                    v - base
                        .ftl
                        .iter()
                        .find(|(bk, _)| bk == k)
                        .map_or(0, |(_, bv)| *bv),
                )
            })
            .collect();
        let window = self.be.ftl.window_metrics(&ftl_counters);
        let mut m = metrics::finish(Measured {
            host: end.host.minus(&base.host),
            nand: end.nand.minus(&base.nand),
            erases_per_block,
            ftl_counters,
            ftl_gauges: self.be.ftl.gauges(),
            timing,
            page_bytes: self.geo.page_bytes,
        });
        for (k, v) in window {
            m.insert(k.to_string(), v);
        }
        if let Some(&media) = m.get("fdp.mbmw_bytes") {
            // FDP's HBMW: what the host wrote (its pages, as `waf` counts them), whatever the
            // write buffer absorbed before the media.
            let host = m["host.write_pages"] * self.geo.page_bytes as f64;
            m.insert("fdp.hbmw_bytes".into(), host);
            let waf = if host > 0.0 { media / host } else { f64::NAN };
            m.insert("fdp.waf".into(), waf);
        }
        if self.be.readahead.on() {
            let ra = crate::nand::Cause::ReadAhead as usize;
            let reads = end.nand.reads[ra] - base.nand.reads[ra];
            m.extend(self.be.readahead.metrics(&base.readahead, reads));
        }
        for (k, v) in self.buffer.gauges(&*self.be.ftl) {
            m.insert(k.to_string(), v);
        }
        m
    }

    /// The FTL's distributions over the window since `base` (counts subtracted per value).
    fn ftl_histograms_since(&self, base: &Snapshot) -> BTreeMap<String, Vec<(u64, u64)>> {
        let mut out = BTreeMap::new();
        for (k, end) in self.be.ftl.histograms() {
            let mut h: BTreeMap<u64, u64> = end.into_iter().collect();
            if let Some((_, b)) = base.ftl_histograms.iter().find(|(bk, _)| *bk == k) {
                for &(v, c) in b {
                    if let Some(n) = h.get_mut(&v) {
                        *n -= c;
                    }
                }
            }
            out.insert(
                k.to_string(),
                h.into_iter().filter(|&(_, c)| c > 0).collect(),
            );
        }
        out
    }
}

/// The end-of-run result: metrics over the measured window, run and device facts, the buffer
/// layer's statistics, and the time series.
pub(super) fn assemble(
    sim: &mut Sim,
    run: Replayed,
    resolved: Config,
    buffer_pages: u64,
    warnings: Vec<String>,
) -> RunResult {
    let timing = &resolved.nand;
    let mut m = sim.metrics_since(&run.base, timing);
    m.insert("run.requests".into(), run.done as f64);
    m.insert(
        "run.measured_requests".into(),
        (run.done - run.warmup) as f64,
    );
    m.insert("trace.skipped_records".into(), run.submitted.skipped as f64);
    m.insert("device.logical_pages".into(), sim.geo.logical_pages as f64);
    m.insert(
        "device.physical_blocks".into(),
        sim.geo.physical_blocks as f64,
    );
    m.insert("buffer.capacity_pages".into(), buffer_pages as f64);
    // Flushed-group statistics belong to the buffer layer; the flush path fed them.
    let groups = &sim.be.groups;
    m.extend(groups.metrics());
    let mut histograms = groups.histograms();
    histograms.extend(sim.ftl_histograms_since(&run.base));
    let mut warnings = warnings;
    warnings.extend(unwritten_reads_note(&m, &resolved));
    if let Some(c) = &run.submitted.clock {
        m.extend(c.metrics());
        histograms.extend(c.histograms());
        warnings.extend(c.warnings());
    }
    let flows = &run.submitted.flows;
    if !flows.is_empty() {
        let (fm, fh) = flow_metrics(flows, resolved.host_model());
        m.extend(fm);
        histograms.extend(fh);
    }
    RunResult {
        config: resolved,
        metrics: m,
        histograms,
        series: run.series.columns,
        warnings,
    }
}

/// More than 1% of the measured page reads found no data (never written, or trimmed): they cost
/// no NAND read and, in timed mode, no time, so read counts and latencies look better than a
/// device holding the data would give.
fn unwritten_reads_note(m: &BTreeMap<String, f64>, cfg: &Config) -> Option<String> {
    let reads = m.get("host.read_pages").copied().unwrap_or(0.0);
    let unwritten = m.get("host.unwritten_read_pages").copied().unwrap_or(0.0);
    if reads == 0.0 || unwritten * 100.0 <= reads {
        return None;
    }
    let cost = if cfg.run.mode == "timed" {
        "no flash read and no time (read latencies are understated)"
    } else {
        "no flash read"
    };
    let fix = if cfg.run.fills() {
        "the device was filled first: these pages were trimmed"
    } else {
        "set run.precondition = \"fill\" to start from a device holding data"
    };
    Some(format!(
        "{} of {} page reads ({:.1}%) found no data (host.unwritten_read_pages: never written or trimmed) \
         and cost {cost}; {fix}",
        crate::units::grouped(unwritten as u64),
        crate::units::grouped(reads as u64),
        100.0 * unwritten / reads,
    ))
}

/// Latency histograms by name: (bucket, count) pairs.
type Histograms = BTreeMap<String, Vec<(u64, u64)>>;

/// Per-flow metrics (`flow.<i>.*`, docs/metrics.md) and latency histograms; `host`: the host
/// model is on (its threads' wake-ups).
fn flow_metrics(stats: &[FlowStats], host: bool) -> (BTreeMap<String, f64>, Histograms) {
    let mut m = BTreeMap::new();
    let mut h = BTreeMap::new();
    let programs: u64 = stats.iter().map(|s| s.programs).sum();
    for (i, s) in stats.iter().enumerate() {
        let p = format!("flow.{i}");
        let span_s = s.first_us.map_or(0.0, |f| (s.last_us - f) / 1e6);
        let per_s = |x: f64| if span_s > 0.0 { x / span_s } else { f64::NAN };
        m.insert(format!("{p}.requests"), s.requests as f64);
        m.insert(format!("{p}.throughput.iops"), per_s(s.requests as f64));
        m.insert(
            format!("{p}.throughput.mib_s"),
            per_s(s.bytes as f64 / (1024.0 * 1024.0)),
        );
        m.insert(format!("{p}.nand.programs"), s.programs as f64);
        if host {
            m.insert(format!("{p}.host.wakes"), s.wakes as f64);
        }
        m.insert(
            format!("{p}.waf"),
            s.programs as f64 / s.written_pages as f64,
        );
        m.insert(
            format!("{p}.waf_share"),
            s.programs as f64 / programs as f64,
        );
        let all = Latencies::merged(&[&s.read, &s.write, &s.trim], s.all_sum_us, s.all_max_us);
        for (op, l) in [("read", &s.read), ("write", &s.write), ("all", &all)] {
            m.extend(l.metrics(&format!("{p}.latency.{op}")));
            if l.count() > 0 {
                h.insert(format!("{p}.latency.{op}_ns"), l.distribution_ns());
            }
        }
    }
    (m, h)
}
