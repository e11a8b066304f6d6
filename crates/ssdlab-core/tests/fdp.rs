//! NVMe Flexible Data Placement (`[fdp]`), hand-worked: two handles whose data die apart reach a
//! WAF of exactly 1; GC's destinations under initially and persistently isolated handles,
//! counted page by page; HBMW, MBMW and MBE against the engine's page counts; identifiers out of
//! range and configurations FDP cannot take are errors naming the key; synthetic streams as
//! identifiers; the RU time limit's "RU not fully written" events, counted by hand.

mod common;
use common::{error, run};
use std::io::Write;
use std::path::PathBuf;

const PAGE: u64 = 4096;

/// A generic-format trace of single-page writes `(lpn, placement identifier)`, in a file of
/// its own.
fn trace(name: &str, writes: &[(u64, u16)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-fdp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.csv"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for (lpn, pid) in writes {
        writeln!(f, "w,{},{PAGE},{pid}", lpn * PAGE).unwrap();
    }
    path
}

/// 64 logical pages in blocks of 8 (8 logical blocks, 18 physical), no write buffer, nothing
/// before the trace, every mapping checked at the end; `extra` adds keys.
fn config(path: &std::path::Path, extra: &str) -> String {
    format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"generic\"\n\
         [workload.generic]\nop_col = 0\noffset_col = 1\nsize_col = 2\nplacement_id_col = 3\n\
         [device]\nlogical_bytes = \"256KiB\"\npages_per_block = 8\nop = 1.25\n\
         [buffer]\nkind = \"none\"\n[run]\nprecondition = \"none\"\ncheck_integrity = true\n{extra}",
        path.display()
    )
}

/// Handle 0 rewrites pages 0..32 three times as often as handle 1 rewrites 32..64, one
/// sequential pass after another.
fn hot_and_cold() -> Vec<(u64, u16)> {
    let mut w = Vec::new();
    for i in 0..32 * 12 {
        w.push((i % 32, 0));
        if i % 3 == 2 {
            w.push((32 + (i / 3) % 32, 1));
        }
    }
    w
}

#[test]
fn two_handles_with_disjoint_lifetimes_give_waf_one() {
    let path = trace("disjoint", &hot_and_cold());
    let fdp = run(&config(&path, "[fdp]\nenabled = true\nhandles = 2\n"));
    let m = &fdp.metrics;
    // Each handle's reclaim units hold pages rewritten together, in order: every unit GC takes
    // is wholly invalid, so nothing moves.
    assert!(m["gc.victims"] > 0.0, "GC ran");
    assert_eq!(m["gc.moved_pages"], 0.0);
    assert_eq!(m["fdp.waf"], 1.0);
    assert_eq!(m["waf"], 1.0);
    assert_eq!(
        m["fdp.handle.0.host_bytes_written"],
        (32 * 12 * PAGE) as f64
    );
    assert_eq!(m["fdp.handle.1.host_bytes_written"], (32 * 4 * PAGE) as f64);
    // One write frontier mixes hot and cold pages in every block: GC moves the cold ones.
    let mixed = run(&config(&path, ""));
    assert!(mixed.metrics["waf"] > 1.05, "{}", mixed.metrics["waf"]);
}

/// Handle 0 writes two cold pages (30, 31) then rewrites 0..30; handle 1 the same with 62, 63
/// and 32..62, their writes alternating. FIFO GC takes each handle's first unit — two cold
/// pages and six long-dead hot ones — and every later unit wholly dead.
fn cold_pairs() -> Vec<(u64, u16)> {
    let mut h0: Vec<u64> = vec![30, 31];
    let mut h1: Vec<u64> = vec![62, 63];
    for i in 0..30 * 10 {
        h0.push(i % 30);
        h1.push(32 + i % 30);
    }
    h0.iter()
        .zip(&h1)
        .flat_map(|(&a, &b)| [(a, 0), (b, 1)])
        .collect()
}

