//! The line FTL (seed 001) against exact results. FIFO victim choice under uniform random page
//! writes has, in the limit of many lines, a fraction u of valid pages at collection with
//! u = e^{−(1+ρ)(1−u)} and WAF = 1/(1−u), ρ = the written space over the live data − 1. With
//! one open line that is the whole device; with hot and cold data separated perfectly into two
//! lines, each line class follows the formula at its own ρ (its lines over its live pages,
//! measured in the run). The perfect separation is seed 001's own size classifier: hot writes
//! are 4 KiB, cold ones 16 KiB, so every hot request falls in class 1 (≤ the mean) and every
//! cold one in class 3 (> 1.5 × the mean).

use ssdlab_core::engine::{NoProgress, RunResult};
use ssdlab_core::{simulate, Config};
use std::collections::BTreeMap;
use std::io::Write;

mod common;

/// u of FIFO: the root in (0, 1) of u = e^{−a(1−u)}, a = 1 + ρ > 1, by bisection (u = 1 is the
/// other, trivial root).
fn fifo_u(rho: f64) -> f64 {
    let a = 1.0 + rho;
    let f = |u: f64| u - (-a * (1.0 - u)).exp();
    let (mut lo, mut hi) = (0.0, 1.0 - 1e-12);
    // f(0) < 0; f just below 1 is > 0 when a > 1 (the slope of e^{−a(1−u)} at 1 is a).
    let mut mid = 0.5;
    for _ in 0..200 {
        mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Skip the trivial root: with a > 1 the nontrivial one is where f crosses upwards.
    mid
}

fn fifo_waf(rho: f64) -> f64 {
    1.0 / (1.0 - fifo_u(rho))
}

#[test]
fn fifo_formula_worked_values() {
    // a = 2: u = e^{−2(1−u)} has u ≈ 0.2032 (checked: e^{−2·0.7968} = 0.2032).
    assert!((fifo_u(1.0) - 0.2032).abs() < 1e-4, "{}", fifo_u(1.0));
    let u = fifo_u(0.1);
    assert!((u - (-1.1 * (1.0 - u)).exp()).abs() < 1e-12);
    assert!(u > 0.8 && u < 0.85, "{u}");
}

fn run(toml: &str) -> RunResult {
    simulate(&Config::from_toml_str(toml).unwrap(), &mut NoProgress)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn m(r: &RunResult, k: &str) -> f64 {
    *r.metrics.get(k).unwrap_or_else(|| panic!("no metric {k}"))
}

/// Class k's WAF and ρ (its lines over its valid pages − 1, at the end of the run).
fn class(r: &RunResult, k: u32, line_pages: f64) -> (f64, f64) {
    let host = m(r, &format!("ftl.lines.class{k}_host_pages"));
    let gc = m(r, &format!("ftl.lines.class{k}_gc_pages"));
    let lines = m(r, &format!("ftl.lines.class{k}_lines"));
    let valid = m(r, &format!("ftl.lines.class{k}_valid_pages"));
    ((host + gc) / host, lines * line_pages / valid - 1.0)
}

/// One open line (placement none), FIFO victims, burst GC, uniform random 4 KiB writes over a filled
/// device of 2,048 lines of 128 pages: WAF within 3% of 1/(1−u) at the measured ρ, which is the
/// configured one less the GC reserve and the open line.
#[test]
fn one_line_fifo_matches_the_formula() {
    for op in [0.1, 0.2, 0.35] {
        let pages = 1u64 << 18;
        let r = run(&format!(
            "[workload]\nkind = \"uniform\"\nrequests = {}\nfootprint_bytes = {}\nseed = 3\n\
             [device]\nlogical_bytes = {}\npages_per_block = 128\nop = {op}\n\
             [ftl]\nkind = \"lines\"\n[ftl.lines]\nvictim = \"fifo\"\ngc = \"burst\"\n\
             [buffer]\nkind = \"none\"\n\
             [run]\nprecondition = \"fill\"\nwarmup_requests = {}\n",
            pages * 8,
            pages * 4096,
            pages * 4096,
            pages * 3
        ));
        let (waf, rho) = class(&r, 0, 128.0);
        let expected = fifo_waf(rho);
        assert!(
            (waf - expected).abs() < 0.03 * expected,
            "op {op}: WAF {waf:.4} vs {expected:.4} at measured ρ {rho:.4}"
        );
        // The whole device's WAF is that line's, and ρ is the configured one less the
        // reserve (gc_free_lines = 3) and the open line, within a line.
        assert_eq!(waf, m(&r, "waf"));
        let lines = m(&r, "device.physical_blocks");
        let configured = (lines - 4.0) / 2048.0 - 1.0;
        assert!(
            (rho - configured).abs() < 3.0 / 2048.0,
            "{rho} vs {configured}"
        );
    }
}

/// Writes an MSR-format trace: `n` requests, a share `hot` of them 4 KiB writes to the first
/// `hot_pages` pages, the rest 16 KiB (4 aligned pages) writes over the remaining
/// `cold_pages` pages; uniform within each region.
fn hot_cold_trace(
    n: u64,
    hot: f64,
    hot_pages: u64,
    cold_pages: u64,
    seed: u64,
) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ssdlab-lines-hotcold-{}-{seed}.csv",
        std::process::id()
    ));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut x = seed;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 11
    };
    for i in 0..n {
        let is_hot = (next() as f64 / (1u64 << 53) as f64) < hot;
        let (page, len) = if is_hot {
            (next() % hot_pages, 4096)
        } else {
            (hot_pages + 4 * (next() % (cold_pages / 4)), 16384)
        };
        writeln!(
            f,
            "{},h,0,Write,{},{len},0",
            128166372000000000u64 + i * 10,
            page * 4096
        )
        .unwrap();
    }
    path
}

