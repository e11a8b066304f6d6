//! DiskSim ASCII traces: `time_ms devno start_sector size_sectors flags`.
//!
//! Whitespace-separated; 512-byte sectors; time in milliseconds (fractional); flags is an
//! integer whose bit 0 set means read, clear means write. Extra fields are ignored.

use super::fields::{dev_columns, request, uint, LineResult};
use crate::request::Op;

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
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
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;

    #[test]
    fn parses_disksim() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("13.191135\t30\t7\t5\t1").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev),
            (Op::Read, 3584, 2560, 30)
        );
        assert!((r.time_us - 13191.135).abs() < 1e-6);
        let Parsed::Req(r) = p.parse("0.5 1 0 8 2").unwrap() else {
            panic!()
        };
        assert_eq!(r.op, Op::Write);
        assert!(p.parse("0.5 1 0 8").unwrap_err().contains("at least 5"));
        assert!(p.parse("-1 1 0 8 0").unwrap_err().contains("negative"));
    }
}
