//! Run metrics. The names are public interface (docs/metrics.md documents each one).
//! Counters are gathered during the run; `finish` turns them into a flat name → value map.

use crate::config::NandConfig;
use crate::nand::{nand_serial_us, NandCounters, CAUSES};
use std::collections::BTreeMap;

/// Host-side and buffer-side event counters kept by the engine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCounters {
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub write_sectors: u64,
    pub write_hit_pages: u64,
    pub write_hit_sectors: u64,
    pub read_hit_pages: u64,
    /// Host page reads that found no data (neither buffered nor mapped: never written, or trimmed).
    pub unwritten_read_pages: u64,
    /// Host page writes that found their page buffered clean (cached for a read): not write hits.
    pub clean_write_hit_pages: u64,
    /// Σ over write requests of the pages buffered once the request is buffered.
    pub occupancy_sum: u64,
    pub flushes: u64,
    pub flushed_pages: u64,
    pub padded_flushes: u64,
    /// Filler pages of padded flushes (offsets that hold no data; `buffer.padding_fill = "all"`).
    pub pad_filler_pages: u64,
    /// Pages the FTL received from flushes (buffered pages + padding pages).
    pub ftl_pages: u64,
}

impl HostCounters {
    pub fn minus(&self, b: &HostCounters) -> HostCounters {
        HostCounters {
            read_requests: self.read_requests - b.read_requests,
            write_requests: self.write_requests - b.write_requests,
            trim_requests: self.trim_requests - b.trim_requests,
            read_pages: self.read_pages - b.read_pages,
            write_pages: self.write_pages - b.write_pages,
            trim_pages: self.trim_pages - b.trim_pages,
            write_bytes: self.write_bytes - b.write_bytes,
            read_bytes: self.read_bytes - b.read_bytes,
            write_sectors: self.write_sectors - b.write_sectors,
            write_hit_pages: self.write_hit_pages - b.write_hit_pages,
            write_hit_sectors: self.write_hit_sectors - b.write_hit_sectors,
            read_hit_pages: self.read_hit_pages - b.read_hit_pages,
            unwritten_read_pages: self.unwritten_read_pages - b.unwritten_read_pages,
            clean_write_hit_pages: self.clean_write_hit_pages - b.clean_write_hit_pages,
            occupancy_sum: self.occupancy_sum - b.occupancy_sum,
            flushes: self.flushes - b.flushes,
            flushed_pages: self.flushed_pages - b.flushed_pages,
            padded_flushes: self.padded_flushes - b.padded_flushes,
            pad_filler_pages: self.pad_filler_pages - b.pad_filler_pages,
            ftl_pages: self.ftl_pages - b.ftl_pages,
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

/// Everything measured, after subtracting the warm-up snapshot.
pub struct Measured<'a> {
    pub host: HostCounters,
    pub nand: NandCounters,
    /// Erases per physical block during the measured window.
    pub erases_per_block: Vec<u32>,
    pub ftl_counters: Vec<(&'static str, u64)>,
    pub ftl_gauges: Vec<(&'static str, f64)>,
    pub timing: &'a NandConfig,
    pub page_bytes: u64,
}

pub fn finish(m: Measured) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        out.insert(k.to_string(), v);
    };
    let h = &m.host;
    put("host.read_requests", h.read_requests as f64);
    put("host.write_requests", h.write_requests as f64);
    put("host.trim_requests", h.trim_requests as f64);
    put("host.read_pages", h.read_pages as f64);
    put("host.write_pages", h.write_pages as f64);
    put("host.trim_pages", h.trim_pages as f64);
    put("host.read_bytes", h.read_bytes as f64);
    put("host.write_bytes", h.write_bytes as f64);
    put("host.unwritten_read_pages", h.unwritten_read_pages as f64);
    put("buffer.write_hit_pages", h.write_hit_pages as f64);
    put("buffer.read_hit_pages", h.read_hit_pages as f64);
    put(
        "buffer.clean_write_hit_pages",
        h.clean_write_hit_pages as f64,
    );
    for (k, part, whole) in [
        ("buffer.occupancy.mean", h.occupancy_sum, h.write_requests),
        ("buffer.page_hit_ratio", h.write_hit_pages, h.write_pages),
        (
            "buffer.sector_hit_ratio",
            h.write_hit_sectors,
            h.write_sectors,
        ),
        ("buffer.read_hit_ratio", h.read_hit_pages, h.read_pages),
    ] {
        put(k, ratio(part, whole));
    }
    put("buffer.flushes", h.flushes as f64);
    put("buffer.flushed_pages", h.flushed_pages as f64);
    put("buffer.padded_flushes", h.padded_flushes as f64);
    put("buffer.pad_filler_pages", h.pad_filler_pages as f64);
    let n = &m.nand;
    for c in CAUSES {
        put(
            &format!("nand.programs.{}", c.name()),
            n.programs[c as usize] as f64,
        );
        put(
            &format!("nand.reads.{}", c.name()),
            n.reads[c as usize] as f64,
        );
    }
    put("nand.programs.total", n.programs_total() as f64);
    put("nand.reads.total", n.reads_total() as f64);
    put("nand.erases", n.erases as f64);
    put("waf", ratio(n.programs_total(), h.write_pages));
    put("ftl.waf", ratio(n.programs_total(), h.ftl_pages));
    let serial = nand_serial_us(n, m.timing, m.page_bytes);
    put("time.nand_serial_us", serial);
    // Deprecated alias (the name until 0.2): the same value, emitted for one more release.
    put("time.elapsed_us", serial);
    let serial_mib_s = if serial > 0.0 {
        h.write_bytes as f64 / (1024.0 * 1024.0) / (serial / 1e6)
    } else {
        f64::NAN
    };
    // Over serial NAND time, not a clock: named so that it is not read as timed mode's
    // `throughput.mib_s`. The old name is a deprecated alias for one more release.
    put("throughput.nand_serial_write_mib_s", serial_mib_s);
    put("throughput.write_mib_s", serial_mib_s);
    // Seed 000's elapsed time: erase + program time only (reads and transfers left out).
    let pe = n.programs_total() as f64 * m.timing.program_us + n.erases as f64 * m.timing.erase_us;
    put("time.program_erase_us", pe);
    put(
        "throughput.program_erase_write_mib_s",
        if pe > 0.0 {
            h.write_bytes as f64 / (1024.0 * 1024.0) / (pe / 1e6)
        } else {
            f64::NAN
        },
    );
    let e = &m.erases_per_block;
    if !e.is_empty() {
        let len = e.len() as f64;
        let mean = e.iter().map(|&x| x as f64).sum::<f64>() / len;
        let var = e.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / len;
        put("wear.erase_count.min", *e.iter().min().unwrap() as f64);
        put("wear.erase_count.max", *e.iter().max().unwrap() as f64);
        put("wear.erase_count.mean", mean);
        put("wear.erase_count.stdev", var.sqrt());
    }
    for (k, v) in &m.ftl_counters {
        put(k, *v as f64);
    }
    for (k, v) in &m.ftl_gauges {
        put(k, *v);
    }
    out
}
