//! Input that is accepted but probably wrong gets a warning; input that cannot be meant is an
//! error. The messages are part of the interface, so the tests pin them exactly.

use ssdlab_core::engine::NoProgress;
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

#[test]
fn binary_trace_errors_name_the_record_line() {
    // Requests handed over in decoded runs keep their own line in error messages: record 5,000
    // (the second run) writes beyond the device.
    use ssdlab_core::request::{Op, Request};
    let dir = std::env::temp_dir().join(format!("ssdlab-binary-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("t.ssdt");
    let reqs = (1..=6000u64).map(|line| {
        let page = if line == 5000 { 1 << 20 } else { line % 64 };
        let r = Request {
            time_us: line as f64,
            op: Op::Write,
            offset_bytes: page * 4096,
            len_bytes: 4096,
            dev: 0,
        };
        Ok((r, line))
    });
    ssdlab_core::trace::write_binary(reqs, "t", &out).unwrap();
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
    use ssdlab_core::request::{Op, Request};
    let dir = std::env::temp_dir().join(format!("ssdlab-zero-len-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("z.ssdt");
    let w = |offset_bytes, len_bytes| Request {
        time_us: 0.0,
        op: Op::Write,
        offset_bytes,
        len_bytes,
        dev: 0,
    };
    let reqs = [w(4100, 0), w(0, 4096), w(8192, 512)]
        .into_iter()
        .enumerate()
        .map(|(i, r)| Ok((r, i as u64 + 1)));
    ssdlab_core::trace::write_binary(reqs, "z", &out).unwrap();
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\n[device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n",
        out.display()
    );
    let m = simulate(&config(&text), &mut NoProgress).unwrap().metrics;
    assert_eq!(m["host.write_requests"], 3.0);
    assert_eq!(m["host.write_pages"], 2.0);
    assert_eq!(m["host.write_bytes"], 4608.0);
}