#[test]
fn gc_destinations_by_handle_type() {
    let path = trace("cold-pairs", &cold_pairs());
    let keys = |t: &str| {
        format!(
            "[ftl]\ngc = \"fifo\"\n[ftl.page]\ngc_free_blocks = 3\n\
             [fdp]\nenabled = true\nhandles = 2\nhandle_type = \"{t}\"\n"
        )
    };
    for t in ["initially-isolated", "persistently-isolated"] {
        let m = run(&config(&path, &keys(t))).metrics;
        // The four cold pages move once each, into GC units that stay open (never reclaimed).
        assert_eq!(m["gc.moved_pages"], 4.0, "{t}");
        assert_eq!(m["fdp.handle.0.valid_pages_at_reclaim"], 2.0, "{t}");
        assert_eq!(m["fdp.handle.1.valid_pages_at_reclaim"], 2.0, "{t}");
        let (h0, h1, shared) = (
            m["fdp.handle.0.gc_bytes_written"],
            m["fdp.handle.1.gc_bytes_written"],
            m["fdp.gc_shared.gc_bytes_written"],
        );
        if t == "initially-isolated" {
            // Both handles' cold pages share one GC unit.
            assert_eq!((h0, h1, shared), (0.0, 0.0, (4 * PAGE) as f64), "{t}");
        } else {
            // Each handle's cold pages stay in a unit of that handle.
            let two = (2 * PAGE) as f64;
            assert_eq!((h0, h1, shared), (two, two, 0.0), "{t}");
        }
        assert_eq!(m["fdp.events.media_reallocated_bytes"], (4 * PAGE) as f64);
    }
}

#[test]
fn hbmw_mbmw_mbe_are_the_page_counts() {
    // A write buffer absorbs rewrites (the host's bytes still count in HBMW); reclaim units of
    // two blocks erase two blocks each.
    let toml = "[workload]\nkind = \"zipf\"\nrequests = 40000\nfootprint_bytes = \"8MiB\"\n\
                [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.5\n\
                [buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n\
                [fdp]\nenabled = true\nhandles = 4\nru_bytes = \"128KiB\"\n";
    let m = run(toml).metrics;
    let block = (16 * PAGE) as f64;
    assert_eq!(m["fdp.hbmw_bytes"], m["host.write_pages"] * PAGE as f64);
    assert_eq!(m["fdp.mbmw_bytes"], m["nand.programs.total"] * PAGE as f64);
    assert_eq!(m["fdp.mbe_bytes"], m["nand.erases"] * block);
    assert_eq!(m["fdp.waf"], m["waf"]);
    assert!(m["nand.erases"] > 0.0 && m["nand.erases"] % 2.0 == 0.0);
    assert!(
        m["host.write_pages"] > m["nand.programs.host"],
        "the buffer absorbed writes"
    );
    // A synthetic workload carries identifier 0: every host page went through handle 0.
    let host: Vec<f64> = (0..4)
        .map(|h| m[&format!("fdp.handle.{h}.host_bytes_written")])
        .collect();
    assert_eq!(host, [m["nand.programs.host"] * PAGE as f64, 0.0, 0.0, 0.0]);
}

#[test]
fn an_identifier_out_of_range_is_an_error() {
    let path = trace("out-of-range", &[(0, 0), (1, 1), (2, 2)]);
    let e = error(&config(&path, "[fdp]\nenabled = true\nhandles = 2\n"));
    assert!(
        e.contains("placement identifier 2") && e.contains("0..=1"),
        "{e}"
    );
    // Two reclaim groups of two handles: identifiers 0..=3, group × handles + handle.
    let ok = run(&config(
        &path,
        "[fdp]\nenabled = true\nhandles = 2\nreclaim_groups = 2\n[ftl.page]\ngc_free_blocks = 2\n",
    )
    .replace("op = 1.25", "op = 2.0"));
    assert_eq!(ok.metrics["host.write_pages"], 3.0);
}

