//! Regression tests for inputs the fuzz targets (fuzz/, docs/fuzzing.md) found: each is the
//! minimal reproducer, bytes inline, read through the public API. A malformed file must be
//! an error naming file:line (or, with `skip_invalid`, a skipped record), never a panic or a
//! request the engine cannot handle.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use ssdlab_core::error::SimError;
use ssdlab_core::trace::{self, Format, TraceOptions, BINARY_MAGIC};

/// A scratch file removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(bytes: &[u8]) -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "ssdlab-fuzz-regression-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&p, bytes).unwrap();
        Scratch(p)
    }
    fn name(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A binary trace cache of `records` (time, offset, len, dev, op byte).
fn binary(records: &[(f64, u64, u32, u32, u8)]) -> Vec<u8> {
    let mut b = BINARY_MAGIC.to_vec();
    b.extend(1u16.to_le_bytes());
    b.extend(25u16.to_le_bytes());
    b.extend(0u32.to_le_bytes());
    b.extend((records.len() as u64).to_le_bytes());
    b.extend(0u64.to_le_bytes());
    for &(t, off, len, dev, op) in records {
        b.extend(t.to_le_bytes());
        b.extend(off.to_le_bytes());
        b.extend(len.to_le_bytes());
        b.extend(dev.to_le_bytes());
        b.push(op);
    }
    b
}

/// Read `bytes` as `format` (None = detect); the first error, after the requests before it.
fn read(bytes: &[u8], format: Option<Format>) -> (Scratch, usize, Option<SimError>) {
    let f = Scratch::new(bytes);
    let opts = TraceOptions {
        format,
        ..Default::default()
    };
    let mut n = 0;
    for r in trace::open(&f.0, &opts).unwrap() {
        match r {
            Ok(r) => {
                assert!(r.time_us.is_finite() && r.time_us >= 0.0, "{r:?}");
                assert!(r.offset_bytes.checked_add(r.len_bytes).is_some(), "{r:?}");
                n += 1;
            }
            Err(e) => return (f, n, Some(e)),
        }
    }
    (f, n, None)
}

fn assert_record_error(f: &Scratch, e: Option<SimError>, line: u64, what: &str) {
    let e = e.expect("an error");
    let s = e.to_string();
    assert!(
        s.starts_with(&format!("{}:{line}: ", f.name())),
        "the error does not name file:line: {s}"
    );
    assert!(s.contains(what), "{s}");
}

/// fuzz target trace_binary: a record with a negative time stamp (crash-123db4b9: the
/// record decoded to time -1.06e270 µs) was returned as a request.
#[test]
fn fuzz_binary_negative_time() {
    let (f, n, e) = read(
        &binary(&[(1.0, 0, 4096, 0, 1), (-1.0, 0, 4096, 0, 1)]),
        None,
    );
    assert_eq!(n, 1);
    assert_record_error(&f, e, 2, "time -1 µs is not a finite non-negative number");
}

/// fuzz target trace_binary: NaN and infinite time stamps.
#[test]
fn fuzz_binary_non_finite_time() {
    for t in [f64::NAN, f64::INFINITY] {
        let (f, n, e) = read(&binary(&[(t, 0, 512, 0, 0)]), Some(Format::Binary));
        assert_eq!(n, 0);
        assert_record_error(&f, e, 1, "is not a finite non-negative number");
    }
}

/// trace_binary's oracle: offset + length overflowing 64 bits (the text readers reject it;
/// the binary reader did not, found with the time-stamp bug above).
#[test]
fn fuzz_binary_end_overflows() {
    let (f, n, e) = read(&binary(&[(0.0, u64::MAX - 10, 4096, 0, 1)]), None);
    assert_eq!(n, 0);
    assert_record_error(&f, e, 1, "overflows 64 bits");
}

/// The same records are skipped, not fatal, with `skip_invalid`.
#[test]
fn fuzz_binary_bad_records_skipped() {
    let f = Scratch::new(&binary(&[
        (f64::NAN, 0, 512, 0, 0),
        (2.0, 8192, 512, 0, 1),
        (-0.5, 0, 512, 0, 0),
        (3.0, u64::MAX, 1, 0, 2),
    ]));
    let opts = TraceOptions {
        skip_invalid: true,
        ..Default::default()
    };
    let mut r = trace::open(&f.0, &opts).unwrap();
    let got: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].offset_bytes, 8192);
    assert_eq!(r.skipped(), 3);
    assert!(r
        .first_skipped()
        .unwrap()
        .starts_with(&format!("{}:1: ", f.name())));
}

/// fuzz target detect (timeout-054adcbc, a gzip stream): `trace info` walked the footprint of
/// a write 64 pages at a time, so one record of ~2^64 bytes never finished (and grew a map
/// without bound). The footprint is now a set of page runs.
#[test]
fn fuzz_info_huge_write_is_one_run() {
    let huge = u64::MAX - 4096;
    let text = format!("0,0,{huge},w,0.5\n0,8,4096,w,1.0\n1,0,4096,r,2.0\n");
    let f = Scratch::new(text.as_bytes());
    let opts = TraceOptions {
        format: Some(Format::Umass),
        ..Default::default()
    };
    let ti = trace::info(&f.0, &opts, 4096).unwrap();
    assert_eq!((ti.requests, ti.writes, ti.reads), (3, 2, 1));
    assert_eq!(ti.footprint_pages, (huge - 1) / 4096 + 1);
    assert_eq!(ti.max_end_bytes, huge);
}

/// Found while checking the fuzz targets' time oracle: every text reader converts its time
/// stamp to µs by a multiplication, which turned a huge but finite stamp (1e308 s) into an
/// infinite time. Such a record is now malformed, naming file:line.
#[test]
fn fuzz_text_time_overflow() {
    let cases: &[(Format, &str)] = &[
        (Format::Tencent, "1e308,100,8,1,1063\n"),
        (Format::Umass, "0,1,512,w,1e308\n"),
        (Format::Disksim, "1e308 5 174224064 16 1\n"),
        (
            Format::Systor,
            "Timestamp,Response,IOType,LUN,Offset,Size\n1e308,0.1,R,0,0,4096\n",
        ),
        (Format::Blkparse, "  8,0 1 4 1e308 1 D W 0 + 8 [b]\n"),
        (Format::Wiscsee, "1 D read 0 4096 1e308 0 False\n"),
        (Format::Blkreplay, "1e308 ; 8 ; 8 ; W ; 0 ; 0\n"),
    ];
    for &(format, text) in cases {
        let (f, n, e) = read(text.as_bytes(), Some(format));
        assert_eq!(n, 0, "{format}");
        let line = text.lines().count() as u64;
        assert_record_error(&f, e, line, "overflows when converted to microseconds");
    }
}
