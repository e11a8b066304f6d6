//! Trace readers: every reference trace of ../shared/traces/MANIFEST.md must give the
//! manifest's figures, and every format, compression and option is checked on small
//! generated files.
//!
//! The reference traces are found at `<CARGO_MANIFEST_DIR>/../../../shared/traces`, or
//! where the environment variable `SSDLAB_TRACES` points.
//!
//! Read-speed measurement (text vs binary, ~5 M records, ignored by default):
//! `cargo test --release -p ssdlab-core --test trace_formats -- --ignored --nocapture read_speed`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ssdlab_core::error::SimError;
use ssdlab_core::trace::{self, Format, GenericSpec, Op, Request, TraceInfo, TraceOptions};

// ---------------------------------------------------------------------------------------
// helpers

/// A fresh directory for one test (removed by `Dir`'s drop).
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "ssdlab-trace-test-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn opts(format: Option<Format>) -> TraceOptions {
    TraceOptions {
        format,
        ..Default::default()
    }
}

/// The generic reader with `spec`.
fn generic_opts(spec: GenericSpec) -> TraceOptions {
    TraceOptions {
        format: Some(Format::Generic),
        generic: Some(spec),
        ..Default::default()
    }
}

fn read_all(path: &Path, o: &TraceOptions) -> Vec<Request> {
    trace::open(path, o)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn req(time_us: f64, op: Op, offset_bytes: u64, len_bytes: u64, dev: u32) -> Request {
    Request::new(time_us, op, offset_bytes, len_bytes, dev)
}

/// Compare requests, allowing float rounding in the time stamps.
/// `r` with the measured latency `us`.
fn measured(r: Request, us: f32) -> Request {
    Request {
        measured_us: us,
        ..r
    }
}

/// [`assert_reqs`], and the measured latencies too.
fn assert_reqs_measured(got: &[Request], want: &[Request]) {
    assert_reqs(got, want);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.measured(), w.measured(), "request {i}: measured latency");
    }
}

fn assert_reqs(got: &[Request], want: &[Request]) {
    assert_eq!(got.len(), want.len(), "request count: got {got:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            (g.op, g.offset_bytes, g.len_bytes, g.dev),
            (w.op, w.offset_bytes, w.len_bytes, w.dev),
            "request {i}"
        );
        let tol = 1e-9 * w.time_us.abs().max(1.0);
        assert!(
            (g.time_us - w.time_us).abs() <= tol,
            "request {i}: time {} != {}",
            g.time_us,
            w.time_us
        );
    }
}

/// `p` is detected as `format` and read with the default options as `want`.
#[track_caller]
fn assert_detected_reads(p: &Path, format: Format, want: &[Request]) {
    assert_eq!(trace::detect(p).unwrap(), format, "{}", p.display());
    assert_reqs(&read_all(p, &TraceOptions::default()), want);
}

/// `msg` holds every one of `parts`.
#[track_caller]
fn assert_contains(msg: &str, parts: &[&str]) {
    for part in parts {
        assert!(msg.contains(part), "{part:?} not in: {msg}");
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn bzip2(data: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A valid zstd frame holding `data` in raw (uncompressed) blocks — ruzstd 0.7 has no
/// encoder, and raw blocks are enough to exercise the decoder path.
fn zstd_raw_frame(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd];
    // Frame header descriptor: 8-byte content size, single segment, no checksum, no dict.
    out.push(0b1110_0000);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    const MAX_BLOCK: usize = 128 * 1024;
    let mut chunks: Vec<&[u8]> = data.chunks(MAX_BLOCK).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let last = chunks.len() - 1;
    for (i, c) in chunks.iter().enumerate() {
        let header = ((c.len() as u32) << 3) | (i == last) as u32; // block type 0 = raw
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(c);
    }
    out
}

fn zstd_skippable_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x50, 0x2a, 0x4d, 0x18];
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

// ---------------------------------------------------------------------------------------
// reference traces of the manifest

fn traces_dir() -> PathBuf {
    let dir = match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    };
    assert!(
        dir.join("MANIFEST.md").is_file(),
        "reference traces not found: {} has no MANIFEST.md. The trace tests need the shared \
         traces directory (../shared/traces next to the repository); set SSDLAB_TRACES to its \
         location.",
        dir.display()
    );
    dir
}

/// One trace entry of MANIFEST.md.
#[derive(Debug)]
struct Expected {
    file: String,
    parsed_as: String,
    requests: u64,
    reads: u64,
    writes: u64,
    others: u64,
    write_bytes: u64,
    read_bytes: u64,
    /// None when the manifest prints None (no writes).
    seq: Option<f64>,
    max_end: u64,
    devices: u64,
}

/// The text after `key` in `s` (panics naming the key when absent).
fn after<'a>(s: &'a str, key: &str) -> &'a str {
    let i = s
        .find(key)
        .unwrap_or_else(|| panic!("MANIFEST.md: `{key}` missing in {s:?}"));
    &s[i + key.len()..]
}

/// The leading number of `s`, thousands commas removed.
fn leading_u64(s: &str) -> u64 {
    let digits: String = s
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("MANIFEST.md: no number at {s:?}"))
}

fn parse_manifest(text: &str) -> Vec<Expected> {
    let mut out = Vec::new();
    let mut file: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("- `") {
            if rest.contains("bytes on disk") {
                file = Some(rest[..rest.find('`').unwrap()].to_string());
            }
            continue;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("- parsed as `") {
            let file = file
                .take()
                .unwrap_or_else(|| panic!("MANIFEST.md: `parsed as` without a file: {line}"));
            let parsed_as = rest[..rest.find('`').unwrap()].to_string();
            let requests = leading_u64(after(rest, "**"));
            let rw = after(rest, "R/W = ");
            let reads = leading_u64(rw);
            let writes = leading_u64(after(rw, "/"));
            let head = &rw[..rw.find(';').unwrap()];
            let others = if head.contains("other") {
                leading_u64(after(head, "(+"))
            } else {
                0
            };
            let seq_s = after(rest, "(same dev) = ");
            let seq_s = &seq_s[..seq_s.find(';').unwrap()];
            let seq = if seq_s.trim() == "None" {
                None
            } else {
                Some(seq_s.trim().parse::<f64>().unwrap())
            };
            out.push(Expected {
                file,
                parsed_as,
                requests,
                reads,
                writes,
                others,
                write_bytes: leading_u64(after(rest, "bytes written = ")),
                read_bytes: leading_u64(after(rest, "bytes read = ")),
                seq,
                max_end: leading_u64(after(rest, "max(offset+size) = ")),
                devices: leading_u64(after(rest, "devices/volumes in file = ")),
            });
        }
    }
    out
}

/// The format auto-detection must find. The manifest parses the MQSim file with the
/// DiskSim layout (same columns); the reader detects it as mqsim (integer ns times).
fn expected_format(e: &Expected) -> Format {
    if e.file.ends_with("wsrch-small.trace") {
        return Format::Mqsim;
    }
    let name = e.parsed_as.split('_').next().unwrap();
    Format::from_name(name).unwrap()
}

#[test]
fn manifest_traces_match() {
    let dir = traces_dir();
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).unwrap();
    let entries = parse_manifest(&text);
    assert!(
        entries.len() >= 14,
        "MANIFEST.md: expected at least 14 trace entries, parsed {entries:#?}"
    );
    let mut failures = Vec::new();
    for e in &entries {
        let path = dir.join(&e.file);
        let fmt = trace::detect(&path).unwrap_or_else(|err| panic!("{}: detect: {err}", e.file));
        if fmt != expected_format(e) {
            failures.push(format!(
                "{}: detected {fmt}, expected {}",
                e.file,
                expected_format(e)
            ));
            continue;
        }
        let ti = trace::info(&path, &TraceOptions::default(), 4096)
            .unwrap_or_else(|err| panic!("{}: {err}", e.file));
        let got_seq = (ti.seq_write_fraction * 1e4).round() / 1e4;
        let want_seq = e.seq.unwrap_or(0.0);
        let ok = ti.format == fmt.name()
            && ti.requests == e.requests
            && ti.reads == e.reads
            && ti.writes == e.writes
            && ti.trims == e.others
            && ti.requests == ti.reads + ti.writes + ti.trims
            && ti.read_bytes == e.read_bytes
            && ti.write_bytes == e.write_bytes
            && ti.max_end_bytes == e.max_end
            && (got_seq - want_seq).abs() < 1e-9
            && (e.seq.is_some() || ti.writes == 0)
            && ti.devices == e.devices
            && ti.skipped == 0;
        if !ok {
            failures.push(format!("{}:\n  got      {ti:?}\n  expected {e:?}", e.file));
        }
    }
    assert!(
        failures.is_empty(),
        "manifest mismatches:\n{}",
        failures.join("\n")
    );
}

