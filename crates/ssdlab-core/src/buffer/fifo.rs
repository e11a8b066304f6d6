//! `fifo`: a page FIFO. Write hits update the page in place; a full buffer flushes its
//! `batch_pages` oldest pages, or all of them (`batch_pages = 0`: the buffer of seed 004's
//! platform, which fills and then flushes as a whole across the parallel units). Its tests also
//! prove that a component is one file plus one registry entry: they configure, list, document and
//! run it through the public paths only.

use super::{FlushSink, HostPage, WriteBuffer};
use crate::error::{Result, SimError};
use crate::units::{Lpn, SectorMask};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

crate::params! {
    /// The FIFO's parameters (`[buffer.fifo]`).
    pub struct Params {
        /// Pages flushed together when the buffer is full, oldest first; 0 = every page (at most
        /// the buffer's capacity).
        batch_pages: u64 = 1,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        if self.batch_pages > u32::MAX as u64 {
            return Err(SimError::config(
                format!("{table}.batch_pages"),
                format!("{} is over {}", self.batch_pages, u32::MAX),
            ));
        }
        Ok(())
    }
}

pub struct Fifo {
    capacity: u64,
    ppb: u64,
    batch: u64,
    order: VecDeque<Lpn>,
    pages: FxHashMap<Lpn, (SectorMask, u32, u32)>,
}

impl Fifo {
    pub fn new(capacity: u64, ppb: u64, p: Params) -> Self {
        let whole = if p.batch_pages == 0 {
            capacity
        } else {
            p.batch_pages
        };
        Fifo {
            capacity,
            ppb,
            batch: whole.min(capacity).max(1),
            order: VecDeque::new(),
            pages: FxHashMap::default(),
        }
    }

    fn flush_oldest(&mut self, n: u64, sink: &mut dyn FlushSink) -> Result<()> {
        for _ in 0..n {
            let Some(lpn) = self.order.pop_front() else {
                break;
            };
            let (mask, version, hint) = self.pages.remove(&lpn).unwrap_or_default();
            super::flush_page(sink, HostPage::new(lpn, mask, version, hint), self.ppb)?;
        }
        Ok(())
    }
}

impl WriteBuffer for Fifo {
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        if let Some(p) = self.pages.get_mut(&page.lpn) {
            let had = p.0;
            *p = (had | page.mask, page.version, page.hint);
            return Ok(had);
        }
        if self.capacity == 0 {
            self.pages
                .insert(page.lpn, (page.mask, page.version, page.hint));
            self.order.push_back(page.lpn);
            return self.flush_oldest(1, sink).map(|_| 0);
        }
        if self.pages.len() as u64 >= self.capacity {
            self.flush_oldest(self.batch, sink)?;
        }
        self.pages
            .insert(page.lpn, (page.mask, page.version, page.hint));
        self.order.push_back(page.lpn);
        Ok(0)
    }
    fn read(&mut self, lpn: Lpn, mask: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(self.pages.get(&lpn).map_or(0, |p| p.0 & mask))
    }
    fn trim(&mut self, lpn: Lpn) {
        if self.pages.remove(&lpn).is_some() {
            self.order.retain(|&l| l != lpn);
        }
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let had = !self.order.is_empty();
        self.flush_oldest(1, sink).map(|_| had)
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        self.flush_oldest(self.order.len() as u64, sink)
    }
    fn pages(&self) -> u64 {
        self.pages.len() as u64
    }
}

/// The registry entry of `fifo`. Its tests are also the proof that a component is its file
/// plus one line in the registry.
pub static ENTRY: super::Entry = super::entry! {
    "fifo", Params, super::BUFFER_KEYS, padding "none",
    "Page FIFO: a full buffer flushes its batch_pages oldest pages, or every page (batch_pages = 0: \
     a buffer that fills, then flushes as a whole over the parallel units, as on seed 004's platform).",
    |cfg, p, q| Ok(Box::new(Fifo::new(p.capacity_pages, p.pages_per_block, q)))
};

