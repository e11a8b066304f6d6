//! MQSim ASCII traces: `time_ns devno start_sector size_sectors type`.
//!
//! Whitespace-separated; 512-byte sectors; time in nanoseconds; type 0 = write, 1 = read.
//! Extra fields are ignored.

use super::fields::{dev_columns, request, show, LineResult};
use crate::request::Op;

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (t, dev, off, len, op) = dev_columns(
            line,
            [
                "field 1 (time_ns)",
                "field 3 (start_sector)",
                "field 4 (size_sectors)",
            ],
            512,
        )?;
        let op = match op {
            "0" => Op::Write,
            "1" => Op::Read,
            s => {
                return Err(format!(
                    "field 5 (type) {} is not 0 (write) or 1 (read)",
                    show(s)
                ))
            }
        };
        request(t / 1e3, op, off, len, dev)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;

    #[test]
    fn parses_mqsim() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("11413000 0 657728 16 1").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev),
            (Op::Read, 657728 * 512, 8192, 0)
        );
        assert_eq!(r.time_us, 11413.0);
        let Parsed::Req(r) = p.parse("1 3 0 8 0").unwrap() else {
            panic!()
        };
        assert_eq!((r.op, r.dev), (Op::Write, 3));
        assert!(p.parse("1 3 0 8 2").unwrap_err().contains("type"));
    }
}