/// Every file of the shared traces directory is detected as it was before the `linnos` format
/// and the unit check were added (the licence and summary files are refused: no format).
#[test]
fn every_shared_trace_detects_as_before() {
    let dir = traces_dir();
    let table: &[(&str, Option<Format>)] = &[
        ("blkreplay_1and1/COPYING.blkreplay", None),
        ("blkreplay_1and1/linux-mysql.load.gz", Some(Format::Blkreplay)),
        ("blkreplay_1and1/linux-webserver-2.load.gz", Some(Format::Blkreplay)),
        ("blkreplay_1and1/windows-mssql.load.gz", Some(Format::Blkreplay)),
        ("blkreplay_1and1/windows-shared-server.load.gz", Some(Format::Blkreplay)),
        ("caffeine_msr_hm0_sample/msr-cambridge1-sample.csv", Some(Format::Msr)),
        ("caffeine_systor17_sample/systor17-additional-sample.csv.gz", Some(Format::Systor)),
        ("caffeine_systor17_sample/systor17-traces-sample.csv.gz", Some(Format::Systor)),
        ("cloudphysics/cloudPhysicsIO.csv", Some(Format::Cloudphysics)),
        ("cloudphysics/cloudPhysicsIO.vscsi", Some(Format::Vscsi)),
        ("disksim_ascii_sample/ascii.trace", Some(Format::Disksim)),
        ("flashnet_tencent_nvme/COPYING", None),
        ("flashnet_tencent_nvme/tencent.cut.per_50k.rw_60_40.490.trace", Some(Format::Flashnet)),
        ("flashnet_tencent_nvme/tencent.cut.per_50k.rw_60_40.490.trace.stats", None),
        ("mqsim_wsrch/wsrch-small.trace", Some(Format::Mqsim)),
        ("msn_fs/MSN-FS-30s-ms", Some(Format::Disksim)),
        ("wiscsee_sqlite_blkparse/blkparse-output.txt", Some(Format::Blkparse)),
        (
            "wiscsee_sqlite_blkparse/sqlitewal-reqscale-240000-inserts.blkparse-events-for-ftlsim.txt",
            Some(Format::Wiscsee),
        ),
        (
            "wiscsee_sqlite_blkparse/sqlitewal-update.blkparse-events-for-ftlsim.txt",
            Some(Format::Wiscsee),
        ),
    ];
    let mut failures = Vec::new();
    for (file, want) in table {
        let got = trace::detect(&dir.join(file));
        match (&got, want) {
            (Ok(f), Some(w)) if f == w => {}
            (Err(SimError::Invalid(_)), None) => {}
            _ => failures.push(format!("{file}: detected {got:?}, expected {want:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn manifest_trace_binary_round_trip() {
    // The multi-device DiskSim sample through the binary cache: same requests, same info.
    let src = traces_dir().join("disksim_ascii_sample/ascii.trace");
    let d = Dir::new("manifest-bin");
    let out = d.path("ascii.ssdt");
    let n = trace::convert(&src, &TraceOptions::default(), &out).unwrap();
    assert_eq!(n, 100_000);
    assert_eq!(trace::detect(&out).unwrap(), Format::Binary);
    let a = read_all(&src, &TraceOptions::default());
    let b = read_all(&out, &TraceOptions::default());
    assert_eq!(a, b);
    let ia = trace::info(&src, &TraceOptions::default(), 4096).unwrap();
    let ib = trace::info(&out, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(ib.format, "binary");
    assert_eq!(
        TraceInfo {
            format: String::new(),
            ..ia
        },
        TraceInfo {
            format: String::new(),
            ..ib
        }
    );
}

// ---------------------------------------------------------------------------------------
// every format on small files

/// (format, file content, expected requests)
fn format_cases() -> Vec<(Format, &'static str, Vec<Request>)> {
    let unix_us = |filetime: u64| (filetime - 116_444_736_000_000_000) as f64 / 10.0;
    vec![
        (
            Format::Msr,
            "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295515175,hm,1,read,5548077056,4096,2320\n",
            vec![
                measured(req(unix_us(128166385295514663), Op::Write, 9056014336, 2048, 0), 283.3),
                measured(req(unix_us(128166385295515175), Op::Read, 5548077056, 4096, 1), 232.0),
            ],
        ),
        (
            Format::Umass,
            "0,20941264,8192,W,0.551706\n1,7,512,r,1.5,extra,fields\n",
            vec![req(551706.0, Op::Write, 20941264 * 512, 8192, 0), req(1.5e6, Op::Read, 7 * 512, 512, 1)],
        ),
        (
            Format::Blkparse,
            "  8,33   4        1     0.000000000  3922  D   N 0 (00 ..) [kworker/u65:0]\n\
             \x20 8,33  30        1     0.001368096  5025  D   R 540544 + 8 [systemd-udevd]\n\
             \x20 8,33  30        2     0.001400000  5025  Q   W 1 + 8 [x]\n\
             \x20 8,33  30        3     0.002000000  5025  D  WS 100 + 16 [x]\n\
             \x20 8,33  30        4     0.003000000  5025  D  DS 200 + 8 [x]\n\
             \x20 8,33  30        5     0.004000000  5025  D  FWS [jbd2]\n\
             \x20 8,33  30        6     0.004500000     0  C   R 540544 + 8 [0]\n\
             \x20 8,33  30        7     0.004600000     0  C  WS 100 + 16 [0]\n\
             CPU4 (8,33):\n Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB\n\
             Total (8,33):\nThroughput (R/W): 0KiB/s / 0KiB/s\nEvents (8,33): 677 entries\nSkips: 0 forward (0 -   0.0%)\n",
            vec![
                measured(req(1368.096, Op::Read, 540544 * 512, 4096, 8 * 256 + 33), (4500.0 - 1368.096) as f32),
                measured(req(2000.0, Op::Write, 100 * 512, 8192, 2081), 2600.0),
                req(3000.0, Op::Trim, 200 * 512, 4096, 2081),
            ],
        ),
        (
            Format::Disksim,
            "0.000 5 174224064 16 1\n13.191135\t30\t0\t5\t0\n",
            vec![req(0.0, Op::Read, 174224064 * 512, 8192, 5), req(13191.135, Op::Write, 0, 2560, 30)],
        ),
        (
            Format::Mqsim,
            "11413000 0 657728 16 1\n11565000 1 31244784 64 0\n",
            vec![req(11413.0, Op::Read, 657728 * 512, 8192, 0), req(11565.0, Op::Write, 31244784 * 512, 32768, 1)],
        ),
        (
            Format::Blkreplay,
            "Copyright Someone / Some Company\n\nPLEASE do not edit.\n####\n\
             start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n\
             \x20     0.000000000 ;     37766853 ;   64 ; W ; 0.0 ; 0.0\n\
             \x20     0.449518165 ;     37766917 ;   14 ; R ; 0.0 ; 0.0\n",
            vec![req(0.0, Op::Write, 37766853 * 512, 64 * 512, 0), req(449518.165, Op::Read, 37766917 * 512, 14 * 512, 0)],
        ),
        (
            Format::Tencent,
            "1538323200,100,8,1,1063\n1538323201,0,1,0,7\n",
            vec![req(1538323200e6, Op::Write, 51200, 4096, 1063), req(1538323201e6, Op::Read, 0, 512, 7)],
        ),
        (
            Format::Alibaba,
            "12,W,8192,4096,1577808000000123\n3,r,1048576,512,1577808000000200\n",
            vec![req(1577808000000123.0, Op::Write, 8192, 4096, 12), req(1577808000000200.0, Op::Read, 1048576, 512, 3)],
        ),
        (
            Format::Systor,
            "Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,R,0,899056122368,131072\n\
             1456095145.167685000,0.000106000,W,2,2787503703040,4096\n",
            vec![
                measured(req(1456095145.133076e6, Op::Read, 899056122368, 131072, 0), 806.0),
                measured(req(1456095145.167685e6, Op::Write, 2787503703040, 4096, 2), 106.0),
            ],
        ),
        (
            Format::Flashnet,
            "0.000,120,1,4096,4923392,0.091,4096\n147000.000,2277,0,69632,2809856,147005.484,69632\n",
            vec![
                measured(req(91.0, Op::Read, 4923392, 4096, 0), 120.0),
                measured(req(147005.484e3, Op::Write, 2809856, 69632, 0), 2277.0),
            ],
        ),
        (
            Format::Cloudphysics,
            "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,28,6656,40409911\n1,5633900,88,512,1\n",
            vec![
                req(5633898e6, Op::Write, 42932745 * 512, 512, 0),
                req(5633899e6, Op::Read, 40409911 * 512, 6656, 0),
                req(5633900e6, Op::Read, 512, 512, 0),
            ],
        ),
        (
            Format::Wiscsee,
            "39949 D read 299008 4096 0.000000000 0 False\n0 C read 299008 4096 0.000122793 0.000122793 False\n\
             39949 D write 331776 8192 0.000196695 7.3902e-05 True\n39949 D discard 0 4096 1.5 0 False\n",
            vec![
                req(0.0, Op::Read, 299008, 4096, 0),
                req(196.695, Op::Write, 331776, 8192, 0),
                req(1.5e6, Op::Trim, 0, 4096, 0),
            ],
        ),
    ]
}

#[test]
fn every_format_detected_and_parsed() {
    let d = Dir::new("formats");
    for (fmt, text, want) in format_cases() {
        let p = d.file(&format!("{fmt}.txt"), text.as_bytes());
        assert_eq!(
            trace::detect(&p).unwrap_or_else(|e| panic!("{fmt}: {e}")),
            fmt
        );
        let rd = trace::open(&p, &TraceOptions::default()).unwrap();
        assert_eq!(rd.format(), fmt);
        let got: Vec<Request> = rd
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{fmt}: {e}"));
        assert_reqs_measured(&got, &want);
        // The same with the format given explicitly.
        assert_reqs(&read_all(&p, &opts(Some(fmt))), &want);
    }
}

#[test]
fn every_format_reports_malformed_records() {
    // A bad line in each format: the error names file:line, the format and its layout.
    let bad: [(Format, &str, &str); 12] = [
        (Format::Alibaba, "1,W,0,512,5\n1,W,0,512,-5\n", "timestamp"),
        (
            Format::Msr,
            "1,h,0,Write,12,4096,1\n2,h,0,Write,-12,4096,1\n",
            "Offset",
        ),
        (Format::Umass, "0,1,512,r,0.5\n0,1,512,q,0.5\n", "Opcode"),
        (
            Format::Blkparse,
            "8,0 1 1 0.1 5 D R 8 + 8 [x]\n8,0 1 2 0.2 5 D R 8 - 8 [x]\n",
            "sector + nsectors",
        ),
        (
            Format::Disksim,
            "0.5 0 8 8 1\n0.6 0 8 eight 1\n",
            "size_sectors",
        ),
        (Format::Mqsim, "5 0 8 8 1\n6 0 8 8 7\n", "type"),
        (
            Format::Linnos,
            "0.5 0 4096 4096 1\n0.6 0 4096 4096 r\n",
            "field 5 (op) \"r\"",
        ),
        (
            Format::Blkreplay,
            "start ; sector ; length ; op\n1 ; 2 ; 3 ; W\n1 ; 2 ; 3\n",
            "at least 4",
        ),
        (Format::Tencent, "1,2,3,0,4\n1,2,3,5,4\n", "iotype"),
        (
            Format::Systor,
            "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.1,R,0,1,1\n1.0,0.1,R,x,1,1\n",
            "LUN",
        ),
        (
            Format::Cloudphysics,
            "version,time,op,size,lbn\n1,1,28,512,1\n1,1,35,512,1\n",
            "SCSI opcode",
        ),
        (
            Format::Wiscsee,
            "1 D read 0 4096 0.1 0 False\n1 D read 0 4096 NaN 0 False\n",
            "time",
        ),
    ];
    let d = Dir::new("malformed");
    for (fmt, text, what) in bad {
        let p = d.file(&format!("{fmt}.txt"), text.as_bytes());
        let line = text.lines().count() as u64;
        let mut rd = trace::open(&p, &opts(Some(fmt))).unwrap();
        assert!(rd.next().unwrap().is_ok(), "{fmt}: first record");
        let e = rd.next().unwrap().unwrap_err();
        match &e {
            SimError::Trace { file, line: l, msg } => {
                assert_eq!(file, &p.display().to_string());
                assert_eq!(*l, line, "{fmt}: {msg}");
                assert!(
                    msg.contains(fmt.name()) && msg.contains(fmt.layout()) && msg.contains(what),
                    "{fmt}: {msg}"
                );
            }
            other => panic!("{fmt}: expected a trace error, got {other:?}"),
        }
        assert!(
            e.to_string()
                .starts_with(&format!("{}:{line}: ", p.display())),
            "{e}"
        );
        assert!(
            rd.next().is_none(),
            "{fmt}: the reader stops after an error"
        );
    }
}

#[test]
fn generic_sectors_and_nanoseconds() {
    let d = Dir::new("generic");
    let p = d.file(
        "g.txt",
        b"time_ns\tdev\top\tsector\tcount\n# comment\n1500\t3\tWR\t8\t16\n2000000\t4\t rd \t0\t1\n\n3000\t3\ttrim\t16\t8\n",
    );
    let spec = GenericSpec {
        read_codes: vec!["RD".into()],
        write_codes: vec!["wr".into()],
        trim_codes: vec!["TRIM".into()],
        ..GenericSpec::ns_sectors("\t")
    };
    let o = generic_opts(spec.clone());
    assert_reqs(
        &read_all(&p, &o),
        &[
            req(1.5, Op::Write, 4096, 8192, 3),
            req(2000.0, Op::Read, 0, 512, 4),
            req(3.0, Op::Trim, 8192, 4096, 3),
        ],
    );
    // Whitespace delimiter, 4K blocks, seconds, no time and no dev columns.
    let p2 = d.file("g2.txt", b"w 1 2\n  r   3 1\n");
    let spec2 = GenericSpec {
        delimiter: "whitespace".into(),
        offset_unit_bytes: 4096,
        ..Default::default()
    };
    let o2 = generic_opts(spec2);
    assert_reqs(
        &read_all(&p2, &o2),
        &[
            req(0.0, Op::Write, 4096, 2, 0),
            req(0.0, Op::Read, 12288, 1, 0),
        ],
    );
    // Without a spec, or with an invalid one: a config error naming the field.
    let e = trace::open(&p, &opts(Some(Format::Generic))).err().unwrap();
    assert!(
        matches!(e, SimError::Config { ref field, .. } if field == "generic"),
        "{e:?}"
    );
    let bad = generic_opts(GenericSpec {
        size_unit_bytes: 0,
        ..spec
    });
    let e = trace::open(&p, &bad).err().unwrap();
    assert!(
        matches!(e, SimError::Config { ref field, .. } if field == "generic.size_unit_bytes"),
        "{e:?}"
    );
    // A spec from TOML with defaults.
    let s: GenericSpec =
        toml::from_str("op_col = 0\noffset_col = 1\nsize_col = 2\ndelimiter = \";\"").unwrap();
    assert_eq!(
        (s.delimiter.as_str(), s.offset_unit_bytes, s.time_unit_us),
        (";", 1, 1.0)
    );
    assert_eq!(s.read_codes, vec!["r".to_string(), "read".to_string()]);
}

#[test]
fn compressed_inputs() {
    let d = Dir::new("compressed");
    let (_, text, want) = format_cases()
        .into_iter()
        .find(|c| c.0 == Format::Blkreplay)
        .unwrap();
    let raw = text.as_bytes();
    let (a, b) = raw.split_at(raw.len() / 2);
    let mut multi_gz = gzip(a);
    multi_gz.extend(gzip(b));
    let mut multi_bz = bzip2(a);
    multi_bz.extend(bzip2(b));
    let mut multi_zst = zstd_skippable_frame(b"ignored");
    multi_zst.extend(zstd_raw_frame(a));
    multi_zst.extend(zstd_skippable_frame(b""));
    multi_zst.extend(zstd_raw_frame(b));
    let files = [
        ("t.load.gz", gzip(raw)),
        ("t.load.bz2", bzip2(raw)),
        ("t.load.zst", zstd_raw_frame(raw)),
        // Misleading or missing extensions: the magic decides.
        ("t.load", gzip(raw)),
        ("t.txt.gz", bzip2(raw)),
        ("multi.gz", multi_gz),
        ("multi.bz2", multi_bz),
        ("multi.zst", multi_zst),
    ];
    for (name, bytes) in files {
        let p = d.file(name, &bytes);
        assert_eq!(
            trace::detect(&p).unwrap_or_else(|e| panic!("{name}: {e}")),
            Format::Blkreplay,
            "{name}"
        );
        assert_reqs(&read_all(&p, &TraceOptions::default()), &want);
    }
    // A longer zstd stream spanning several blocks.
    let mut big = String::new();
    for i in 0..20_000u64 {
        big.push_str(&format!("{i}.5 {} {} 8 {}\n", i % 3, i * 8, i % 2));
    }
    let p = d.file("big.zst", &zstd_raw_frame(big.as_bytes()));
    let ti = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (ti.format.as_str(), ti.requests, ti.reads, ti.devices),
        ("disksim", 20_000, 10_000, 3)
    );
    // A corrupt stream is an I/O error naming the file.
    let mut broken = gzip(big.as_bytes());
    broken.truncate(broken.len() / 2);
    let p = d.file("broken.gz", &broken);
    let e = trace::open(&p, &opts(Some(Format::Disksim)))
        .unwrap()
        .find_map(|r| r.err())
        .unwrap();
    assert!(
        matches!(e, SimError::Io { ref path, .. } if path == &p.display().to_string()),
        "{e:?}"
    );
}

#[test]
fn device_filter() {
    let d = Dir::new("device");
    let p = d.file(
        "t.trace",
        b"0.1 1 0 8 0\n0.2 2 8 8 0\n0.3 1 8 8 0\n0.4 2 0 8 1\n",
    );
    let o = TraceOptions {
        device: Some(2),
        ..Default::default()
    };
    assert_reqs(
        &read_all(&p, &o),
        &[
            req(200.0, Op::Write, 4096, 4096, 2),
            req(400.0, Op::Read, 0, 4096, 2),
        ],
    );
    let ti = trace::info(&p, &o, 4096).unwrap();
    assert_eq!(
        (
            ti.requests,
            ti.writes,
            ti.reads,
            ti.devices,
            ti.max_end_bytes
        ),
        (2, 1, 1, 1, 8192)
    );
    let all = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (all.requests, all.devices, all.seq_write_fraction),
        (4, 2, 1.0 / 3.0)
    );
    // A device that is not in the trace: an empty trace, not an error.
    let none = trace::info(
        &p,
        &TraceOptions {
            device: Some(9),
            ..Default::default()
        },
        4096,
    )
    .unwrap();
    assert_eq!(
        none,
        TraceInfo {
            format: "disksim".into(),
            ..Default::default()
        }
    );
}

#[test]
fn skip_invalid_counts() {
    let d = Dir::new("skip");
    let p = d.file(
        "t.csv",
        b"128166385295514663,hm,0,Write,0,4096,1\nbroken line\n128166385295514663,hm,0,Write,-1,4096,1\n\
          128166385295514663,hm,0,Read,4096,4096,1\n\xff\xfe,hm,0,Read,0,1,1\n",
    );
    let o = TraceOptions {
        format: Some(Format::Msr),
        skip_invalid: true,
        ..Default::default()
    };
    let mut rd = trace::open(&p, &o).unwrap();
    let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(rd.skipped(), 3);
    assert_eq!(rd.line(), 5);
    let first = rd.first_skipped().unwrap();
    assert!(
        first.starts_with(&format!("{}:2: malformed msr record", p.display())),
        "{first}"
    );
    let ti = trace::info(&p, &o, 4096).unwrap();
    assert_eq!((ti.requests, ti.skipped), (2, 3));
    // Without skip_invalid the first bad line fails.
    let e = trace::info(&p, &opts(Some(Format::Msr)), 4096).unwrap_err();
    assert!(matches!(e, SimError::Trace { line: 2, .. }), "{e:?}");
}

#[test]
fn errors_and_edge_cases() {
    let d = Dir::new("edges");
    // Missing file: an I/O error naming the path.
    let missing = d.path("nope.trace");
    for e in [
        trace::open(&missing, &TraceOptions::default())
            .err()
            .unwrap(),
        trace::detect(&missing).unwrap_err(),
    ] {
        assert!(
            matches!(e, SimError::Io { ref path, .. } if path == &missing.display().to_string()),
            "{e:?}"
        );
    }
    // Empty trace with a given format: zero counts, not an error.
    let empty = d.file("empty.csv", b"");
    assert_eq!(
        trace::info(&empty, &opts(Some(Format::Msr)), 4096).unwrap(),
        TraceInfo {
            format: "msr".into(),
            ..Default::default()
        }
    );
    let header_only = d.file("h.csv", b"Timestamp,Response,IOType,LUN,Offset,Size\n");
    assert_eq!(
        trace::info(&header_only, &opts(Some(Format::Systor)), 4096)
            .unwrap()
            .requests,
        0
    );
    // Auto-detection of an empty file asks for the format.
    let e = trace::detect(&empty).unwrap_err().to_string();
    assert_contains(&e, &["no record", "format"]);
    // Windows line ends and a UTF-8 byte-order mark.
    let crlf = d.file(
        "crlf.csv",
        "\u{feff}Timestamp,Response,IOType,LUN,Offset,Size\r\n1.5,0.1,W,0,4096,512\r\n\r\n"
            .as_bytes(),
    );
    assert_eq!(trace::detect(&crlf).unwrap(), Format::Systor);
    assert_reqs(
        &read_all(&crlf, &TraceOptions::default()),
        &[req(1.5e6, Op::Write, 4096, 512, 0)],
    );
    // An overlong line is one malformed record, not a whole file in memory.
    let mut long = b"1 0 0 8 0\n".to_vec();
    long.extend(std::iter::repeat_n(b'7', 3 << 20));
    long.extend_from_slice(b"\n2 0 8 8 1\n");
    let p = d.file("long.trace", &long);
    let o = TraceOptions {
        format: Some(Format::Disksim),
        skip_invalid: true,
        ..Default::default()
    };
    let mut rd = trace::open(&p, &o).unwrap();
    assert_eq!(rd.by_ref().count(), 2);
    assert_eq!((rd.skipped(), rd.line()), (1, 3));
    assert!(rd.first_skipped().unwrap().contains("longer than 1 MiB"));
    // Zero-length requests count.
    let z = d.file("z.trace", b"1 0 0 0 0\n2 0 8 0 1\n");
    let ti = trace::info(&z, &opts(Some(Format::Disksim)), 4096).unwrap();
    assert_eq!(
        (
            ti.requests,
            ti.writes,
            ti.reads,
            ti.write_bytes,
            ti.footprint_pages
        ),
        (2, 1, 1, 0, 0)
    );
    // Negative and non-numeric fields.
    for (text, what) in [
        ("-1 0 0 8 0\n", "negative"),
        ("1 0 x 8 0\n", "start_sector"),
        ("1 -2 0 8 0\n", "devno"),
    ] {
        let p = d.file("n.trace", text.as_bytes());
        let e = trace::open(&p, &opts(Some(Format::Disksim)))
            .unwrap()
            .next()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert_contains(&e, &[what, ":1: "]);
    }
    // Unknown format names and blkparse actions.
    let e = Format::from_name("foo").unwrap_err().to_string();
    assert!(Format::all().iter().all(|f| e.contains(f.name())), "{e}");
    let o = TraceOptions {
        blkparse_action: Some('X'),
        ..Default::default()
    };
    assert!(
        matches!(trace::open(&z, &o).err().unwrap(), SimError::Config { ref field, .. } if field == "blkparse_action")
    );
    // Offsets that overflow.
    let p = d.file(
        "o.trace",
        format!("1 0 {} 8 0\n", u64::MAX / 512).as_bytes(),
    );
    assert!(trace::open(&p, &opts(Some(Format::Disksim)))
        .unwrap()
        .next()
        .unwrap()
        .is_err());
}

#[test]
fn info_figures() {
    let d = Dir::new("info");
    // dev 0 writes [0,4096), [4096,12288) (sequential), [0,1) (page 0 again); dev 1 writes
    // [12288,16384): the first write of dev 1 is not sequential although it starts where
    // dev 0's write ended. 4 KiB pages written: 0, 1, 2, 3.
    let p = d.file(
        "t.csv",
        b"0,0,4096,w,1.0\n0,8,8192,w,2.0\n0,0,1,w,3.0\n1,24,4096,w,4.0\n0,0,100,r,5.0\n",
    );
    let ti = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(ti.format, "umass");
    assert_eq!((ti.requests, ti.writes, ti.reads, ti.trims), (5, 4, 1, 0));
    assert_eq!(
        (ti.write_bytes, ti.read_bytes),
        (4096 + 8192 + 1 + 4096, 100)
    );
    assert_eq!(ti.footprint_pages, 4);
    assert_eq!(ti.max_end_bytes, 12288 + 4096);
    assert_eq!(ti.seq_write_fraction, 0.25);
    assert_eq!(ti.devices, 2);
    assert_eq!((ti.first_time_us, ti.last_time_us), (1e6, 5e6));
    // 512-byte pages.
    assert_eq!(
        trace::info(&p, &TraceOptions::default(), 512)
            .unwrap()
            .footprint_pages,
        8 + 16 + 8
    );
    assert!(trace::info(&p, &TraceOptions::default(), 0).is_err());
}

#[test]
fn blkparse_actions() {
    let d = Dir::new("blkparse");
    let text = "8,0 0 1 0.1 9 Q W 8 + 8 [a]\n8,0 0 2 0.2 9 D W 8 + 8 [a]\n8,0 0 3 0.3 0 C W 8 + 8 [0]\n\
                8,0 0 4 0.4 9 Q R 0 + 8 [a]\n8,0 0 5 0.5 9 C R 0 + 8 [0]\n8,0 0 6 0.6 9 m N cfq schedule\n";
    let p = d.file("b.txt", text.as_bytes());
    let count = |a: Option<char>| {
        let o = TraceOptions {
            blkparse_action: a,
            ..Default::default()
        };
        read_all(&p, &o).len()
    };
    assert_eq!(
        (
            count(None),
            count(Some('D')),
            count(Some('Q')),
            count(Some('c'))
        ),
        (1, 1, 2, 2)
    );
    // No D record: Q by default.
    let q_only: String = text
        .lines()
        .filter(|l| !l.contains(" D "))
        .map(|l| format!("{l}\n"))
        .collect();
    let p2 = d.file("q.txt", q_only.as_bytes());
    assert_eq!(read_all(&p2, &TraceOptions::default()).len(), 2);
}

#[test]
fn detection_messages() {
    let d = Dir::new("detect");
    // Integer times between 1e3 and 1e6 fit both disksim (ms) and mqsim (ns).
    let p = d.file("amb.trace", b"5000 0 8 8 0\n6000 1 16 8 1\n7000 0 24 8 0\n");
    let e = trace::detect(&p).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, SimError::Invalid(_)), "{e:?}");
    assert_contains(&m, &["ambiguous", "disksim", "mqsim", "--format"]);
    assert!(trace::open(&p, &TraceOptions::default()).is_err());
    assert_eq!(read_all(&p, &opts(Some(Format::Mqsim))).len(), 3);
    // Float ms → disksim, large integer ns → mqsim.
    let p = d.file("ms.trace", b"5000.5 0 8 8 0\n6000 1 16 8 1\n");
    assert_eq!(trace::detect(&p).unwrap(), Format::Disksim);
    let p = d.file("ns.trace", b"5000000 0 8 8 0\n6000000 1 16 8 1\n");
    assert_eq!(trace::detect(&p).unwrap(), Format::Mqsim);
    // Nothing fits: the message lists the supported formats.
    let p = d.file("junk.txt", b"hello, world\nthis is not a trace\n");
    let m = trace::detect(&p).unwrap_err().to_string();
    for f in [
        "msr",
        "umass",
        "blkparse",
        "disksim",
        "mqsim",
        "blkreplay",
        "tencent",
        "systor",
        "cloudphysics",
        "wiscsee",
    ] {
        assert!(m.contains(f), "{m}");
    }
    assert!(
        m.contains("cannot detect") && m.contains(&p.display().to_string()),
        "{m}"
    );
    // A valid trace with one bad line among the first lines is not detected ...
    let p = d.file(
        "bad.csv",
        b"1538323200,100,8,1,1063\n1538323200,100,8,7,1063\n",
    );
    let m = trace::detect(&p).unwrap_err().to_string();
    assert_contains(&m, &["closest is tencent", "iotype"]);
    // ... but reads with the format given.
    let o = TraceOptions {
        format: Some(Format::Tencent),
        skip_invalid: true,
        ..Default::default()
    };
    assert_eq!(read_all(&p, &o).len(), 1);
}

#[test]
fn binary_round_trip() {
    let d = Dir::new("binary");
    for (fmt, text, _) in format_cases() {
        let src = d.file(&format!("{fmt}.txt"), text.as_bytes());
        let out = d.path(&format!("{fmt}.ssdt"));
        let n = trace::convert(&src, &TraceOptions::default(), &out).unwrap();
        let a = read_all(&src, &TraceOptions::default());
        assert_eq!(n, a.len() as u64);
        assert_eq!(trace::detect(&out).unwrap(), Format::Binary);
        let b = read_all(&out, &TraceOptions::default());
        // The cache keeps no measured latencies (they are read from the original trace).
        let a: Vec<Request> = a.into_iter().map(|r| measured(r, f32::NAN)).collect();
        assert_eq!(a, b, "{fmt}: identical requests, bit for bit");
        assert_eq!(read_all(&out, &opts(Some(Format::Binary))), a);
        let ia = trace::info(&src, &TraceOptions::default(), 4096).unwrap();
        let ib = trace::info(&out, &TraceOptions::default(), 4096).unwrap();
        assert_eq!(
            TraceInfo {
                format: "binary".into(),
                measured_latency: None,
                measured_max_outstanding: None,
                ..ia
            },
            ib,
            "{fmt}"
        );
    }
    // Many records (several read chunks), a device filter applied at conversion and at
    // reading, and a gzip-compressed cache.
    let mut text = String::new();
    for i in 0..150_000u64 {
        text.push_str(&format!(
            "{}.25 {} {} {} {}\n",
            i,
            i % 4,
            i * 3,
            1 + i % 16,
            (i % 3) & 1
        ));
    }
    let src = d.file("many.trace", text.as_bytes());
    let out = d.path("many.ssdt");
    assert_eq!(
        trace::convert(&src, &TraceOptions::default(), &out).unwrap(),
        150_000
    );
    assert_eq!(
        read_all(&out, &TraceOptions::default()),
        read_all(&src, &TraceOptions::default())
    );
    let dev3 = TraceOptions {
        device: Some(3),
        ..Default::default()
    };
    assert_eq!(read_all(&out, &dev3), read_all(&src, &dev3));
    let out3 = d.path("dev3.ssdt");
    assert_eq!(trace::convert(&src, &dev3, &out3).unwrap(), 37_500);
    assert_eq!(
        read_all(&out3, &TraceOptions::default()),
        read_all(&src, &dev3)
    );
    let gz = d.file("many.ssdt.gz", &gzip(&std::fs::read(&out).unwrap()));
    assert_eq!(trace::detect(&gz).unwrap(), Format::Binary);
    assert_eq!(read_all(&gz, &TraceOptions::default()).len(), 150_000);
    // Truncated or foreign files are errors.
    let bytes = std::fs::read(&out).unwrap();
    let cut = d.file("cut.ssdt", &bytes[..bytes.len() - 10]);
    let e = trace::open(&cut, &TraceOptions::default())
        .unwrap()
        .find_map(|r| r.err())
        .unwrap();
    assert!(e.to_string().contains("truncated"), "{e}");
    let e = trace::open(&src, &opts(Some(Format::Binary)))
        .err()
        .unwrap();
    assert!(e.to_string().contains("SSDLTRC1"), "{e}");
    let e = trace::open(&out, &opts(Some(Format::Disksim)))
        .err()
        .unwrap();
    assert!(e.to_string().contains("binary"), "{e}");
    // A request larger than 4 GiB cannot be stored; no file is left behind. (The format is
    // given: sizes that large as sectors could be bytes, which detection does not guess.)
    let huge = d.file("huge.trace", b"1 0 0 16777216 0\n");
    let hout = d.path("huge.ssdt");
    let e = trace::convert(&huge, &opts(Some(Format::Disksim)), &hout).unwrap_err();
    assert!(
        matches!(e, SimError::Trace { line: 1, .. }) && e.to_string().contains("larger"),
        "{e:?}"
    );
    assert!(!hout.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&d.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// ---------------------------------------------------------------------------------------
// traces from the wild: the variants real files come in

/// A hand-written blkparse excerpt in the default output layout with every kind of event
/// blktrace emits: remap `A` with its arrow, `Q G I M F P U UT T S B X`, message lines
/// (`m N ...`), flushes without a range, a second device, events of two CPUs out of time
/// order and the per-CPU summary block at the end.
const BLKPARSE_WILD: &str = "\
  8,0    0        1     0.000000000  1001  A   W 2048 + 8 <- (8,1) 0
  8,0    0        2     0.000001000  1001  Q   W 2048 + 8 [fio]
  8,0    0        3     0.000002000  1001  G   W 2048 + 8 [fio]
  8,0    0        4     0.000002500  1001  P   N [fio]
  8,0    0        5     0.000003000  1001  Q   W 2056 + 8 [fio]
  8,0    0        6     0.000003500  1001  M   W 2056 + 8 [fio]
  8,0    0        7     0.000004000  1001  Q   W 2040 + 8 [fio]
  8,0    0        8     0.000004500  1001  F   W 2040 + 8 [fio]
  8,0    0        9     0.000005000  1001  I   W 2040 + 24 [fio]
  8,0    0       10     0.000005500  1001  U   N [fio] 1
  8,0    0        0     0.000005800     0  m   N cfq1001S / insert_request
  8,0    0       11     0.000006000  1001  D   W 2040 + 24 [fio]
  8,0    1        1     0.000004200  1002  Q   R 512 + 8 [dd]
  8,0    1        2     0.000004300  1002  G   R 512 + 8 [dd]
  8,0    1        3     0.000004400  1002  I   R 512 + 8 [dd]
  8,0    1        4     0.000004800  1002  D   R 512 + 8 [dd]
  8,0    1        5     0.000010000     0  UT  N [kworker/1:1H] 1
  8,16   0        1     0.000050000  1003  D  WS 0 + 8 [jbd2/sdb1-8]
  8,0    0       12     0.000120000     0  C   W 2040 + 24 [0]
  8,0    1        6     0.000090000     0  C   R 512 + 8 [0]
  8,0    1        7     0.000200000  1002  Q FWS [dd]
  8,0    1        8     0.000201000  1002  D FWS [dd]
  8,0    1        9     0.000300000  1004  D  DS 4096 + 2048 [fstrim]
  8,0    1       10     0.000400000  1001  X   W 8192 / 8200 [fio]
  8,0    1       11     0.000500000  1001  S   W 100 + 8 [fio]
  8,0    1       12     0.000600000  1001  T   N [fio] 2
  8,0    1       13     0.000700000  1001  B   W 100 + 8 [fio]
  8,0    1        0     0.000800000     0  m   N cfq schedule dispatch
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           3,       12KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,       12KiB
 Reads Requeued:         0\t\t Writes Requeued:         0
 Reads Completed:        0,        0KiB\t Writes Completed:        1,       12KiB
 Read Merges:            0,        0KiB\t Write Merges:            2,        8KiB
 Read depth:             1        \t Write depth:             1
 IO unplugs:             1        \t Timer unplugs:           0
CPU1 (8,0):
 Reads Queued:           1,        4KiB\t Writes Queued:           0,        0KiB
 Read Dispatches:        1,        4KiB\t Write Dispatches:        0,        0KiB
 IO unplugs:             0        \t Timer unplugs:           1

Total (8,0):
 Reads Queued:           1,        4KiB\t Writes Queued:           3,       12KiB
 IO unplugs:             1        \t Timer unplugs:           1

Throughput (R/W): 40KiB/s / 120KiB/s
Events (8,0): 28 entries
Skips: 0 forward (0 -   0.0%)
";

fn blkparse_reader(p: &Path, action: Option<char>) -> trace::TraceReader {
    trace::open(
        p,
        &TraceOptions {
            blkparse_action: action,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn blkparse_every_action_and_out_of_order_cpus() {
    let d = Dir::new("blkparse-wild");
    let p = d.file("wild.blkparse", BLKPARSE_WILD.as_bytes());
    assert_eq!(trace::detect(&p).unwrap(), Format::Blkparse);
    let sdb = 8 * 256 + 16;
    // D (the default: the file has D records): CPU1's read at 4.8 µs comes before CPU0's
    // write at 6 µs; the flush (no range) and every other action are skipped.
    let mut rd = blkparse_reader(&p, None);
    let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_reqs(
        &got,
        &[
            req(4.8, Op::Read, 512 * 512, 4096, 2048),
            req(6.0, Op::Write, 2040 * 512, 24 * 512, 2048),
            req(50.0, Op::Write, 0, 4096, sdb),
            req(300.0, Op::Trim, 4096 * 512, 2048 * 512, 2048),
        ],
    );
    assert_eq!((rd.late(), rd.skipped()), (0, 0));
    // Q: the four queued requests (the flush has no range).
    let got: Vec<Request> = blkparse_reader(&p, Some('Q'))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_reqs(
        &got,
        &[
            req(1.0, Op::Write, 2048 * 512, 4096, 2048),
            req(3.0, Op::Write, 2056 * 512, 4096, 2048),
            req(4.0, Op::Write, 2040 * 512, 4096, 2048),
            req(4.2, Op::Read, 512 * 512, 4096, 2048),
        ],
    );
    // C: CPU1's completion at 90 µs is written after CPU0's at 120 µs.
    let got: Vec<Request> = blkparse_reader(&p, Some('C'))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_reqs(
        &got,
        &[
            req(90.0, Op::Read, 512 * 512, 4096, 2048),
            req(120.0, Op::Write, 2040 * 512, 24 * 512, 2048),
        ],
    );
    // A window of one request cannot repair the order: file order, and the late request
    // is counted.
    let mut rd = blkparse_reader(&p, Some('C')).with_reorder_window(1);
    let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        got.iter().map(|r| r.time_us).collect::<Vec<_>>(),
        vec![120.0, 90.0]
    );
    assert_eq!(rd.late(), 1);
    // trace info over the same file.
    let ti = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (
            ti.format.as_str(),
            ti.requests,
            ti.reads,
            ti.writes,
            ti.trims,
            ti.devices,
            ti.late
        ),
        ("blkparse", 4, 1, 2, 1, 2, 0)
    );
}

#[test]
fn blkparse_without_summary_and_errors_after_reordered_requests() {
    let d = Dir::new("blkparse-nosum");
    // The excerpt cut before the summary block (blkparse -q, or a truncated capture).
    let body: String = BLKPARSE_WILD
        .lines()
        .take_while(|l| !l.starts_with("CPU0"))
        .map(|l| format!("{l}\n"))
        .collect();
    let p = d.file("nosum.txt", body.as_bytes());
    assert_eq!(trace::detect(&p).unwrap(), Format::Blkparse);
    let got = read_all(&p, &TraceOptions::default());
    assert_eq!(
        got.iter().map(|r| r.time_us).collect::<Vec<_>>(),
        vec![4.8, 6.0, 50.0, 300.0]
    );
    // A malformed record after reordered ones: the requests read before it come first
    // (in time order), then the error names its line, field and value.
    let bad =
        "8,0 0 1 0.2 5 D W 8 + 8 [a]\n8,0 1 1 0.1 6 D R 0 + 8 [b]\n8,0 1 2 0.3 6 D R 0 + x8 [b]\n";
    let p = d.file("bad.txt", bad.as_bytes());
    let mut rd = trace::open(&p, &opts(Some(Format::Blkparse))).unwrap();
    assert_eq!(rd.next().unwrap().unwrap().time_us, 0.1e6);
    assert_eq!(rd.next().unwrap().unwrap().time_us, 0.2e6);
    let e = rd.next().unwrap().unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:3: ", p.display()))
            && e.contains("nsectors")
            && e.contains("\"x8\""),
        "{e}"
    );
    assert!(rd.next().is_none());
    // An action field that is no action name is malformed; any letters are an action.
    let p = d.file(
        "act.txt",
        b"8,0 0 1 0.1 5 D W 8 + 8 [a]\n8,0 0 2 0.2 5 Q2 W 8 + 8 [a]\n",
    );
    assert_contains(
        &read_err(&p, Format::Blkparse),
        &[":2: ", "field 6 (action) \"Q2\""],
    );
}

#[test]
fn msr_with_and_without_header() {
    let d = Dir::new("msr-variants");
    let rows = "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295515175,hm,1,Read,5548077056,4096,\n";
    let unix_us = |filetime: u64| (filetime - 116_444_736_000_000_000) as f64 / 10.0;
    let want = [
        req(unix_us(128166385295514663), Op::Write, 9056014336, 2048, 0),
        req(unix_us(128166385295515175), Op::Read, 5548077056, 4096, 1),
    ];
    let plain = d.file("plain.csv", rows.as_bytes());
    let headed = d.file(
        "headed.csv",
        format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{rows}").as_bytes(),
    );
    for p in [plain, headed] {
        assert_detected_reads(&p, Format::Msr, &want);
    }
}

#[test]
fn spc_extra_columns() {
    let d = Dir::new("spc");
    let p = d.file(
        "fin.spc",
        b"0,20941264,8192,W,0.551706,Financial1\n1,7,512,r,1.5,x,y,z\n2,3,4096,R,2.25\n",
    );
    assert_detected_reads(
        &p,
        Format::Umass,
        &[
            req(551706.0, Op::Write, 20941264 * 512, 8192, 0),
            req(1.5e6, Op::Read, 7 * 512, 512, 1),
            req(2.25e6, Op::Read, 3 * 512, 4096, 2),
        ],
    );
}

#[test]
fn systor_empty_response() {
    let d = Dir::new("systor");
    let p = d.file(
        "s.csv",
        b"Timestamp,Response,IOType,LUN,Offset,Size\n1455591804.310701000,,R,0,203468398592,32768\n\
          1455591804.318699000,0.005276000,W,1,4590576115200,4096\n",
    );
    assert_detected_reads(
        &p,
        Format::Systor,
        &[
            req(1455591804.310701e6, Op::Read, 203468398592, 32768, 0),
            req(1455591804.318699e6, Op::Write, 4590576115200, 4096, 1),
        ],
    );
}

#[test]
fn tencent_variants() {
    let d = Dir::new("tencent");
    let rows = "1538323200,1000,16,1,1063\n1538323200,48,8,0,1063\n1538323201,0,1,1,7,extra\n";
    let want = [
        req(1538323200e6, Op::Write, 1000 * 512, 16 * 512, 1063),
        req(1538323200e6, Op::Read, 48 * 512, 4096, 1063),
        req(1538323201e6, Op::Write, 0, 512, 7),
    ];
    let plain = d.file("t.csv", rows.as_bytes());
    assert_detected_reads(&plain, Format::Tencent, &want);
    let headed = d.file(
        "th.csv",
        format!("Timestamp,Offset,Size,IOType,VolumeID\n{rows}").as_bytes(),
    );
    assert_reqs(&read_all(&headed, &opts(Some(Format::Tencent))), &want);
}

#[test]
fn alibaba_csv() {
    let d = Dir::new("alibaba");
    let rows = "0,W,126703644672,4096,1577808000000055\n0,R,126703644672,16384,1577808000000101\n\
                5,w,0,512,1577808000000200\n";
    let want = [
        req(1577808000000055.0, Op::Write, 126703644672, 4096, 0),
        req(1577808000000101.0, Op::Read, 126703644672, 16384, 0),
        req(1577808000000200.0, Op::Write, 0, 512, 5),
    ];
    let p = d.file("ali.csv", rows.as_bytes());
    assert_detected_reads(&p, Format::Alibaba, &want);
    let headed = d.file(
        "alih.csv",
        format!("device_id,opcode,offset,length,timestamp\n{rows}").as_bytes(),
    );
    assert_detected_reads(&headed, Format::Alibaba, &want);
    let dev5 = TraceOptions {
        device: Some(5),
        ..Default::default()
    };
    assert_eq!(read_all(&p, &dev5).len(), 1);
}

/// One vscsi version-1 record (32 bytes): sn, len, nSG, cmd, ver, lbn, ts.
fn vscsi_v1(len: u32, cmd: u16, lbn: u64, ts: u64) -> Vec<u8> {
    [
        &0x8000_0001u32.to_le_bytes()[..],
        &len.to_le_bytes(),
        &1u32.to_le_bytes(),
        &cmd.to_le_bytes(),
        &0x0100u16.to_le_bytes(),
        &lbn.to_le_bytes(),
        &ts.to_le_bytes(),
    ]
    .concat()
}

/// One vscsi version-2 record (40 bytes): cmd, ver, sn, len, nSG, lbn, ts, rt.
fn vscsi_v2(len: u32, cmd: u16, lbn: u64, ts: u64) -> Vec<u8> {
    [
        &cmd.to_le_bytes()[..],
        &0x0200u16.to_le_bytes(),
        &9u32.to_le_bytes(),
        &len.to_le_bytes(),
        &2u32.to_le_bytes(),
        &lbn.to_le_bytes(),
        &ts.to_le_bytes(),
        &77u64.to_le_bytes(),
    ]
    .concat()
}

#[test]
fn vscsi_sample_matches_its_csv() {
    let dir = traces_dir().join("cloudphysics");
    let bin = dir.join("cloudPhysicsIO.vscsi");
    let csv = dir.join("cloudPhysicsIO.csv");
    assert_eq!(trace::detect(&bin).unwrap(), Format::Vscsi);
    let a = read_all(&bin, &TraceOptions::default());
    let b = read_all(&csv, &TraceOptions::default());
    assert_eq!((a.len(), b.len()), (113_872, 113_872));
    // The first records, as the file's bytes give them.
    assert_reqs(
        &a[..3],
        &[
            req(5_633_898_368_802.0, Op::Write, 42_932_745 * 512, 512, 0),
            req(5_633_898_611_441.0, Op::Write, 42_932_746 * 512, 512, 0),
            req(5_633_898_745_540.0, Op::Write, 42_932_747 * 512, 512, 0),
        ],
    );
    // Record for record the CSV form: same op, size and lbn; the CSV time is the vscsi
    // time in whole seconds.
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(
            (x.op, x.offset_bytes, x.len_bytes, x.dev),
            (y.op, y.offset_bytes, y.len_bytes, y.dev),
            "record {}",
            i + 1
        );
        assert_eq!(
            (x.time_us / 1e6).floor() * 1e6,
            y.time_us,
            "record {}",
            i + 1
        );
    }
    // The trace spans two hours.
    let span = a.last().unwrap().time_us - a[0].time_us;
    assert!((span / 3.6e9 - 2.0).abs() < 1e-3, "{span}");
    // trace info gives the manifest's figures of the CSV form.
    let ti = trace::info(&bin, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (
            ti.format.as_str(),
            ti.requests,
            ti.reads,
            ti.writes,
            ti.write_bytes,
            ti.read_bytes,
            ti.max_end_bytes,
            ti.devices
        ),
        (
            "vscsi",
            113_872,
            46_974,
            66_898,
            2_408_565_760,
            1_797_412_352,
            33_584_938_496,
            1
        )
    );
    assert!(
        (ti.seq_write_fraction - 0.5273).abs() < 5e-5,
        "{}",
        ti.seq_write_fraction
    );
}

#[test]
fn vscsi_versions_and_malformed_records() {
    let d = Dir::new("vscsi");
    let mut v1 = vscsi_v1(4096, 0x2a, 100, 1_000_000);
    v1.extend(vscsi_v1(512, 0x28, 7, 1_000_250));
    v1.extend(vscsi_v1(65536, 0x8a, 1 << 33, 2_000_000));
    let want = [
        req(1_000_000.0, Op::Write, 100 * 512, 4096, 0),
        req(1_000_250.0, Op::Read, 7 * 512, 512, 0),
        req(2_000_000.0, Op::Write, (1u64 << 33) * 512, 65536, 0),
    ];
    let p1 = d.file("v1.vscsi", &v1);
    assert_eq!(trace::detect(&p1).unwrap(), Format::Vscsi);
    assert_reqs(&read_all(&p1, &TraceOptions::default()), &want);
    let mut v2 = vscsi_v2(4096, 0x2a, 100, 1_000_000);
    v2.extend(vscsi_v2(512, 0x28, 7, 1_000_250));
    v2.extend(vscsi_v2(65536, 0x8a, 1 << 33, 2_000_000));
    let p2 = d.file("v2.vscsi", &v2);
    assert_eq!(trace::detect(&p2).unwrap(), Format::Vscsi);
    assert_reqs(&read_all(&p2, &opts(Some(Format::Vscsi))), &want);
    // Compressed.
    let gz = d.file("v2.vscsi.gz", &gzip(&v2));
    assert_eq!(trace::detect(&gz).unwrap(), Format::Vscsi);
    assert_reqs(&read_all(&gz, &TraceOptions::default()), &want);
    // Empty: no request, no error.
    let empty = d.file("empty.vscsi", b"");
    assert!(read_all(&empty, &opts(Some(Format::Vscsi))).is_empty());
    // Malformed records: a SCSI command that is no READ/WRITE, a record of another
    // version, a truncated last record. Each names the record number, field and value.
    let mut bad = vscsi_v1(4096, 0x2a, 1, 1);
    bad.extend(vscsi_v1(0, 0x35, 0, 2));
    let mut other = vscsi_v1(4096, 0x2a, 2, 3);
    other[14..16].copy_from_slice(&0x0200u16.to_le_bytes());
    bad.extend(other);
    bad.extend(vscsi_v1(512, 0x28, 3, 4));
    bad.extend(&vscsi_v1(512, 0x28, 4, 5)[..20]);
    let pb = d.file("bad.vscsi", &bad);
    let mut rd = trace::open(&pb, &opts(Some(Format::Vscsi))).unwrap();
    assert!(rd.next().unwrap().is_ok());
    let e = rd.next().unwrap().unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:2: ", pb.display()))
            && e.contains("field cmd")
            && e.contains("0x35"),
        "{e}"
    );
    assert!(rd.next().is_none());
    let o = TraceOptions {
        format: Some(Format::Vscsi),
        skip_invalid: true,
        ..Default::default()
    };
    let mut rd = trace::open(&pb, &o).unwrap();
    let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_reqs(
        &got,
        &[
            req(1.0, Op::Write, 512, 4096, 0),
            req(4.0, Op::Read, 3 * 512, 512, 0),
        ],
    );
    assert_eq!(rd.skipped(), 3);
    let msg = rd.first_skipped().unwrap();
    assert!(msg.contains(":2: ") && msg.contains("field cmd"), "{msg}");
    // The version and truncation messages.
    let ver_only = [vscsi_v1(512, 0x28, 3, 4), {
        let mut r = vscsi_v1(512, 0x28, 3, 4);
        r[14..16].copy_from_slice(&0x0300u16.to_le_bytes());
        r
    }]
    .concat();
    let pv = d.file("ver.vscsi", &ver_only);
    assert_contains(&read_err(&pv, Format::Vscsi), &[":2: ", "field ver 0x0300"]);
    let trunc = [
        vscsi_v1(512, 0x28, 3, 4),
        vscsi_v1(512, 0x28, 3, 4)[..20].to_vec(),
    ]
    .concat();
    let pt = d.file("trunc.vscsi", &trunc);
    assert_contains(
        &read_err(&pt, Format::Vscsi),
        &[":2: ", "truncated record: 20 of 32 bytes"],
    );
    // Text given as vscsi: an error, not a panic.
    let pt = d.file("text.vscsi", b"1,5633898,2a,512,42932745\n");
    assert_contains(
        &read_err(&pt, Format::Vscsi),
        &[":1: ", "neither version 1"],
    );
}

/// The first error reading `p` as `f` ("" when there is none).
fn read_err(p: &Path, f: Format) -> String {
    trace::open(p, &opts(Some(f)))
        .unwrap()
        .find_map(|r| r.err())
        .map(|e| e.to_string())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// read speed (ignored by default; run in release)

#[test]
#[ignore]
fn read_speed() {
    use std::time::Instant;
    let n: u64 = std::env::var("SSDLAB_BENCH_RECORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let d = Dir::new("speed");
    let src = d.path("msr-like.csv");
    {
        let mut w =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&src).unwrap());
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let op = if x & 3 == 0 { "Read" } else { "Write" };
            writeln!(
                w,
                "{},hm,{},{},{},{},{}",
                128166385295514663 + i * 1000 + (x & 511),
                x >> 60,
                op,
                ((x >> 20) % (1 << 34)) & !511,
                512 * (1 + (x >> 8) % 64),
                x % 10000
            )
            .unwrap();
        }
    }
    let size = std::fs::metadata(&src).unwrap().len();
    let count = |p: &Path| {
        let t = Instant::now();
        let mut k = 0u64;
        let mut bytes = 0u64;
        for r in trace::open(p, &TraceOptions::default()).unwrap() {
            let r = r.unwrap();
            k += 1;
            bytes = bytes.wrapping_add(r.len_bytes);
        }
        assert_eq!(k, n);
        std::hint::black_box(bytes);
        t.elapsed().as_secs_f64()
    };
    let t_text = count(&src);
    let out = d.path("msr-like.ssdt");
    let t0 = Instant::now();
    trace::convert(&src, &TraceOptions::default(), &out).unwrap();
    let t_conv = t0.elapsed().as_secs_f64();
    let t_bin = count(&out);
    println!(
        "{n} records: text ({:.0} MB) {:.2} s = {:.2} M records/s; convert {:.2} s; binary ({:.0} MB) {:.3} s = {:.1} M records/s ({:.1}x)",
        size as f64 / 1e6,
        t_text,
        n as f64 / t_text / 1e6,
        t_conv,
        std::fs::metadata(&out).unwrap().len() as f64 / 1e6,
        t_bin,
        n as f64 / t_bin / 1e6,
        t_text / t_bin
    );
}

