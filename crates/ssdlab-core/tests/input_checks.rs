//! Input that is accepted but probably wrong gets a warning; input that cannot be meant is an
//! error. The messages are part of the interface, so the tests pin them exactly.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::request::{Op, Request};
use ssdlab_core::{simulate, Config};

fn config(toml: &str) -> Config {
    Config::from_toml_str(toml).unwrap()
}

fn warnings(toml: &str) -> Vec<String> {
    simulate(&config(toml), &mut NoProgress).unwrap().warnings
}

fn error(toml: &str) -> String {
    simulate(&config(toml), &mut NoProgress)
        .unwrap_err()
        .to_string()
}

const SMALL: &str = "[workload]\nkind = \"uniform\"\nrequests = 50\nfootprint_bytes = \"1MiB\"\n\
                     [device]\nlogical_bytes = \"2MiB\"\npages_per_block = 16\nop = 0.25\n";

fn trace_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ssdlab-input-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn decimal_size_and_rounding_are_warned() {
    let w = warnings(&format!("{SMALL}[buffer]\nbytes = \"16MB\"\n"));
    assert_eq!(
        w[..2],
        [
            "buffer.bytes = 16MB is 16,000,000 bytes (decimal); did you mean 16MiB?",
            "buffer.bytes = 16,000,000 bytes is rounded down to 3,906 pages = 15,998,976 bytes",
        ]
    );
    assert!(warnings(&format!("{SMALL}[buffer]\nbytes = \"64KiB\"\n")).is_empty());
}

#[test]
fn buffer_as_large_as_the_device_is_warned() {
    let w = warnings(&format!("{SMALL}[buffer]\nbytes = \"2MiB\"\n"));
    assert_eq!(
        w,
        ["the buffer (512 pages) is as large as the device (512 logical pages): every write can stay in it"]
    );
}

#[test]
fn path_with_a_synthetic_kind_is_an_error() {
    let e = error(&SMALL.replace("kind = \"uniform\"", "kind = \"uniform\"\npath = \"t.csv\""));
    assert_eq!(
        e,
        "config field `workload.path`: is set but workload.kind = \"uniform\"; set workload.kind = \"trace\" to replay the trace"
    );
}

#[test]
fn tiny_trace_on_a_filled_auto_device_is_warned() {
    let p = trace_file(
        "tiny.csv",
        "1,h,0,Write,0,4096,1\n2,h,0,Write,67104768,4096,1\n",
    );
    let w = warnings(&format!(
        "[workload]\nkind = \"trace\"\npath = \"{p}\"\n[device]\npages_per_block = 16\n\
         [buffer]\nkind = \"none\"\n[run]\nprecondition = \"fill\"\n"
    ));
    assert_eq!(
        w,
        ["the trace writes 2 pages, under 1% of the automatically sized device (16,384 pages = 64.0 MiB, \
          sized from the highest address); set workload.address_map = \"compact\" to size the device to the \
          blocks the trace touches"]
    );
    let compact = format!(
        "[workload]\nkind = \"trace\"\npath = \"{p}\"\naddress_map = \"compact\"\n[device]\npages_per_block = 16\n\
         [buffer]\nkind = \"none\"\n[run]\nprecondition = \"fill\"\n"
    );
    assert!(warnings(&compact).is_empty());
}

#[test]
fn trace_in_the_wrong_format_says_what_was_read() {
    let p = trace_file(
        "msr.csv",
        "1,h,0,Write,0,4096,1\n2,h,0,Write,4096,4096,1\n3,h,0,Read,0,4096,1\n",
    );
    for logical in ["\"auto\"", "\"4MiB\""] {
        let e = error(&format!(
            "[workload]\nkind = \"trace\"\npath = \"{p}\"\nformat = \"blkparse\"\n\
             [device]\nlogical_bytes = {logical}\npages_per_block = 16\nop = 0.5\n[buffer]\nkind = \"none\"\n"
        ));
        assert_eq!(
            e,
            format!("trace {p} has no requests: read 3 lines, none parsed as format `blkparse`; detection suggests format `msr`")
        );
    }
}

#[test]
fn typo_in_a_file_names_line_and_nearest_key() {
    let e = Config::from_toml_file("[buffer]\nkind = \"lru\"\nbites = 5\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "c.toml:3: config field `buffer.bites`: unknown key; did you mean `buffer.bytes`?"
    );
    let e = Config::from_json_str(r#"{"run": {"sed": 3}}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "config field `run.sed`: unknown key; did you mean `run.seed`?"
    );
    let e = Config::from_json_str(r#"{"run": {"zzzzzzzz": 3}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("config field `run.zzzzzzzz`: unknown key; valid: seed, "),
        "{e}"
    );
}

