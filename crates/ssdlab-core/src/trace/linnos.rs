//! LinnOS / FlashNet replayer input (also Heimdall's): `ts_ms devno offset_B size_B op`.
//!
//! The trace the LinnOS and FlashNet replayers replay on a device (their output is the
//! `flashnet` format). Whitespace-separated; time in milliseconds (fractions allowed); offset
//! and size in **bytes**; op 1 = read, 0 = write; dev = devno (the replayers ignore it, the
//! reader keeps it). Extra fields are ignored.
//!
//! The columns are DiskSim's (and MQSim's) with byte units instead of 512-byte sectors, so
//! detection never picks `linnos` over them on its own: see `detect`.

use super::fields::{dev_columns, op_code, request, LineResult, ONE_READ};

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let (t, dev, off, len, op) = dev_columns(
        line,
        ["field 1 (ts_ms)", "field 3 (offset_B)", "field 4 (size_B)"],
        1,
    )?;
    let op = op_code(op, &ONE_READ, "field 5 (op)", "1 (read) or 0 (write)")?;
    request(t * 1e3, op, off, len, dev)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::{Op, Request};

    #[test]
    fn parses_linnos() {
        check(
            parse,
            &[
                (
                    "12.5 3 1073741824 65536 1",
                    Request::new(12500.0, Op::Read, 1 << 30, 65536, 3),
                ),
                (
                    "0\t0\t134217728\t4096\t0",
                    Request::new(0.0, Op::Write, 1 << 27, 4096, 0),
                ),
            ],
            &[
                ("0 0 4096 4096 2", "field 5 (op) \"2\""),
                ("0 0 4096 4k 1", "field 4 (size_B)"),
                ("0 0 4096 4096", "at least 5"),
                ("0 0 18446744073709551615 1 1", "overflows"),
            ],
        );
    }
}