/// The real-device window: detected as flashnet, and its measured latencies are the MANIFEST's.
#[test]
fn flashnet_window_latencies() {
    let path = traces_dir().join("flashnet_tencent_nvme/tencent.cut.per_50k.rw_60_40.490.trace");
    assert_eq!(trace::detect(&path).unwrap(), Format::Flashnet);
    let ti = trace::info(&path, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (
            ti.requests,
            ti.reads,
            ti.writes,
            ti.read_bytes,
            ti.write_bytes
        ),
        (50_000, 30_012, 19_988, 357_347_328, 244_600_832)
    );
    assert_eq!(ti.max_end_bytes, 109_051_904);
    let m = ti.measured_latency.unwrap();
    let round = |s: &trace::LatencySummary| {
        (
            s.count,
            s.mean_us.round(),
            s.p50_us,
            s.p90_us,
            s.p99_us,
            s.p999_us,
        )
    };
    assert_eq!(
        round(m.read.as_ref().unwrap()),
        (30_012, 1_703.0, 1_504.0, 2_965.0, 5_515.0, 11_852.0)
    );
    assert_eq!(
        round(m.write.as_ref().unwrap()),
        (19_988, 449.0, 210.0, 1_092.0, 2_212.0, 3_645.0)
    );
    assert_eq!(m.trim, None);
    // The series in replay (submit) order: the first requests are reads of 120, 146, 136 µs.
    let s = trace::measured_latencies(&path, &TraceOptions::default()).unwrap();
    assert_eq!(
        (s.read.len(), s.write.len(), s.missing),
        (30_012, 19_988, 0)
    );
    assert_eq!(s.read[..3], [120.0, 146.0, 136.0]);
    // Submission times are not in file order (20,496 go back): replayed in submit order, the
    // last request is the latest submission (147,005.641 ms), not the last line's (147,005.438).
    // Record times have 1 s resolution.
    assert_eq!(ti.late, 0);
    assert!(
        (ti.last_time_us - 147_005_641.0).abs() < 1e-3,
        "{}",
        ti.last_time_us
    );
    let rec = TraceOptions {
        timestamp: Some("record".into()),
        ..Default::default()
    };
    let tr = trace::info(&path, &rec, 4096).unwrap();
    assert_eq!((tr.first_time_us, tr.last_time_us), (0.0, 147e6));
}