#[test]
fn configurations_fdp_cannot_take_name_the_key() {
    let base = "[workload]\nkind = \"uniform\"\nrequests = 100\nfootprint_bytes = \"1MiB\"\n\
                [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\n";
    for (extra, key, says) in [
        (
            "[fdp]\nenabled = true\nru_bytes = \"96KiB\"\n",
            "fdp.ru_bytes",
            "whole number of FTL blocks",
        ),
        (
            "[fdp]\nenabled = true\nhandle_type = \"isolated\"\n",
            "fdp.handle_type",
            "isolated",
        ),
        (
            "[fdp]\nenabled = true\nhandles = 0\n",
            "fdp.handles",
            "1..=256",
        ),
        (
            "[fdp]\nenabled = true\n[ftl]\nkind = \"bast\"\n",
            "fdp.enabled",
            "page",
        ),
        (
            "[fdp]\nenabled = true\nhandles = 64\n",
            "device.op",
            "reclaim units",
        ),
    ] {
        let e = error(&format!("{base}{extra}"));
        assert!(e.contains(key) && e.contains(says), "{extra}: {e}");
    }
}

#[test]
fn reclaim_groups_keep_their_data_timed() {
    // Two groups of one handle on four dies, timed: each identifier fills units of its own
    // group (on its own dies), where nothing else is written; three groups cannot split four dies.
    let mut w = Vec::new();
    for i in 0..64 * 6 {
        w.push((i % 32, 0));
        w.push((32 + i % 32, 1));
    }
    let path = trace("groups", &w);
    let extra =
        "[fdp]\nenabled = true\nhandles = 1\nreclaim_groups = 2\n[ftl.page]\ngc_free_blocks = 2\n";
    let toml = config(&path, "").replace("[run]\n", "[run]\nmode = \"timed\"\n") + extra;
    let toml = toml.replace(
        "[device]\n",
        "[device]\nchannels = 2\nchips_per_channel = 2\n",
    );
    let m = run(&toml).metrics;
    assert_eq!(m["gc.moved_pages"], 0.0);
    assert_eq!(m["fdp.waf"], 1.0);
    let e = error(&toml.replace("reclaim_groups = 2", "reclaim_groups = 3"));
    assert!(e.contains("fdp.reclaim_groups"), "{e}");
}

#[test]
fn fio_jobs_carry_their_placement_identifiers() {
    // Job 0 writes through handle 0; job 1's writes alternate between handles 2 and 3 (fio's
    // fdp_pli with plid_select = roundrobin); reads carry none.
    let toml = "[workload]\nkind = \"fio\"\nrequests = 20000\nfootprint_bytes = \"8MiB\"\n\
                [[workload.fio.jobs]]\nrw = \"randwrite\"\nsize = \"50%\"\nfdp_pli = [0]\n\
                [[workload.fio.jobs]]\nrw = \"randrw\"\noffset = \"50%\"\nfdp_pli = [2, 3]\n\
                [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.5\n\
                [buffer]\nkind = \"none\"\n[run]\nprecondition = \"none\"\n\
                [fdp]\nenabled = true\nhandles = 4\n";
    let m = run(toml).metrics;
    let host = |h: u32| m[&format!("fdp.handle.{h}.host_bytes_written")] / PAGE as f64;
    assert!(host(0) > 5000.0, "{}", host(0));
    assert_eq!(host(1), 0.0);
    assert!((host(2) - host(3)).abs() <= 1.0, "{} {}", host(2), host(3));
    assert_eq!(host(0) + host(2) + host(3), m["host.write_pages"]);
    let e = error(&toml.replace(
        "fdp_pli = [2, 3]",
        "fdp_pli = [2, 3]\nplid_select = \"hash\"",
    ));
    assert!(e.contains("workload.fio.jobs[1].plid_select"), "{e}");
    let e = error(&toml.replace("fdp_pli = [2, 3]", "fdp_pli = [2, 4]"));
    assert!(e.contains("placement identifier 4"), "{e}");
}