/// 80% of the writes to 20% of the pages, separated perfectly by size-ema-entry (GC copies stay
/// in their class's line): each class's WAF within 3% of the formula at its own measured ρ.
/// pblk's ring for one LUN written a page at a time is 128 entries, 2 windows: its rate
/// limiter then holds so many lines free that the classes' ρ fall to 0.03–0.13, where the
/// formula is steep; a ring of 256 (pblk's write_buffer_size), 4 windows, leaves them 0.09–0.38.
#[test]
fn hot_and_cold_lines_each_follow_the_formula() {
    let (hot_pages, cold_pages) = (1u64 << 16, 1u64 << 18);
    let total = hot_pages + cold_pages;
    let trace = hot_cold_trace(3_000_000, 0.8, hot_pages, cold_pages, 7);
    let r = run(&format!(
        "[workload]\nkind = \"trace\"\npath = {:?}\nformat = \"msr\"\n\
         [device]\nlogical_bytes = {}\npages_per_block = 128\nop = 0.25\n\
         [ftl]\nkind = \"lines\"\n[ftl.lines]\nvictim = \"fifo\"\nbatch_pages = 1\nwrite_buffer_size = 256\n\
         [placement]\nkind = \"size-ema-entry\"\n[placement.size-ema-entry]\ngc = \"source\"\n\
         [buffer]\nkind = \"none\"\n\
         [run]\nprecondition = \"fill\"\nwarmup_requests = 1000000\ncheck_integrity = false\n",
        trace.to_str().unwrap(),
        total * 4096
    ));
    std::fs::remove_file(&trace).ok();
    let mut seen = BTreeMap::new();
    for k in 0..4 {
        seen.insert(k, m(&r, &format!("ftl.lines.class{k}_host_pages")));
    }
    // Perfect separation: hot requests in class 1, cold ones in class 3, nothing elsewhere
    // (every cold request writes 4 pages).
    assert_eq!(seen[&0] + seen[&2], 0.0, "{seen:?}");
    assert!(seen[&1] > 0.0 && seen[&3] > 0.0);
    for k in [1, 3] {
        let (waf, rho) = class(&r, k, 128.0);
        let expected = fifo_waf(rho);
        assert!(
            (waf - expected).abs() < 0.03 * expected,
            "class {k}: WAF {waf:.4} vs {expected:.4} at its ρ {rho:.4}"
        );
    }
    // Every GC copy is in a class's count, and global FIFO gives each class lines in
    // proportion to how fast it seals them: the hot class gets the larger share of the spare
    // space here (ρ above the device's), the cold one less.
    let gc: f64 = (0..4)
        .map(|k| m(&r, &format!("ftl.lines.class{k}_gc_pages")))
        .sum();
    assert_eq!(gc, m(&r, "nand.programs.gc"));
    let (_, hot_rho) = class(&r, 1, 128.0);
    let (_, cold_rho) = class(&r, 3, 128.0);
    assert!(
        hot_rho > 0.25 && cold_rho < 0.25,
        "hot ρ {hot_rho}, cold ρ {cold_rho}"
    );
}

