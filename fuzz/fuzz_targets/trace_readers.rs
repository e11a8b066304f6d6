//! Every trace reader on arbitrary bytes: the first byte picks the format, the rest is the file
//! (see docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdlab_fuzz::read_any(data);
});