#[test]
fn timestamp_choice() {
    let d = Dir::new("timestamp");
    let p = d.file(
        "f.trace",
        b"1000.000,120,1,4096,0,1000.250,4096\n1000.000,90,0,8192,4096,1002.5,8192\n",
    );
    let times = |t: Option<&str>| -> Vec<f64> {
        let o = TraceOptions {
            timestamp: t.map(String::from),
            ..Default::default()
        };
        read_all(&p, &o).iter().map(|r| r.time_us).collect()
    };
    assert_eq!(times(None), [1_000_250.0, 1_002_500.0]);
    assert_eq!(times(Some("submit")), [1_000_250.0, 1_002_500.0]);
    assert_eq!(times(Some("record")), [1e6, 1e6]);
    // Submissions of several replayer threads out of order in the file: replayed in submit
    // order (with their own sizes and measured latencies); record times keep the file's order.
    let q = d.file(
        "q.trace",
        b"1000.000,120,1,4096,0,1000.250,4096
1000.000,90,0,8192,4096,1000.100,8192
",
    );
    let o = TraceOptions::default();
    let got: Vec<(f64, u64, Option<f32>)> = read_all(&q, &o)
        .iter()
        .map(|r| (r.time_us, r.len_bytes, r.measured()))
        .collect();
    assert_eq!(
        got,
        [
            (1_000_100.0, 8192, Some(90.0)),
            (1_000_250.0, 4096, Some(120.0))
        ]
    );
    let o = TraceOptions {
        timestamp: Some("record".into()),
        ..Default::default()
    };
    let lens: Vec<u64> = read_all(&q, &o).iter().map(|r| r.len_bytes).collect();
    assert_eq!(lens, [4096, 8192]);
    let err = |path: &Path, t: &str| {
        let o = TraceOptions {
            timestamp: Some(t.into()),
            ..Default::default()
        };
        match trace::open(path, &o).err().unwrap() {
            SimError::Config { field, msg, .. } => (field, msg),
            e => panic!("{e}"),
        }
    };
    let (field, msg) = err(&p, "arrival");
    assert_eq!(field, "timestamp");
    assert!(
        msg.contains("arrival") && msg.contains("submit") && msg.contains("record"),
        "{msg}"
    );
    let msr = d.file(
        "m.csv",
        b"128166385295514663,hm,0,Write,9056014336,2048,2833\n",
    );
    let (field, msg) = err(&msr, "record");
    assert_eq!(field, "timestamp");
    assert!(msg.contains("`msr` has a single time stamp"), "{msg}");
}

