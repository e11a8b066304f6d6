//! LinnOS / FlashNet replayer input (also Heimdall's): `ts_ms devno offset_B size_B op`.
//!
//! The trace the LinnOS and FlashNet replayers replay on a device (their output is the
//! `flashnet` format). Whitespace-separated; time in milliseconds (fractions allowed); offset
//! and size in **bytes**; op 1 = read, 0 = write; dev = devno (the replayers ignore it, the
//! reader keeps it). Extra fields are ignored.
//!
//! The columns are DiskSim's (and MQSim's) with byte units instead of 512-byte sectors, so
//! detection never picks `linnos` over them on its own: see `detect`.

use super::fields::{dev_columns, request, show, LineResult};
use crate::request::Op;

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (t, dev, off, len, op) = dev_columns(
            line,
            ["field 1 (ts_ms)", "field 3 (offset_B)", "field 4 (size_B)"],
            1,
        )?;
        let op = match op {
            "1" => Op::Read,
            "0" => Op::Write,
            s => {
                return Err(format!(
                    "field 5 (op) {} is not 1 (read) or 0 (write)",
                    show(s)
                ))
            }
        };
        request(t * 1e3, op, off, len, dev)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;

    #[test]
    fn parses_linnos() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("12.5 3 1073741824 65536 1").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev, r.measured()),
            (Op::Read, 1 << 30, 65536, 3, None)
        );
        assert_eq!(r.time_us, 12500.0);
        let Parsed::Req(r) = p.parse("0\t0\t134217728\t4096\t0").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes),
            (Op::Write, 1 << 27, 4096)
        );
        assert!(p
            .parse("0 0 4096 4096 2")
            .unwrap_err()
            .contains("field 5 (op) \"2\""));
        assert!(p
            .parse("0 0 4096 4k 1")
            .unwrap_err()
            .contains("field 4 (size_B)"));
        assert!(p.parse("0 0 4096 4096").unwrap_err().contains("at least 5"));
        assert!(p
            .parse("0 0 18446744073709551615 1 1")
            .unwrap_err()
            .contains("overflows"));
    }
}