#[test]
fn one_handle_is_the_page_ftl() {
    // One handle, initially isolated: a host frontier and a GC frontier over the same free
    // blocks in the same order, GC by the same threshold: the page FTL with its GC frontier, count
    // for count (timed too: the same operations on the same dies).
    for mode in ["counts", "timed"] {
        let base = format!(
            "[workload]\nkind = \"zipf\"\nrequests = 30000\nfootprint_bytes = \"8MiB\"\nread_fraction = 0.2\n\
             [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.3\nchannels = 2\n\
             [buffer]\nkind = \"lru\"\nbytes = \"128KiB\"\n[ftl.page]\ngc_free_blocks = 5\n\
             [run]\nmode = \"{mode}\"\nprecondition = \"fill-random\"\n"
        );
        let off = run(&base).metrics;
        let on = run(&format!("{base}[fdp]\nenabled = true\nhandles = 1\n")).metrics;
        let mut compared = 0;
        for (k, v) in &off {
            if k.starts_with("nand.")
                || k.starts_with("gc.")
                || k.starts_with("latency.")
                || k == "waf"
            {
                assert_eq!(on[k], *v, "{mode}: {k}");
                compared += 1;
            }
        }
        assert!(
            compared >= 19 && off["gc.moved_pages"] > 0.0,
            "{mode}: {compared} {}",
            off["gc.moved_pages"]
        );
        assert_eq!(on["fdp.waf"], on["waf"]);
    }
}

#[test]
fn a_namespace_s_placement_handles_name_its_reclaim_unit_handles() {
    // Two namespaces, each a flow writing placement handles 0 and 1 in turn (fio's fdp_pli):
    // namespace 0 maps them to RUHs 2 and 3, namespace 1 to RUH 0 twice.
    let flow = |ns: u32, list: &str| {
        format!(
            "[[flows]]\nqueue_depth = 4\nnamespace = {ns}\nplacement_handles = {list}\n\
             [flows.workload]\nkind = \"fio\"\nrequests = 4000\nfootprint_bytes = \"2MiB\"\n\
             [flows.workload.fio]\nrw = \"randwrite\"\nfdp_pli = [0, 1]\n"
        )
    };
    let base = "[device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.5\n\
                [buffer]\nkind = \"none\"\n[run]\nmode = \"timed\"\nprecondition = \"none\"\n\
                [fdp]\nenabled = true\nhandles = 4\n";
    let toml = format!("{base}{}{}", flow(0, "[2, 3]"), flow(1, "[0, 0]"));
    let m = run(&toml).metrics;
    let host = |h: u32| m[&format!("fdp.handle.{h}.host_bytes_written")] / PAGE as f64;
    assert_eq!((host(0), host(1)), (4000.0, 0.0));
    assert!((host(2) - host(3)).abs() <= 1.0 && host(2) + host(3) == 4000.0);
    // A handle the list lacks, a RUH the device lacks, two lists for one namespace.
    let e = error(&format!("{base}{}", flow(0, "[2]")));
    assert!(
        e.contains("flows[0].placement_handles") && e.contains("placement handle 1"),
        "{e}"
    );
    let e = error(&format!("{base}{}", flow(0, "[2, 4]")));
    assert!(
        e.contains("flows[0].placement_handles") && e.contains("beyond fdp.handles"),
        "{e}"
    );
    let e = error(&format!("{base}{}{}", flow(0, "[2, 3]"), flow(0, "[0, 1]")));
    assert!(
        e.contains("flows[1].placement_handles") && e.contains("another list"),
        "{e}"
    );
}