/// Every placement of the registry behind both FTLs that take one, with integrity checking
/// (every LPN maps to its latest version through GC, valid counts match) on a skewed workload
/// with mixed request sizes and trims; timed mode (2 × 2 LUNs, which the line FTL's lines
/// span in both modes) reports exactly the counts.
#[test]
fn every_placement_keeps_integrity_and_counts_the_same_timed() {
    use ssdlab_core::registry::names;
    for ftl in ["lines", "page"] {
        for placement in names("placement") {
            // The oracle takes its class count from the page FTL's streams.
            let streams = if ftl == "page" {
                "[ftl.page]\nstreams = 4\n"
            } else {
                ""
            };
            let text = format!(
                "[workload]\nkind = \"zipf\"\nrequests = 40000\nfootprint_bytes = \"12MiB\"\n\
                 request_bytes = \"8KiB\"\nread_fraction = 0.1\nseed = 5\n\
                 [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.3\n\
                 channels = 2\nchips_per_channel = 2\n\
                 [ftl]\nkind = \"{ftl}\"\n{streams}[placement]\nkind = \"{placement}\"\n\
                 [buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n\
                 [run]\nprecondition = \"fill\"\ncheck_integrity = true\n"
            );
            let mut c = Config::from_toml_str(&text).unwrap();
            let counts = simulate(&c, &mut NoProgress)
                .unwrap_or_else(|e| panic!("{ftl} × {placement}: {e}"))
                .metrics;
            assert!(
                counts["gc.victims"] > 50.0,
                "{ftl} × {placement}: no GC to speak of"
            );
            c.run.mode = "timed".into();
            c.run.queue_depth = 4;
            let timed = simulate(&c, &mut NoProgress).unwrap().metrics;
            common::assert_counts_same_timed(&counts, &timed, &format!("{ftl} × {placement}"));
        }
    }
}

/// Placement needs an FTL with several frontiers; the line FTL's victim is its own key; an open
/// line count the placement does not have is an error.
#[test]
fn placement_config_errors_name_the_field() {
    let base = "[workload]\nkind = \"uniform\"\nrequests = 10\nfootprint_bytes = \"4MiB\"\n\
                [device]\nlogical_bytes = \"4MiB\"\npages_per_block = 32\nop = 0.3\n";
    let err = |extra: &str| {
        let c = Config::from_toml_str(&format!("{base}{extra}")).unwrap();
        simulate(&c, &mut NoProgress).unwrap_err().to_string()
    };
    let e = err("[ftl]\nkind = \"bast\"\n[placement]\nkind = \"sepbit\"\n");
    assert!(e.contains("placement.kind") && e.contains("bast"), "{e}");
    let e = err("[ftl]\nkind = \"lines\"\ngc = \"fifo\"\n");
    assert!(
        e.contains("ftl.gc") && e.contains("ftl.lines.victim"),
        "{e}"
    );
    let e = err(
        "[ftl]\nkind = \"lines\"\n[ftl.lines]\nopen_lines = 3\n[placement]\nkind = \"sepbit\"\n",
    );
    assert!(e.contains("ftl.lines.open_lines") && e.contains("6"), "{e}");
    let e = err("[ftl]\nkind = \"lines\"\n[ftl.lines]\nvictim = \"lru\"\n");
    assert!(e.contains("ftl.lines.victim") && e.contains("lru"), "{e}");
    let e = err("[placement]\nkind = \"sepbitt\"\n");
    assert!(e.contains("placement.kind") && e.contains("sepbit"), "{e}");
    let e = err("[ftl]\nkind = \"lines\"\n[placement]\nkind = \"size-ema-entry\"\n[placement.size-ema-entry]\nbounds = [1.0]\nweight = 2.0\n");
    assert!(e.contains("placement.size-ema-entry.weight"), "{e}");
    // The resolved configuration shows the open lines used.
    let base = base.replace("op = 0.3", "op = 0.6");
    let c = Config::from_toml_str(&format!(
        "{base}[ftl]\nkind = \"lines\"\n[placement]\nkind = \"sepbit\"\n"
    ))
    .unwrap();
    let r = simulate(&c, &mut NoProgress).unwrap();
    assert_eq!(r.config.ftl.tables["lines"]["open_lines"], 6);
    assert_eq!(r.metrics["ftl.lines.open"], 6.0);
    // `open` is the same key.
    let c = Config::from_toml_str(&format!(
        "{base}[ftl]\nkind = \"lines\"\n[ftl.lines]\nopen = 2\n[placement]\nkind = \"sep-gc\"\n"
    ))
    .unwrap();
    assert_eq!(
        simulate(&c, &mut NoProgress).unwrap().metrics["ftl.lines.open"],
        2.0
    );
    let e = err("[ftl]\nkind = \"lines\"\n[ftl.lines]\nopen = 3\n[placement]\nkind = \"sep-gc\"\n");
    assert!(e.contains("ftl.lines.open_lines"), "{e}");
}

