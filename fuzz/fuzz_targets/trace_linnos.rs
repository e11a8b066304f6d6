//! The `linnos` reader on arbitrary bytes (see docs/fuzzing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssdlab_core::trace::Format;

fuzz_target!(|data: &[u8]| {
    ssdlab_fuzz::read_trace(data, Some(Format::Linnos));
});