#[test]
fn type_errors_in_plain_words() {
    let cases = [
        (r#"{"run": {"seed": "x"}}"#, "config field `run.seed`: string \"x\", expected a whole number ≥ 0"),
        (r#"{"run": {"seed": -1}}"#, "config field `run.seed`: integer `-1`, expected a whole number ≥ 0"),
        (r#"{"device": {"op": "lots"}}"#, "config field `device.op`: string \"lots\", expected a number"),
        (r#"{"run": {"check_integrity": 1}}"#, "config field `run.check_integrity`: integer `1`, expected true or false"),
        (r#"{"buffer": {"bytes": true}}"#, "config field `buffer.bytes`: boolean `true`, expected a size such as 16MiB"),
        (r#"{"device": {"logical_bytes": [1]}}"#, "config field `device.logical_bytes`: sequence, expected a size such as 16MiB, or \"auto\""),
    ];
    for (json, msg) in cases {
        assert_eq!(Config::from_json_str(json).unwrap_err().to_string(), msg);
    }
    let e = Config::from_toml_file("[run]\nrepeat = \"twice\"\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "c.toml:2: config field `run.repeat`: string \"twice\", expected a whole number ≥ 0"
    );
}

/// `reqs` (request, trace line) written as the binary trace `name`.ssdt in the temporary folder
/// `dir`-<process id>; returns its path.
fn binary_trace(
    dir: &str,
    name: &str,
    reqs: impl Iterator<Item = (Request, u64)>,
) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.ssdt"));
    ssdlab_core::trace::write_binary(reqs.map(Ok), name, &out).unwrap();
    out
}

#[test]
fn binary_trace_errors_name_the_record_line() {
    // Requests handed over in decoded runs keep their own line in error messages: record 5,000
    // (the second run) writes beyond the device.
    let reqs = (1..=6000u64).map(|line| {
        let page = if line == 5000 { 1 << 20 } else { line % 64 };
        (
            Request::new(line as f64, Op::Write, page * 4096, 4096, 0),
            line,
        )
    });
    let out = binary_trace("ssdlab-binary-line", "t", reqs);
    // Read as it goes, and replayed from the memory of the sizing pre-pass (buffer.fraction).
    for buffer in ["", "[buffer]\nfraction = 0.5\n"] {
        let e = error(&format!(
            "[workload]\nkind = \"trace\"\npath = \"{}\"\n[device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n\
             [run]\nreader_thread = false\n{buffer}",
            out.display()
        ));
        assert!(
            e.starts_with("capacity: request at line 5000 (offset 4294967296 B, 4096 B)"),
            "{e}"
        );
    }
}

#[test]
fn zero_length_requests_are_counted_but_touch_no_page() {
    let w = |offset_bytes, len_bytes| Request::new(0.0, Op::Write, offset_bytes, len_bytes, 0);
    let reqs = [w(4100, 0), w(0, 4096), w(8192, 512)].into_iter().zip(1..);
    let out = binary_trace("ssdlab-zero-len", "z", reqs);
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\n[device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n",
        out.display()
    );
    let m = simulate(&config(&text), &mut NoProgress).unwrap().metrics;
    assert_eq!(m["host.write_requests"], 3.0);
    assert_eq!(m["host.write_pages"], 2.0);
    assert_eq!(m["host.write_bytes"], 4608.0);
}

const DEVICE: &str = "[device]\nlogical_bytes = \"2MiB\"\npages_per_block = 16\nop = 0.25\n";

/// An MSR trace: one write of pages 0..written, then one read of pages 0..read.
fn write_then_read(name: &str, written: u64, read: u64) -> String {
    trace_file(
        name,
        &format!(
            "1,h,0,Write,0,{},1\n2,h,0,Read,0,{},1\n",
            written * 4096,
            read * 4096
        ),
    )
}

fn trace_run(path: &str, extra: &str) -> ssdlab_core::RunResult {
    // No buffer unless `extra` names one: every read goes to the FTL.
    let buffer = if extra.contains("[buffer]") {
        ""
    } else {
        "[buffer]\nkind = \"none\"\n"
    };
    let toml = format!("[workload]\nkind = \"trace\"\npath = \"{path}\"\n{DEVICE}{buffer}{extra}");
    simulate(&config(&toml), &mut NoProgress).unwrap()
}

#[test]
fn reads_of_unwritten_pages_are_counted_and_warned() {
    // Page 0 written, pages 0..4 read: 3 reads find no data and cost nothing.
    let p = write_then_read("unwritten.csv", 1, 4);
    let r = trace_run(&p, "");
    assert_eq!(r.metrics["host.read_pages"], 4.0);
    assert_eq!(r.metrics["host.unwritten_read_pages"], 3.0);
    assert_eq!(r.metrics["nand.reads.host"], 1.0);
    assert_eq!(
        r.warnings,
        ["3 of 4 page reads (75.0%) found no data (host.unwritten_read_pages: never written or trimmed) \
          and cost no flash read; set run.precondition = \"fill\" to start from a device holding data"]
    );
    // Timed mode says what it costs there (and, on one die, that too).
    let r = trace_run(&p, "[run]\nmode = \"timed\"\n");
    assert_eq!(r.metrics["host.unwritten_read_pages"], 3.0);
    assert!(r.warnings.contains(
        &"3 of 4 page reads (75.0%) found no data (host.unwritten_read_pages: never written or trimmed) \
          and cost no flash read and no time (read latencies are understated); set run.precondition = \
          \"fill\" to start from a device holding data"
            .to_string()
    ));
    // A filled device holds every page: each read is a flash read, no warning.
    let r = trace_run(&p, "[run]\nprecondition = \"fill\"\n");
    assert_eq!(r.metrics["host.unwritten_read_pages"], 0.0);
    assert_eq!(r.metrics["nand.reads.host"], 4.0);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn unwritten_reads_warn_above_one_percent_only() {
    // 99 pages written; 100 read: 1 finds no data (1%, no warning); 101 read: 2 (1.98%, warned).
    let r = trace_run(&write_then_read("one-percent.csv", 99, 100), "");
    assert_eq!(r.metrics["host.unwritten_read_pages"], 1.0);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let r = trace_run(&write_then_read("two-percent.csv", 99, 101), "");
    assert_eq!(r.metrics["host.unwritten_read_pages"], 2.0);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].starts_with("2 of 101 page reads (2.0%) found no data"));
    // Reads served by the buffer find data.
    let r = trace_run(
        &write_then_read("buffered.csv", 4, 4),
        "[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n",
    );
    assert_eq!(r.metrics["buffer.read_hit_pages"], 4.0);
    assert_eq!(r.metrics["host.unwritten_read_pages"], 0.0);
}

#[test]
fn timed_mode_on_one_die_is_warned() {
    let one = "timed mode on a device with one die (device.channels × chips_per_channel × dies_per_chip = 1) \
               models no parallelism: every flash operation waits for the one before it; set device.channels \
               and device.chips_per_channel (e.g. 8 and 4) for an SSD's dies";
    let timed = format!("{SMALL}[buffer]\nkind = \"none\"\n[run]\nmode = \"timed\"\n");
    assert_eq!(warnings(&timed), [one]);
    let four = timed.replace(
        "op = 0.25\n",
        "op = 0.25\nchannels = 2\nchips_per_channel = 2\n",
    );
    assert!(warnings(&four).is_empty());
    let dies = timed.replace("op = 0.25\n", "op = 0.25\ndies_per_chip = 2\n");
    assert!(warnings(&dies).is_empty());
    // Counts mode has no dies: nothing to say.
    assert!(warnings(&timed.replace("timed", "counts")).is_empty());
}

#[test]
fn serial_nand_time_keeps_its_deprecated_name() {
    let nand = "[nand]\nread_us = 10\nprogram_us = 100\nerase_us = 1000\ntransfer_us = 5\n";
    for mode in ["counts", "timed"] {
        let toml = format!(
            "{SMALL}channels = 4\n[buffer]\nkind = \"none\"\n{nand}[run]\nmode = \"{mode}\"\n"
        );
        let m = simulate(&config(&toml), &mut NoProgress).unwrap().metrics;
        // Every operation with its transfer, one after another, the same sum in both modes.
        let serial = m["nand.reads.total"] * 15.0
            + m["nand.programs.total"] * 105.0
            + m["nand.erases"] * 1000.0;
        assert!(m["nand.programs.total"] >= 50.0);
        assert_eq!(m["time.nand_serial_us"], serial, "{mode}");
        assert_eq!(m["time.elapsed_us"], serial, "{mode}");
    }
}