#[cfg(test)]
mod tests {
    use crate::engine::NoProgress;
    use crate::{engine, registry, simulate, Config};

    /// 4 KiB sequential writes cycling over `footprint` through a 16-page buffer.
    fn config(footprint: &str, extra: &str) -> Config {
        engine::parse_toml_file(&text(footprint, extra), "example.toml").unwrap()
    }

    fn text(footprint: &str, extra: &str) -> String {
        format!(
            "[workload]\nkind = \"sequential\"\nrequests = 1000\nfootprint_bytes = \"{footprint}\"\n\
             [device]\nlogical_bytes = \"2MiB\"\npages_per_block = 16\nop = 0.25\n\
             [buffer]\nkind = \"fifo\"\nbytes = \"64KiB\"\n{extra}"
        )
    }

    #[test]
    fn configurable() {
        let r = simulate(
            &config("1MiB", "[buffer.fifo]\nbatch_pages = 4\n"),
            &mut NoProgress,
        )
        .unwrap();
        assert_eq!(r.config.buffer.tables["fifo"]["batch_pages"], 4);
        // Defaults are filled into the resolved configuration.
        let r = simulate(&config("1MiB", ""), &mut NoProgress).unwrap();
        assert_eq!(r.config.buffer.tables["fifo"]["batch_pages"], 1);
        let bad = text("1MiB", "[buffer.fifo]\nbatch_pages = 5000000000\n");
        let e = engine::parse_toml_file(&bad, "example.toml").unwrap_err();
        let msg = "config field `buffer.fifo.batch_pages`: 5000000000 is over 4294967295";
        assert_eq!(e.to_string(), format!("example.toml:13: {msg}"));
        let e = simulate(&Config::from_toml_str(&bad).unwrap(), &mut NoProgress).unwrap_err();
        assert_eq!(e.to_string(), msg);
        let typo = "[buffer]\nkind = \"fifo\"\n[buffer.fifo]\nbatch = 2\n";
        let e = engine::parse_toml_file(typo, "example.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "example.toml:4: config field `buffer.fifo.batch`: unknown key; valid: batch_pages"
        );
    }

    #[test]
    fn listed_and_documented() {
        assert!(registry::names("buffer").contains(&"fifo"));
        let json = registry::components_json();
        let me = json
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["category"] == "buffer" && c["name"] == "fifo")
            .unwrap();
        assert_eq!(me["params"][0]["key"], "buffer.fifo.batch_pages");
        assert_eq!(me["params"][0]["default"], 1);
        let md = registry::markdown();
        assert!(
            md.contains("`buffer.fifo.batch_pages` = 1: Pages flushed together when the buffer is full, oldest first"),
            "{md}"
        );
    }

    #[test]
    fn runnable() {
        // The stream cycles over 256 pages: a 16-page FIFO never hits, so every host page is
        // programmed; batches of 4 change when pages leave, not how many.
        for extra in ["", "[buffer.fifo]\nbatch_pages = 4\n"] {
            let r = simulate(&config("1MiB", extra), &mut NoProgress).unwrap();
            assert_eq!(r.metrics["buffer.page_hit_ratio"], 0.0);
            assert_eq!(r.metrics["nand.programs.host"], 1000.0);
        }
        // 16 pages cycling in a 16-page buffer: only the first pass misses; each page is
        // programmed once, at the end.
        let r = simulate(&config("64KiB", ""), &mut NoProgress).unwrap();
        assert_eq!(r.metrics["buffer.page_hit_ratio"], 984.0 / 1000.0);
        assert_eq!(r.metrics["nand.programs.host"], 16.0);
        // The whole buffer at once (batch_pages = 0): 1000 pages through 16 slots flush in 62
        // batches of 16 while running, and the last 8 at the end.
        let r = simulate(
            &config("1MiB", "[buffer.fifo]\nbatch_pages = 0\n"),
            &mut NoProgress,
        )
        .unwrap();
        assert_eq!(r.metrics["nand.programs.host"], 1000.0);
        assert_eq!(r.metrics["buffer.flushes"], 62.0 * 16.0 + 8.0);
    }
}
