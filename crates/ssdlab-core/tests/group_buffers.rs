//! The block-grouped write buffers `clc`, `ref` and `bpac` behind every FTL on a real trace,
//! with integrity checking, in counts and timed mode; and the settings where one of them is
//! exactly another policy: CLC with the whole buffer hot is block-level LRU and with none hot is
//! FAB ranking by pages, REF with a one-page window is page-level LRU, BPAC without a page region and without
//! promotions (T_PIRD = 0, distances in page writes) and with LRU victims is block-level LRU.

use ssdlab_core::engine::{NoProgress, RunResult};
use ssdlab_core::{simulate, Config};
use std::path::{Path, PathBuf};

mod common;

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// linux-mysql (80,794 requests, 91% writes, 1 GiB written) folded onto a 128 MiB device of
/// 32-page blocks after a fill: GC and merges all along. `extra` holds the FTL and buffer.
fn mysql(extra: &str) -> Config {
    let path = traces_dir().join("blkreplay_1and1/linux-mysql.load.gz");
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\naddress_map = \"fold\"\n\
         [device]\nlogical_bytes = \"128MiB\"\npages_per_block = 32\nop = 0.15\n\
         [run]\nprecondition = \"fill\"\ncheck_integrity = true\n{extra}",
        path.display()
    );
    Config::from_toml_str(&text).unwrap()
}

fn run(c: &Config) -> RunResult {
    simulate(c, &mut NoProgress).unwrap_or_else(|e| panic!("{e}"))
}

/// Every FTL × each of the three buffers (defaults, 1 MiB): the run completes with integrity
/// checked, every host page reaches the FTL (flushed pages = host pages − hits), the hybrid FTLs
/// merge, and timed mode (2 × 2 dies, QD 4) reports every counts-mode metric exactly.
#[test]
fn every_ftl_counts_and_timed() {
    for ftl in ["page", "block", "bast", "fast"] {
        for buffer in ["clc", "ref", "bpac"] {
            let mut c = mysql(&format!(
                "[ftl]\nkind = \"{ftl}\"\n[buffer]\nkind = \"{buffer}\"\nbytes = \"1MiB\"\n"
            ));
            let counts = run(&c).metrics;
            let m = &counts;
            assert!(m["host.write_pages"] > 250_000.0, "{ftl} × {buffer}");
            assert!(m["buffer.write_hit_pages"] > 0.0, "{ftl} × {buffer}");
            assert_eq!(
                m["nand.programs.host"],
                m["host.write_pages"] - m["buffer.write_hit_pages"],
                "{ftl} × {buffer}: host programs = page misses (no padding by default)"
            );
            assert!(m["buffer.flushes"] > 0.0);
            if ftl == "bast" || ftl == "fast" {
                assert!(m["ftl.merges.full"] > 0.0, "{ftl} × {buffer}");
            }
            c.run.mode = "timed".into();
            c.run.queue_depth = 4;
            (c.device.channels, c.device.chips_per_channel) = (2, 2);
            let timed = run(&c).metrics;
            common::assert_counts_same_timed(&counts, &timed, &format!("{ftl} × {buffer}"));
            assert!(timed["latency.all.mean_us"] > 0.0);
        }
    }
}

/// Metrics and histograms of two runs, equal but for the named policy gauges.
fn assert_same(a: &RunResult, b: &RunResult, ignore: &[&str], what: &str) {
    let strip = |r: &RunResult| {
        let mut m = r.metrics.clone();
        m.retain(|k, _| !ignore.contains(&k.as_str()));
        format!("{m:?}")
    };
    assert_eq!(strip(a), strip(b), "{what}");
    assert_eq!(a.histograms, b.histograms, "{what}");
    assert!(a.metrics["buffer.write_hit_pages"] > 0.0, "{what}");
}

#[test]
fn reductions_to_existing_policies() {
    for ftl in ["page", "bast"] {
        let cfg = |buffer: &str, table: &str| {
            mysql(&format!(
                "[ftl]\nkind = \"{ftl}\"\n[buffer]\nkind = \"{buffer}\"\nbytes = \"512KiB\"\n{table}"
            ))
        };
        let block_lru = run(&cfg("block-lru", ""));
        let clc_all_hot = run(&cfg("clc", "[buffer.clc]\nhot_fraction = 1.0\n"));
        assert_same(
            &clc_all_hot,
            &block_lru,
            &[],
            &format!("{ftl}: clc(1) = block-lru"),
        );
        // CLC's cold list ranks clusters by pages: FAB by pages (Jo et al.'s weight).
        let fab = run(&cfg("fab", "[buffer.fab]\nweight = \"pages\"\n"));
        let clc_all_cold = run(&cfg("clc", "[buffer.clc]\nhot_fraction = 0.0\n"));
        assert_same(
            &clc_all_cold,
            &fab,
            &[],
            &format!("{ftl}: clc(0) = fab by pages"),
        );
        // linux-mysql writes partial pages, so seed 000's weight (sectors) chooses otherwise.
        let fab_sectors = run(&cfg("fab", ""));
        assert_ne!(
            fab_sectors.metrics["buffer.flushes"], fab.metrics["buffer.flushes"],
            "{ftl}: fab by sectors = fab by pages"
        );
        assert_ne!(
            fab.metrics["buffer.write_hit_pages"], block_lru.metrics["buffer.write_hit_pages"],
            "the two references differ"
        );
        // T_PIRD = 0 promotes nothing only in page writes (a distance of at least 1); in distinct
        // pages a page re-written with no other page in between has PIRD 0.
        let bpac_blocks = run(&cfg(
            "bpac",
            "[buffer.bpac]\npage_target_fraction = 0.0\npird_mode = \"fixed\"\n\
             pird_threshold = 0.0\nblock_victim = \"oldest\"\ndistance = \"page_writes\"\n",
        ));
        assert_same(
            &bpac_blocks,
            &block_lru,
            &[
                "buffer.bpac.page_target",
                "buffer.bpac.t_pird",
                "buffer.bpac.t_bird",
            ],
            &format!("{ftl}: bpac without page region = block-lru"),
        );
        let lru = run(&cfg("lru", ""));
        // Whatever K and the REBL order: one candidate per eviction.
        for order in ["fifo", "lru"] {
            let one_page = run(&cfg(
                "ref",
                &format!("[buffer.ref]\nwindow = 0.0\nrebl_blocks = 3\nrebl_order = \"{order}\"\n"),
            ));
            assert_same(
                &one_page,
                &lru,
                &["buffer.ref.rebl_capacity"],
                &format!("{ftl}: ref(window 1 page, {order}) = lru"),
            );
        }
    }
}