#[test]
fn flashnet_errors_name_file_line_and_field() {
    let d = Dir::new("flashnet-errors");
    let p = d.file(
        "f.trace",
        b"0.000,120,1,4096,4923392,0.091,4096\n0.000,146,3,4096,4923392,0.093,4096\n",
    );
    let e = read_err(&p, Format::Flashnet);
    assert!(
        e.starts_with(&format!("{}:2: malformed flashnet record", p.display()))
            && e.contains("field 3 (io_type) \"3\""),
        "{e}"
    );
}

/// blkparse: C − D of the same request, matched through the reorder window in time order, a
/// completion of another operation or device matching nothing.
#[test]
fn blkparse_measures_d_to_c() {
    let d = Dir::new("blkparse-dc");
    let p = d.file(
        "b.txt",
        b"8,0 1 1 0.000100 9 D W 100 + 8 [x]\n\
          8,0 1 2 0.000200 9 D W 100 + 8 [x]\n\
          8,0 2 1 0.000150 9 D R 500 + 8 [x]\n\
          8,0 1 3 0.000400 0 C R 100 + 8 [0]\n\
          8,1 1 4 0.000400 0 C W 100 + 8 [0]\n\
          8,0 1 5 0.000900 0 C W 100 + 8 [0]\n\
          8,0 1 6 0.001000 0 C W 100 + 8 [0]\n\
          8,0 2 2 0.000250 0 C R 500 + 8 [0]\n",
    );
    let got: Vec<(f64, Option<f32>)> = read_all(&p, &TraceOptions::default())
        .iter()
        .map(|r| (r.time_us, r.measured()))
        .collect();
    assert_eq!(
        got,
        [
            (100.0, Some(800.0)),
            (150.0, Some(100.0)),
            (200.0, Some(800.0))
        ]
    );
    // Replaying Q or C measures nothing.
    let o = TraceOptions {
        blkparse_action: Some('C'),
        ..Default::default()
    };
    assert!(read_all(&p, &o).iter().all(|r| r.measured().is_none()));
}