#[test]
fn a_synthetic_workload_s_streams_are_its_identifiers() {
    // `workload.placement_ids = "streams"`: each write carries its sequential stream's index,
    // so handle h receives exactly the pages the generator drew for stream h (counted here from
    // the generator itself), and the fourth handle none.
    let toml = "[workload]\nkind = \"sequential\"\nstreams = 3\nrequests = 20000\n\
                footprint_bytes = \"8MiB\"\nplacement_ids = \"streams\"\n\
                [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.5\n\
                [buffer]\nkind = \"none\"\n[run]\nprecondition = \"none\"\ncheck_integrity = true\n\
                [fdp]\nenabled = true\nhandles = 4\n";
    let cfg = ssdlab_core::Config::from_toml_str(toml).unwrap();
    let seed = cfg.workload.seed.unwrap_or(cfg.run.seed);
    let mut drawn = [0.0f64; 4];
    for r in ssdlab_core::synth::Synth::new(&cfg.workload, seed).unwrap() {
        let r = r.unwrap();
        assert_eq!(r.placement_id as u32, r.dev);
        drawn[r.dev as usize] += (r.len_bytes / PAGE) as f64;
    }
    let m = run(toml).metrics;
    for (h, pages) in drawn.iter().enumerate() {
        assert_eq!(
            m[&format!("fdp.handle.{h}.host_bytes_written")] / PAGE as f64,
            *pages
        );
    }
    assert!(drawn[..3].iter().all(|&p| p > 6000.0), "{drawn:?}");
    // Neither an MSR trace nor the binary cache holds an identifier: writing one is refused.
    let dir = std::env::temp_dir().join(format!("ssdlab-fdp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for format in ["msr", "binary"] {
        let out = dir.join(format!("streams.{format}"));
        let e = ssdlab_core::synth::generate(&cfg, &out, format)
            .unwrap_err()
            .to_string();
        assert!(e.contains("placement identifier 1") && !out.exists(), "{e}");
    }
    // Without the key every write goes through handle 0.
    let m = run(&toml.replace("placement_ids = \"streams\"\n", "")).metrics;
    assert_eq!(
        m["fdp.handle.0.host_bytes_written"] / PAGE as f64,
        m["host.write_pages"]
    );
    // The desktop profile's sequential bursts are stream 1.
    let desktop = toml.replace("kind = \"sequential\"\nstreams = 3", "kind = \"desktop\"");
    let m = run(&desktop).metrics;
    let host = |h: u32| m[&format!("fdp.handle.{h}.host_bytes_written")] / PAGE as f64;
    assert!(
        host(0) > 0.0 && host(1) > 0.0 && host(2) == 0.0,
        "{}",
        host(1)
    );
    assert_eq!(host(0) + host(1), m["host.write_pages"]);
    // Too many streams for the handles, another source of identifiers, a trace, a bad value.
    let e = error(&toml.replace("streams = 3", "streams = 5"));
    assert!(e.contains("placement identifier 4"), "{e}");
    for (from, to, says) in [
        ("kind = \"sequential\"", "kind = \"cachelib\"", "cachelib"),
        (
            "[device]",
            "[workload.fio]\nfdp_pli = [1]\n[device]",
            "fdp_pli",
        ),
        (
            "placement_ids = \"streams\"",
            "placement_ids = \"jobs\"",
            "jobs",
        ),
    ] {
        let e = error(&toml.replace(from, to));
        assert!(
            e.contains("workload.placement_ids") && e.contains(says),
            "{to}: {e}"
        );
    }
    let path = trace("streams-trace", &[(0, 0)]);
    let e = error(&config(&path, "").replace(
        "format = \"generic\"\n",
        "format = \"generic\"\nplacement_ids = \"streams\"\n",
    ));
    assert!(
        e.contains("workload.placement_ids") && e.contains("placement_id_col"),
        "{e}"
    );
}

/// A generic-format trace of single-page writes `(time in seconds, lpn, placement identifier)`.
fn timed_trace(name: &str, writes: &[(f64, u64, u16)]) -> PathBuf {
    let path = trace(name, &[]);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for (t, lpn, pid) in writes {
        writeln!(f, "w,{},{PAGE},{pid},{}", lpn * PAGE, t * 1e6).unwrap();
    }
    path
}

#[test]
fn an_ru_open_past_the_time_limit_is_switched_not_fully_written() {
    // Limit 1 s, RUs of one 8-page block. Handle 0's first RU (opened at 0 s, two pages) has
    // expired by its write at 1.5 s: switched with 6 pages unwritten. Handle 1 opens at 1.6 s;
    // at 2.6 s both handle 0's second RU (opened 1.5 s) and handle 1's (1.6 s) have expired, two
    // pages each: 3 events, 18 pages unwritten. Nothing moves; the write at 2.4 s does not switch.
    let w = [
        (0.0, 0, 0),
        (0.5, 1, 0),
        (1.5, 2, 0),
        (1.6, 3, 1),
        (2.4, 4, 0),
        (2.5, 5, 1),
        (2.6, 6, 0),
    ];
    let path = timed_trace("time-limit", &w);
    let toml = config(
        &path,
        "[fdp]\nenabled = true\nhandles = 2\nru_time_limit_s = 1.0\n",
    )
    .replace(
        "placement_id_col = 3\n",
        "placement_id_col = 3\ntime_col = 4\n",
    );
    let m = run(&toml).metrics;
    assert_eq!(m["fdp.events.ru_not_fully_written"], 3.0);
    assert_eq!(m["fdp.events.ru_unwritten_bytes"], (18 * PAGE) as f64);
    assert_eq!(m["fdp.waf"], 1.0);
    // The open RUs after the last write: handle 0's holds one page (7 left), handle 1's none.
    assert_eq!(m["fdp.handle.0.ru_remaining_bytes"], (7 * PAGE) as f64);
    assert_eq!(m["fdp.handle.1.ru_remaining_bytes"], 0.0);
    // Without the limit nothing is switched: three RUs' pages all go to two units.
    let m = run(&toml.replace("ru_time_limit_s = 1.0\n", "")).metrics;
    assert_eq!(m["fdp.events.ru_not_fully_written"], 0.0);
    assert_eq!(m["fdp.handle.0.ru_remaining_bytes"], (3 * PAGE) as f64);
    let e = error(&toml.replace("ru_time_limit_s = 1.0", "ru_time_limit_s = -1.0"));
    assert!(e.contains("fdp.ru_time_limit_s"), "{e}");

    // Under GC: one handle writing a page every 0.3 s, switched every 4 pages, four of five
    // writes to 48 hot pages and one to 16 cold ones; the half-written RUs are reclaimed like
    // any (their valid pages moved), and every mapping checks out.
    let lpn = |i: u64| {
        if i % 5 == 4 {
            48 + (i / 5) % 16
        } else {
            i % 48
        }
    };
    let w: Vec<_> = (0..64 * 8).map(|i| (i as f64 * 0.3, lpn(i), 0)).collect();
    let path = timed_trace("time-limit-gc", &w);
    let toml = config(
        &path,
        "[fdp]\nenabled = true\nhandles = 1\nru_time_limit_s = 1.0\n",
    )
    .replace(
        "placement_id_col = 3\n",
        "placement_id_col = 3\ntime_col = 4\n",
    )
    .replace("op = 1.25", "op = 2.0");
    let m = run(&toml).metrics;
    let events = m["fdp.events.ru_not_fully_written"];
    assert!(events > 100.0, "{events}");
    // Every RU opened at 0.3 s steps holds 4 pages when it expires (1.2 s ≥ 1 s): 4 unwritten.
    assert_eq!(
        m["fdp.events.ru_unwritten_bytes"],
        events * (4 * PAGE) as f64
    );
    assert!(m["gc.victims"] > 50.0 && m["gc.moved_pages"] > 0.0, "{m:?}");
    assert_eq!(
        m["fdp.mbmw_bytes"],
        (m["host.write_pages"] + m["gc.moved_pages"]) * PAGE as f64
    );
}
