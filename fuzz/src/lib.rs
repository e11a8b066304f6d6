//! Shared bodies of the fuzz targets (see docs/fuzzing.md).
//!
//! The trace readers open paths, so every input is written to one scratch file per process
//! (under `$TMPDIR`, normally tmpfs-backed `/tmp`) and read back through the public API
//! exactly as a user's file would be. The last byte of the input also picks the reader
//! options, so one corpus exercises `skip_invalid`, the device filter, the blkparse action
//! and several generic column specs.
//!
//! Oracles: no panic, no hang, no unbounded allocation (libFuzzer's `-timeout` and
//! `-rss_limit_mb`), and every error names the file (and, for a record, its line).

use std::path::PathBuf;
use std::sync::OnceLock;

use ssdlab_core::error::SimError;
use ssdlab_core::trace::{self, Format, GenericSpec, TraceOptions};
use ssdlab_core::Config;

fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("ssdlab-fuzz-{}.trace", std::process::id()))
    })
}

fn write_scratch(data: &[u8]) -> &'static PathBuf {
    let p = scratch();
    std::fs::write(p, data).expect("write the scratch trace file");
    p
}

/// Reader options chosen by the input's last byte.
pub fn options(data: &[u8], format: Option<Format>) -> TraceOptions {
    let b = data.last().copied().unwrap_or(0);
    let generic = match (b >> 4) & 3 {
        0 => GenericSpec::default(),
        1 => GenericSpec {
            read_codes: vec!["r".into(), "1".into()],
            write_codes: vec!["w".into(), "0".into()],
            trim_codes: vec!["d".into()],
            ..GenericSpec::ns_sectors("whitespace")
        },
        2 => GenericSpec {
            delimiter: "tab".into(),
            time_col: Some(3),
            op_col: 2,
            offset_col: 1,
            size_col: 0,
            offset_unit_bytes: 4096,
            size_unit_bytes: 4096,
            time_unit_us: 1e6,
            ..GenericSpec::default()
        },
        _ => GenericSpec {
            delimiter: ";".into(),
            skip_lines: 3,
            op_col: 7,
            offset_col: 5,
            size_col: 6,
            dev_col: Some(2),
            trim_codes: vec!["t".into(), "trim".into()],
            ..GenericSpec::default()
        },
    };
    TraceOptions {
        format,
        device: (b & 2 != 0).then_some(0),
        skip_invalid: b & 1 != 0,
        blkparse_action: [None, Some('Q'), Some('D'), Some('c')][((b >> 2) & 3) as usize],
        generic: Some(generic),
        timestamp: (b & 0x40 != 0).then(|| "record".into()),
        ..TraceOptions::default()
    }
}

/// Every error about a trace must say which file (and, for a record, which line).
fn check_error(e: &SimError, file: &str) {
    let text = e.to_string();
    match e {
        SimError::Trace { file: f, line, .. } => {
            assert_eq!(f, file, "{text}");
            assert!(*line > 0, "a record error at line 0: {text}");
        }
        SimError::Io { path, .. } => assert_eq!(path, file, "{text}"),
        SimError::Invalid(_) => {
            assert!(
                text.contains(file),
                "the error does not name the file: {text}"
            )
        }
        // About the reader options (which the target chooses), not the file.
        SimError::Config { .. } => {}
        other => panic!("unexpected kind of error from a trace reader: {other:?}"),
    }
}

/// Open `data` as a trace of `format` (`None` = detect) and read it to the end.
pub fn read_trace(data: &[u8], format: Option<Format>) {
    let path = write_scratch(data);
    let file = path.display().to_string();
    let opts = options(data, format);
    let mut reader = match trace::open(path, &opts) {
        Ok(r) => r,
        Err(e) => return check_error(&e, &file),
    };
    if let Some(f) = format {
        assert_eq!(reader.format(), f);
    }
    let mut last_line = 0;
    while let Some(item) = reader.next() {
        match item {
            Ok(r) => {
                assert!(r.time_us.is_finite() && r.time_us >= 0.0, "{r:?}");
                assert!(r.offset_bytes.checked_add(r.len_bytes).is_some(), "{r:?}");
                assert!(r.measured().is_none_or(|m| m.is_finite() && m >= 0.0), "{r:?}");
                assert!(reader.line() >= last_line);
                last_line = reader.line();
            }
            Err(e) => check_error(&e, &file),
        }
    }
    // Exhausted readers stay exhausted.
    assert!(reader.next().is_none());
    if let Some(first) = reader.first_skipped() {
        assert!(first.starts_with(&format!("{file}:")), "{first}");
    }
}

/// Read `data[1..]` with the reader of the format `data[0]` picks (modulo the number of
/// formats, in `Format::all()` order), so one target and one corpus cover every reader.
pub fn read_any(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let formats = Format::all();
    read_trace(rest, Some(formats[pick as usize % formats.len()]));
}

/// Detect the format of `data`, then read it with the detected reader and summarise it.
pub fn detect_and_read(data: &[u8]) {
    let path = write_scratch(data);
    let file = path.display().to_string();
    match trace::detect(path) {
        Ok(_) => {}
        Err(e) => check_error(&e, &file),
    }
    read_trace(data, None);
    let mut opts = options(data, None);
    opts.skip_invalid = true;
    if let Err(e) = trace::info(path, &opts, 4096) {
        check_error(&e, &file);
    }
}

/// Parse `data` as a TOML and as a JSON configuration; validation must not panic, and a valid
/// configuration must read back from its JSON (what the Python layer sends).
pub fn parse_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for parsed in [Config::from_toml_str(text), Config::from_json_str(text)] {
        if let Ok(cfg) = parsed {
            if cfg.validate().is_err() {
                continue;
            }
            let json = cfg.to_json();
            if let Err(e) = Config::from_json_str(&json) {
                panic!("a parsed configuration does not read back from its JSON: {e}\n{json}");
            }
        }
    }
}