/// pblk's rate limiter on the seed's device shape (32 lines of 8 LUNs, 22 of data; lines of
/// 256 pages here): GC starts below 9 free lines and host writes wait at the reserve of 4, so
/// at the end of a long uniform run the free lines are between them, the host never waited
/// (GC keeps up at 1 to 3 copies per host page), and the device holds about 9 lines free where
/// burst GC below 5 holds 5: more GC, as pblk does.
#[test]
fn rate_limiter_keeps_free_lines_between_its_thresholds() {
    let cfg = |gc: &str| {
        format!(
            "[workload]\nkind = \"uniform\"\nrequests = 60000\nfootprint_bytes = \"22MiB\"\nseed = 3\n\
             [device]\nlogical_bytes = \"22MiB\"\npages_per_block = 256\nop = 0.4545\n\
             channels = 2\nchips_per_channel = 4\n\
             [ftl]\nkind = \"lines\"\n[ftl.lines]\n{gc}\n[buffer]\nkind = \"none\"\n\
             [run]\nprecondition = \"fill\"\n"
        )
    };
    let rl = run(&cfg("gc = \"pblk\""));
    assert_eq!(m(&rl, "device.physical_blocks"), 32.0);
    // pblk's ring on this device: 512 entries (pblk_rb_calculate_size(256, 192)).
    assert_eq!(m(&rl, "ftl.lines.ring_entries"), 512.0);
    let free = m(&rl, "ftl.free_blocks");
    assert!((4.0..=9.0).contains(&free), "{free}");
    assert_eq!(m(&rl, "ftl.lines.rl_stalls"), 0.0);
    assert_eq!(m(&rl, "ftl.lines.backstop_gc"), 0.0);
    // GC copies went through the ring in requests of at most 64 sectors, every request of a
    // victim full but its last: ⌈moved / 64⌉ ≤ requests ≤ moved / 64 + victims.
    let (moved, requests) = (m(&rl, "gc.moved_pages"), m(&rl, "ftl.lines.gc_requests"));
    let victims = m(&rl, "gc.victims") - m(&rl, "ftl.lines.empty_victims");
    assert!(
        requests >= (moved / 64.0).ceil() && requests <= moved / 64.0 + victims,
        "{requests} requests for {moved} pages of {victims} victims"
    );
    assert_eq!(rl.config.ftl.tables["lines"]["gc_write"], "ring");
    let burst = run(&cfg("gc = \"burst\"\ngc_free_lines = 5"));
    assert!(
        m(&rl, "gc.moved_pages") > 1.2 * m(&burst, "gc.moved_pages"),
        "{} vs {}",
        m(&rl, "gc.moved_pages"),
        m(&burst, "gc.moved_pages")
    );
}

