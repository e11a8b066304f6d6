//! Format detection, then the detected reader, on arbitrary bytes (see docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdlab_fuzz::detect_and_read(data);
});