// ---------------------------------------------------------------------------------------
// units that are not guessed: linnos (bytes) against disksim / mqsim (sectors)

/// A LinnOS / FlashNet replayer input: ms times, devno, byte offsets and sizes (multiples of
/// 4 KiB), op 1 = read, 0 = write.
const LINNOS: &str = "0.000 0 134217728 4096 1\n0.350 0 2147487744 65536 0\n\
                      1.125 2 4096 8192 1\n2.5 0 536870912 131072 1\n";

#[test]
fn linnos_refused_by_detection_and_read_by_name() {
    let d = Dir::new("linnos");
    let p = d.file("linnos.trace", LINNOS.as_bytes());
    let refusals = [
        trace::detect(&p).unwrap_err(),
        trace::open(&p, &TraceOptions::default()).err().unwrap(),
        trace::info(&p, &TraceOptions::default(), 4096).unwrap_err(),
    ];
    for e in refusals {
        let m = e.to_string();
        assert!(matches!(e, SimError::Invalid(_)), "{e:?}");
        assert!(
            m.starts_with(&format!("{}: ambiguous trace format", p.display()))
                && m.contains("fit linnos and disksim (")
                && !m.contains("mqsim")
                && m.contains("differ only in units")
                && m.contains("4 of the 4 requests would be 1 MiB or more")
                && m.contains("`--format linnos`"),
            "{m}"
        );
    }
    // Read as linnos: offsets and sizes in bytes, times in ms, 1 = read, dev = devno.
    let got = read_all(&p, &opts(Some(Format::Linnos)));
    assert_reqs(
        &got,
        &[
            req(0.0, Op::Read, 134217728, 4096, 0),
            req(350.0, Op::Write, 2147487744, 65536, 0),
            req(1125.0, Op::Read, 4096, 8192, 2),
            req(2500.0, Op::Read, 536870912, 131072, 0),
        ],
    );
    assert!(got.iter().all(|r| r.measured().is_none()));
    let ti = trace::info(&p, &opts(Some(Format::Linnos)), 4096).unwrap();
    assert_eq!(
        (
            ti.format.as_str(),
            ti.requests,
            ti.reads,
            ti.writes,
            ti.read_bytes,
            ti.write_bytes,
            ti.max_end_bytes,
            ti.devices
        ),
        (
            "linnos",
            4,
            3,
            1,
            4096 + 8192 + 131072,
            65536,
            2147487744 + 65536,
            2
        )
    );
    // What detection refuses to guess: read as sectors, 512 times the data.
    let sectors = trace::info(&p, &opts(Some(Format::Disksim)), 4096).unwrap();
    assert_eq!(
        (sectors.read_bytes, sectors.max_end_bytes),
        (512 * ti.read_bytes, 512 * ti.max_end_bytes)
    );
    // Compressed: the same refusal.
    let gz = d.file("linnos.trace.gz", &gzip(LINNOS.as_bytes()));
    let m = trace::detect(&gz).unwrap_err().to_string();
    assert!(m.contains("fit linnos and disksim ("), "{m}");
    // Integer ms times of 1,000 s or more: mqsim's nanoseconds are the sector reading.
    let p = d.file(
        "late.trace",
        b"1000000 0 4096 4096 1\n1000250 0 8192 4096 0\n",
    );
    let m = trace::detect(&p).unwrap_err().to_string();
    assert!(
        m.contains("fit linnos and mqsim (")
            && m.contains("mqsim as 512-byte sectors")
            && !m.contains("disksim"),
        "{m}"
    );
    assert_reqs(
        &read_all(&p, &opts(Some(Format::Linnos))),
        &[
            req(1e9, Op::Read, 4096, 4096, 0),
            req(1000250e3, Op::Write, 8192, 4096, 0),
        ],
    );
    // Integer times between 1,000 and 1,000,000: all three named.
    let p = d.file("mid.trace", b"5000 0 4096 4096 1\n6000 0 8192 8192 0\n");
    let m = trace::detect(&p).unwrap_err().to_string();
    assert!(m.contains("fit linnos and disksim and mqsim ("), "{m}");
    // A sector trace with small requests is still disksim, and a linnos reading of a disksim
    // trace is what the user asked for.
    let p = d.file("ds.trace", b"0.5 1 1024 8 1\n0.75 1 2048 16 0\n");
    assert_eq!(trace::detect(&p).unwrap(), Format::Disksim);
    assert_reqs(
        &read_all(&p, &opts(Some(Format::Linnos))),
        &[
            req(500.0, Op::Read, 1024, 8, 1),
            req(750.0, Op::Write, 2048, 16, 1),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// blkparse: every line form of the default output

/// One line of each form blkparse's default output has (blktrace's `process_default`): the
/// tail of each action with and without `sector + n`, `-t`'s elapsed times, completions with
/// an error, a zero-length completion (the flush `C WS 1950885322 [0]`), pass-through
/// commands `(cdb ..)`, process names with a space, unknown (`(null)`) and empty, and message
/// lines with and without a cgroup id.
const BLKPARSE_FORMS: &str = "\
  8,0    0        1     0.000001000  1001  Q   W 1000 + 8 [fio]
  8,0    0        2     0.000002000  1001  G   W 1000 + 8 [fio]
  8,0    0        3     0.000002500  1001  S   W 1000 + 8 [fio]
  8,0    0        4     0.000003000  1001  P   N [fio]
  8,0    0        5     0.000003500  1001  Q   W 1008 + 8 [fio]
  8,0    0        6     0.000004000  1001  M   W 1008 + 8 [fio]
  8,0    0        7     0.000004500  1001  Q   W 992 + 8 [fio]
  8,0    0        8     0.000005000  1001  F   W 992 + 8 [fio]
  8,0    0        9     0.000005500  1001  G  WS [fio]
  8,0    0       10     0.000006000  1001  I   W 992 + 24 [fio]
  8,0    0       11     0.000006500  1001  U   N [fio] 1
  8,0    0       12     0.000007000     0  UT  N [kworker/0:1H] 1
  8,0    0       13     0.000007500  1001  T   N [fio] 2
  8,0    0       14     0.000008000  1001  D   W 992 + 24 [fio]
  8,0    0       15     0.000008500  1001  D   W 2000 + 8 (     500) [fio]
  8,0    0       16     0.000009000     0  C   W 992 + 24 [0]
  8,0    0       17     0.000009500     0  C   W 2000 + 8 (    1000) [0]
  8,0    1        1     0.000010000  1002  Q FWS [jbd2/sda1-8]
  8,0    1        2     0.000010100  1002  G FWS [jbd2/sda1-8]
  8,0    1        3     0.000010200  1002  I FWS [jbd2/sda1-8]
  8,0    1        4     0.000010300  1002  D FWS [jbd2/sda1-8]
  8,0    1        5     0.000012000     0  C  WS 1950885322 [0]
  8,0    1        6     0.000012100     0  C FWS 1950885322 (    1800) [0]
  8,0    1        7     0.000013000  1003  D   R 4096 + 16 [Web Content]
  8,0    1        8     0.000014500     0  C   R 4096 + 16 [-5]
  8,0    1        9     0.000015000  1004  Q   R 36 (12 00 00 00 24 00 ..) [sg_inq]
  8,0    1       10     0.000015500  1004  D   R 36 (12 00 00 00 24 00 ..) [sg_inq]
  8,0    1       11     0.000016000     0  C   R (12 00 00 00 24 00 ..) [0]
  8,0    1       12     0.000016500  3922  D   N 0 (00 ..) [kworker/u65:0]
  8,0    1       13     0.000016600     0  C   N [0]
  8,0    1       14     0.000017000  1005  D   W (    2500) [fio]
  8,0    1       15     0.000018000  1005  X   W 8192 / 8200 [fio]
  8,0    1       16     0.000019000  1005  A   W 8192 + 8 <- (8,1) 6144
  8,0    1       17     0.000019500  1005  B   W 8192 + 8 [fio]
  8,0    1       18     0.000020000     0  R   W 8192 + 8 [0]
  8,0    1       19     0.000020100     0  R  WS 8200 [0]
  8,0    1        0     0.000021000     0  m   N cfq1005S / insert_request
  8,0    1        0     0.000022000     0  1a2b,0  m   N bfq1005S / dispatch
  8,0    1       20     0.000025000  1006  D  DS 5000 + 2048 [fstrim]
  8,0    1       21     0.000027000     0  C  DS 5000 + 2048 [0]
  8,0    0       18     0.000030000  1007  Q   R 6000 + 8 [(null)]
  8,0    0       19     0.000031000  1007  Q   R 6008 + 8 []
";

#[test]
fn blkparse_every_line_form() {
    let d = Dir::new("blkparse-forms");
    let p = d.file("forms.blkparse", BLKPARSE_FORMS.as_bytes());
    assert_eq!(trace::detect(&p).unwrap(), Format::Blkparse);
    let dev = 8 * 256;
    // D (the default): four data requests, each with its C − D; the flush, the pass-through
    // commands, the request shown by its elapsed time alone and the zero-length completions
    // are skipped, not errors.
    let mut rd = blkparse_reader(&p, None);
    let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!((rd.skipped(), rd.late()), (0, 0));
    assert_reqs(
        &got,
        &[
            req(8.0, Op::Write, 992 * 512, 24 * 512, dev),
            req(8.5, Op::Write, 2000 * 512, 8 * 512, dev),
            req(13.0, Op::Read, 4096 * 512, 16 * 512, dev),
            req(25.0, Op::Trim, 5000 * 512, 2048 * 512, dev),
        ],
    );
    let lat: Vec<f32> = got.iter().map(|r| r.measured().unwrap()).collect();
    for (got, want) in lat.iter().zip([1.0f32, 1.0, 1.5, 2.0]) {
        assert!((got - want).abs() < 1e-3, "{lat:?}");
    }
    // Q: the queued data requests, whatever the process name.
    let got: Vec<Request> = blkparse_reader(&p, Some('Q'))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_reqs(
        &got,
        &[
            req(1.0, Op::Write, 1000 * 512, 4096, dev),
            req(3.5, Op::Write, 1008 * 512, 4096, dev),
            req(4.5, Op::Write, 992 * 512, 4096, dev),
            req(30.0, Op::Read, 6000 * 512, 4096, dev),
            req(31.0, Op::Read, 6008 * 512, 4096, dev),
        ],
    );
    assert!(got.iter().all(|r| r.measured().is_none()));
    // C: the completions with a range (an error completion included).
    let got: Vec<Request> = blkparse_reader(&p, Some('C'))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_reqs(
        &got,
        &[
            req(9.0, Op::Write, 992 * 512, 24 * 512, dev),
            req(9.5, Op::Write, 2000 * 512, 8 * 512, dev),
            req(14.5, Op::Read, 4096 * 512, 16 * 512, dev),
            req(27.0, Op::Trim, 5000 * 512, 2048 * 512, dev),
        ],
    );
    let ti = trace::info(&p, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(
        (ti.requests, ti.reads, ti.writes, ti.trims, ti.skipped),
        (4, 1, 2, 1, 0)
    );
    assert_eq!(
        ti.measured_latency.and_then(|m| m.read).map(|s| s.count),
        Some(1)
    );
    // The zero-length completion of the issue alone, among data requests, reads too.
    let p = d.file(
        "flush.txt",
        b"8,0 3 1 0.1 9 D WS 1950885314 + 8 [x]\n8,0 3 2 0.2 0 C WS 1950885322 [0]\n\
          8,0 3 3 0.3 0 C WS 1950885314 + 8 [0]\n",
    );
    let got = read_all(&p, &TraceOptions::default());
    assert_eq!(got.len(), 1);
    assert!((got[0].measured().unwrap() - 200_000.0).abs() < 0.1);
    // Tails blkparse never prints stay malformed records, named by line and value.
    for (tail, what) in [
        ("W 100 - 8 [x]", "sector + nsectors"),
        ("W 100", "sector [error]"),
        ("W", "sector [error]"),
        ("W 1x [0]", "field 8 (sector) \"1x\""),
        ("W 100 + 8x [0]", "field 10 (nsectors) \"8x\""),
    ] {
        let p = d.file("bad.txt", format!("8,0 0 1 0.1 5 D {tail}\n").as_bytes());
        let e = read_err(&p, Format::Blkparse);
        assert!(
            e.starts_with(&format!("{}:1: malformed blkparse record", p.display()))
                && e.contains(what),
            "{tail}: {e}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// generated traces

/// `trace generate` (synth::generate) writes no latency: an MSR trace whose ResponseTime is
/// empty reads back with none, and `trace info` reports none.
#[test]
fn generated_msr_trace_has_no_measured_latency() {
    let d = Dir::new("generated");
    let out = d.path("gen.csv");
    let cfg = ssdlab_core::Config::from_toml_str(
        "[workload]\nkind = \"uniform\"\nrequests = 500\nfootprint_bytes = \"8MiB\"\nread_fraction = 0.5\n",
    )
    .unwrap();
    assert_eq!(
        ssdlab_core::synth::generate(&cfg, &out, "msr").unwrap(),
        500
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 500);
    assert!(
        text.lines()
            .all(|l| l.split(',').count() == 7 && l.ends_with(',')),
        "{}",
        text.lines().next().unwrap()
    );
    assert_eq!(trace::detect(&out).unwrap(), Format::Msr);
    let got = read_all(&out, &TraceOptions::default());
    assert_eq!(got.len(), 500);
    assert!(got.iter().any(|r| r.op == Op::Read) && got.iter().any(|r| r.op == Op::Write));
    assert!(got.iter().all(|r| r.measured().is_none()));
    let ti = trace::info(&out, &TraceOptions::default(), 4096).unwrap();
    assert_eq!(ti.requests, 500);
    assert_eq!(
        (ti.measured_latency, ti.measured_max_outstanding),
        (None, None)
    );
    let m = trace::measured_latencies(&out, &TraceOptions::default()).unwrap();
    assert_eq!((m.read.len(), m.write.len(), m.missing), (0, 0, 500));
}

/// The `trace_readers` fuzz seeds are the per-format seeds with the byte that picks their
/// format (its index in `Format::all()`) in front: a format added in the middle renumbers them.
#[test]
fn fuzz_reader_seeds_pick_their_format() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut n = 0;
    for entry in std::fs::read_dir(seeds.join("trace_readers")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let (fmt, seed) = name.split_once('-').unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let picked = Format::all()[bytes[0] as usize % Format::all().len()];
        assert_eq!(picked.name(), fmt, "{name}: its first byte picks {picked}");
        let own = std::fs::read(seeds.join(format!("trace_{fmt}")).join(seed)).unwrap();
        assert_eq!(
            &bytes[1..],
            &own[..],
            "{name}: not the trace_{fmt} seed {seed}"
        );
        n += 1;
    }
    // Every format has a seed there.
    assert!(n >= Format::all().len(), "{n} seeds");
    for f in Format::all() {
        assert!(
            seeds.join(format!("trace_{}", f.name())).is_dir(),
            "no fuzz seeds for {f}"
        );
    }
}
