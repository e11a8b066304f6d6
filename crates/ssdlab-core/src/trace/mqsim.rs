//! MQSim ASCII traces: `time_ns devno start_sector size_sectors type`.
//!
//! Whitespace-separated; 512-byte sectors; time in nanoseconds; type 0 = write, 1 = read.
//! Extra fields are ignored.

use super::fields::{dev_columns, op_code, request, LineResult};
use crate::request::Op;

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let (t, dev, off, len, op) = dev_columns(
        line,
        [
            "field 1 (time_ns)",
            "field 3 (start_sector)",
            "field 4 (size_sectors)",
        ],
        512,
    )?;
    let op = op_code(
        op,
        &[("0", Op::Write), ("1", Op::Read)],
        "field 5 (type)",
        "0 (write) or 1 (read)",
    )?;
    request(t / 1e3, op, off, len, dev)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::Request;

    #[test]
    fn parses_mqsim() {
        check(
            parse,
            &[
                (
                    "11413000 0 657728 16 1",
                    Request::new(11413.0, Op::Read, 657728 * 512, 8192, 0),
                ),
                ("1 3 0 8 0", Request::new(0.001, Op::Write, 0, 4096, 3)),
            ],
            &[("1 3 0 8 2", "type")],
        );
    }
}