/// The SepBIT artifact's GC model: after each host page, one line whose garbage fraction
/// reaches 0.15 is collected while the sealed lines' garbage exceeds 0.15 of the written
/// pages, so at the end of a long uniform run the device holds its live data in about
/// live / 0.85 pages (within two lines: the open one, and the one GC is due to take), however
/// much spare space it has, and free lines never ran out.
#[test]
fn gp_gc_holds_the_garbage_fraction() {
    let r = run(
        "[workload]\nkind = \"uniform\"\nrequests = 80000\nfootprint_bytes = \"16MiB\"\nseed = 3\n\
         [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 64\nop = 0.5\n\
         [ftl]\nkind = \"lines\"\n[ftl.lines]\ngc = \"gp\"\nvictim = \"greedy\"\nbatch_pages = 1\n\
         [buffer]\nkind = \"none\"\n[run]\nprecondition = \"fill\"\n",
    );
    let lines = m(&r, "ftl.lines.class0_lines");
    let valid = m(&r, "ftl.lines.class0_valid_pages");
    let expected = valid / 0.85 / 64.0;
    assert!(
        (lines - expected).abs() <= 2.0,
        "{lines} lines for {valid} valid pages, expected {expected:.1}"
    );
    assert_eq!(m(&r, "ftl.lines.backstop_gc"), 0.0);
    assert!(m(&r, "gc.victims") > 500.0);
}

/// pblk_set_provision through a configuration, on the seed's device shape (2 × 4 LUNs) with
/// lines of 256 pages: without device.op, the line FTL paced as pblk over-provisions as pblk
/// does, its default 11% of the lines raised to its reserve of 10 lines (22 of data: 32 lines,
/// device.op = 10 / 22), and says so; a device.op given below pblk's minimum is refused
/// naming device.op and its least value (129 lines of data at 0.07: 10 spare lines at OP 7%,
/// below ⌈100 / 7⌉ = 15; 13 is the fewest pblk takes, device.op ≥ 0.1008); burst GC keeps
/// ssdlab's default 0.07 (100 lines of data: 107) and warns of nothing.
#[test]
fn pblk_pacing_over_provisions_as_pblk_does() {
    let cfg = |mib: u64, op: &str, gc: &str| {
        Config::from_toml_str(&format!(
            "[workload]\nkind = \"uniform\"\nrequests = 2000\nfootprint_bytes = \"{mib}MiB\"\nseed = 3\n\
             [device]\nlogical_bytes = \"{mib}MiB\"\npages_per_block = 256\n{op}\
             channels = 2\nchips_per_channel = 4\n\
             [ftl]\nkind = \"lines\"\n[ftl.lines]\ngc = \"{gc}\"\n[buffer]\nkind = \"none\"\n"
        ))
        .unwrap()
    };
    let r = simulate(&cfg(22, "", "pblk"), &mut NoProgress).unwrap();
    assert_eq!(m(&r, "device.physical_blocks"), 32.0);
    assert_eq!(r.config.device.op, Some(10.0 / 22.0));
    let w: Vec<_> = r
        .warnings
        .iter()
        .filter(|w| w.starts_with("device.op is not given"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", r.warnings);
    assert!(
        w[0].contains("10 over-provisioned lines beside 22 of data, device.op = 0.4545"),
        "{}",
        w[0]
    );
    // The resolved configuration runs the same device, the warning gone.
    let again = simulate(&r.config, &mut NoProgress).unwrap();
    assert_eq!(m(&again, "device.physical_blocks"), 32.0);
    assert!(
        !again.warnings.iter().any(|w| w.contains("device.op")),
        "{:?}",
        again.warnings
    );
    let e = simulate(&cfg(129, "op = 0.07\n", "pblk"), &mut NoProgress)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("config field `device.op`: 0.07 gives 10 over-provisioned lines of 139 (OP 7%)")
            && e.contains("⌈100 / 7⌉ = 15 lines")
            && e.contains("needs device.op ≥ 0.1008 (13 over-provisioned lines)"),
        "{e}"
    );
    let b = simulate(&cfg(100, "", "burst"), &mut NoProgress).unwrap();
    assert_eq!(
        (b.config.device.op, m(&b, "device.physical_blocks")),
        (Some(0.07), 107.0)
    );
    assert!(
        !b.warnings.iter().any(|w| w.contains("device.op")),
        "{:?}",
        b.warnings
    );
}
