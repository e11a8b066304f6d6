//! Traces with several volumes (`workload.volumes`): merged they alias, and a run says so;
//! separated each volume has its own range of the device, in the order first seen; `trace
//! info` lists them.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::trace::{self, Format, TraceOptions, Volumes};
use ssdlab_core::{simulate, Config, RunResult};
use std::path::{Path, PathBuf};

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("ssdlab-volumes-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Three MSR writes of offset 4096 on disks 0, 1 and 2.
const THREE_DISKS: &str = "128166385295514663,hm,0,Write,4096,4096,100\n\
                           128166385295514878,hm,1,Write,4096,4096,100\n\
                           128166385295515175,hm,2,Write,4096,4096,100\n";

fn run(path: &Path, extra: &str) -> RunResult {
    let toml = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\n{extra}\n\
         [buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n\
         [device]\nlogical_bytes = \"auto\"\npages_per_block = 16\n",
        path.display()
    );
    simulate(&Config::from_toml_str(&toml).unwrap(), &mut NoProgress).unwrap()
}

/// `msg` holds every one of `parts`.
#[track_caller]
fn assert_contains(msg: &str, parts: &[&str]) {
    for part in parts {
        assert!(msg.contains(part), "{part:?} not in: {msg}");
    }
}

fn volume_warnings(r: &RunResult) -> Vec<&String> {
    r.warnings
        .iter()
        .filter(|w| w.contains("volumes"))
        .collect()
}

#[test]
fn three_disks_alias_when_merged_and_not_when_separate() {
    let d = Dir::new("three");
    let p = d.file("three.csv", THREE_DISKS);
    // Unsaid: merged (the second and third writes hit the first's page), with a warning that
    // names the volumes, their shares and the keys.
    let r = run(&p, "");
    assert!((r.metrics["buffer.page_hit_ratio"] - 2.0 / 3.0).abs() < 1e-12);
    let w = volume_warnings(&r);
    assert_eq!(w.len(), 1, "{:?}", r.warnings);
    assert_contains(
        w[0],
        &[
            "3 volumes",
            "0 (33.3%), 1 (33.3%), 2 (33.3%)",
            "workload.volumes = \"separate\"",
            "workload.device",
        ],
    );
    // Said: merged, no warning; the same numbers.
    let m = run(&p, "volumes = \"merge\"");
    assert!(volume_warnings(&m).is_empty(), "{:?}", m.warnings);
    assert_eq!(
        m.metrics["buffer.page_hit_ratio"],
        r.metrics["buffer.page_hit_ratio"]
    );
    // Separate: three distinct pages, no hit; the auto-sized device holds three ranges of one
    // logical block (16 pages of 4 KiB) each.
    let s = run(&p, "volumes = \"separate\"");
    assert_eq!(s.metrics["buffer.page_hit_ratio"], 0.0);
    assert_eq!(s.metrics["host.write_pages"], 3.0);
    assert!(volume_warnings(&s).is_empty(), "{:?}", s.warnings);
    let one_block = 16 * 4096;
    let logical = s.config.device.logical_bytes;
    assert!(
        matches!(logical, ssdlab_core::config::Capacity::Bytes(b) if b >= 3 * one_block),
        "{logical:?}"
    );
    // One volume chosen: no warning either.
    let one = run(&p, "device = 1");
    assert!(volume_warnings(&one).is_empty());
    assert_eq!(one.metrics["host.write_pages"], 1.0);
}

#[test]
fn separate_places_volumes_in_first_seen_order_block_aligned() {
    let d = Dir::new("layout");
    // Disk 7 first (ends at 10,000 B), then 3 (ends at 70,000 B), then 7 again.
    let p = d.file(
        "l.csv",
        "1,h,7,Write,0,10000,0\n2,h,3,Read,65536,4464,0\n3,h,7,Write,4096,512,0\n",
    );
    let o = TraceOptions {
        format: Some(Format::Msr),
        volumes: Some(Volumes::Separate),
        volume_align_bytes: 65536,
        ..Default::default()
    };
    let l = trace::volume_layout(&p, &o).unwrap();
    let got: Vec<(u32, u64, u64)> = l
        .iter()
        .map(|v| (v.dev, v.base_bytes, v.span_bytes))
        .collect();
    assert_eq!(got, vec![(7, 0, 65536), (3, 65536, 131072)]);
    let reqs: Vec<(u32, u64)> = trace::open(&p, &o)
        .unwrap()
        .map(|r| r.map(|r| (r.dev, r.offset_bytes)))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(reqs, vec![(7, 0), (3, 65536 + 65536), (7, 4096)]);
    // The reader counts every volume's requests in the order first seen.
    let mut rd = trace::open(&p, &o).unwrap();
    for r in &mut rd {
        r.unwrap();
    }
    let counts: Vec<(u32, u64)> = rd.volumes().iter().map(|c| (c.dev, c.requests)).collect();
    assert_eq!(counts, vec![(7, 2), (3, 1)]);
}

#[test]
fn trace_info_lists_the_volumes() {
    let d = Dir::new("info");
    let p = d.file("three.csv", THREE_DISKS);
    let i = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(i.devices, 3);
    let v: Vec<(u32, u64, u64, u64)> = i
        .volumes
        .iter()
        .map(|v| (v.dev, v.requests, v.footprint_pages, v.max_end_bytes))
        .collect();
    assert_eq!(v, vec![(0, 1, 1, 8192), (1, 1, 1, 8192), (2, 1, 1, 8192)]);
    // The 14 devices of the DiskSim sample: their requests add up to the trace's.
    let ds = traces_dir().join("disksim_ascii_sample/ascii.trace");
    let i = trace::info(&ds, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(i.volumes.len(), 14);
    assert_eq!(
        i.volumes.iter().map(|v| v.requests).sum::<u64>(),
        i.requests
    );
    assert_eq!(
        i.volumes[0].dev, 30,
        "first seen: devno 30 (the file's first line)"
    );
    assert_eq!(
        i.volumes.iter().map(|v| v.max_end_bytes).max(),
        Some(i.max_end_bytes)
    );
}

#[test]
fn separate_volumes_never_alias_on_a_real_trace() {
    // Separated, the DiskSim sample's volumes write more distinct pages than merged, exactly the
    // sum of each volume's own footprint.
    let ds = traces_dir().join("disksim_ascii_sample/ascii.trace");
    let merged = trace::info(&ds, &TraceOptions::default(), 4096).unwrap();
    let separate = trace::info(
        &ds,
        &TraceOptions {
            volumes: Some(Volumes::Separate),
            volume_align_bytes: 4096,
            ..Default::default()
        },
        4096,
    )
    .unwrap();
    let per_volume: u64 = merged.volumes.iter().map(|v| v.footprint_pages).sum();
    assert_eq!(separate.footprint_pages, per_volume);
    assert!(separate.footprint_pages > merged.footprint_pages);
    // Each volume's own figures do not change.
    for (a, b) in merged.volumes.iter().zip(&separate.volumes) {
        assert_eq!(
            (a.dev, a.requests, a.footprint_pages),
            (b.dev, b.requests, b.footprint_pages)
        );
    }
}

#[test]
fn flows_warn_with_their_own_key_and_bad_values_are_named() {
    let d = Dir::new("flows");
    let p = d.file("three.csv", THREE_DISKS);
    let toml = format!(
        "[run]\nmode = \"timed\"\n[device]\nlogical_bytes = \"4MiB\"\npages_per_block = 16\nop = 0.25\n\
         [[flows]]\nqueue_depth = 1\n[flows.workload]\nkind = \"trace\"\npath = \"{0}\"\n\
         [[flows]]\nqueue_depth = 1\n[flows.workload]\nkind = \"trace\"\npath = \"{0}\"\nvolumes = \"separate\"\n",
        p.display()
    );
    let r = simulate(&Config::from_toml_str(&toml).unwrap(), &mut NoProgress).unwrap();
    let w = volume_warnings(&r);
    assert_eq!(w.len(), 1, "{:?}", r.warnings);
    assert!(
        w[0].starts_with("flows[0]: ") && w[0].contains("flows[0].workload.volumes"),
        "{}",
        w[0]
    );
    let e = Config::from_toml_str("[workload]\nvolumes = \"seperate\"\n")
        .and_then(|c| c.validate())
        .unwrap_err()
        .to_string();
    assert_contains(&e, &["workload.volumes", "separate"]);
}
