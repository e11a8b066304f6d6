//! DiskSim ASCII traces: `time_ms devno start_sector size_sectors flags`.
//!
//! Whitespace-separated; 512-byte sectors; time in milliseconds (fractional); flags is an
//! integer whose bit 0 set means read, clear means write. Extra fields are ignored.

use super::fields::{dev_columns, request, uint, LineResult};
use crate::request::Op;

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let (t, dev, off, len, op) = dev_columns(
        line,
        [
            "field 1 (time_ms)",
            "field 3 (start_sector)",
            "field 4 (size_sectors)",
        ],
        512,
    )?;
    let flags = uint(op, "field 5 (flags)")?;
    let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
    request(t * 1e3, op, off, len, dev)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::Request;

    #[test]
    fn parses_disksim() {
        check(
            parse,
            &[
                (
                    "13.191135\t30\t7\t5\t1",
                    Request::new(13191.135, Op::Read, 3584, 2560, 30),
                ),
                ("0.5 1 0 8 2", Request::new(500.0, Op::Write, 0, 4096, 1)),
            ],
            &[("0.5 1 0 8", "at least 5"), ("-1 1 0 8 0", "negative")],
        );
    }
}