/// The integrated buffer and `reref` padding through the engine, integrity checked:
/// - without log blocks (page and block FTLs) `integrated` flushes exactly what CLC does, and
///   `reref` never pads;
/// - on BAST and FAST its gauges agree with the engine's and the FTL's own counts: its flushes are
///   the buffer's, the padding's pads are the padded flushes, and (BAST) the predictions
///   "re-referenced" are the log-block misses, since every partial miss not padded takes a log
///   block; timed mode reports every count exactly;
/// - `reref` behind another group buffer pads what it says it pads.
#[test]
fn integrated_and_reref() {
    let cfg = |ftl: &str, buffer: &str, padding: &str| {
        mysql(&format!(
            "[ftl]\nkind = \"{ftl}\"\nlog_blocks = 24\n[buffer]\nkind = \"{buffer}\"\n\
             bytes = \"512KiB\"\npadding = \"{padding}\"\n"
        ))
    };
    let gauges = [
        "buffer.integrated.weight",
        "buffer.integrated.flushes",
        "buffer.integrated.log_hits",
        "buffer.integrated.overrides",
        "padding.reref.padded",
        "padding.reref.predictions",
        "padding.reref.accuracy",
        "padding.reref.predicted_reref",
        "padding.reref.accuracy_observed",
        "padding.reref.rate",
        "padding.reref.prefixes_logged",
    ];
    for ftl in ["page", "block"] {
        let clc = run(&cfg(ftl, "clc", "none"));
        let integrated = run(&cfg(ftl, "integrated", "auto"));
        assert_same(
            &integrated,
            &clc,
            &gauges,
            &format!("{ftl}: integrated = clc"),
        );
        assert_eq!(integrated.metrics["buffer.padded_flushes"], 0.0);
        assert_eq!(integrated.metrics["buffer.integrated.log_hits"], 0.0);
    }
    for ftl in ["bast", "fast"] {
        let mut c = cfg(ftl, "integrated", "auto");
        let counts = run(&c).metrics;
        let m = |k: &str| counts[k];
        assert_eq!(m("buffer.integrated.flushes"), m("buffer.flushes"), "{ftl}");
        assert_eq!(
            m("padding.reref.padded"),
            m("buffer.padded_flushes"),
            "{ftl}"
        );
        assert!(
            m("buffer.padded_flushes") > 0.0 && m("ftl.log.hits") > 0.0,
            "{ftl}"
        );
        assert!(m("buffer.integrated.overrides") > 0.0, "{ftl}");
        let accuracy = m("padding.reref.accuracy");
        assert!(accuracy > 0.0 && accuracy < 1.0, "{ftl}: {accuracy}");
        if ftl == "bast" {
            // Every unpadded partial miss takes a log block: predicted re-referenced, or an
            // in-order prefix logged without a prediction.
            assert!(m("padding.reref.prefixes_logged") > 0.0);
            assert_eq!(
                m("padding.reref.predicted_reref") + m("padding.reref.prefixes_logged"),
                m("ftl.log.misses")
            );
        }
        c.run.mode = "timed".into();
        c.run.queue_depth = 4;
        let timed = run(&c).metrics;
        for (k, v) in &counts {
            let same = timed[k] == *v || (v.is_nan() && timed[k].is_nan());
            assert!(same, "{ftl}: {k} = {v} counted, {} timed", timed[k]);
        }
    }
    for buffer in ["clc", "bplru", "ref"] {
        let r = run(&cfg("bast", buffer, "reref")).metrics;
        assert!(r["buffer.padded_flushes"] > 0.0, "{buffer}");
        assert_eq!(
            r["padding.reref.padded"], r["buffer.padded_flushes"],
            "{buffer}"
        );
        assert_eq!(
            r["padding.reref.predicted_reref"] + r["padding.reref.prefixes_logged"],
            r["ftl.log.misses"],
            "{buffer}"
        );
    }
}
