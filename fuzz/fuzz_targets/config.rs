//! The configuration parser (TOML and JSON) on arbitrary text (see docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdlab_fuzz::parse_config(data);
});
