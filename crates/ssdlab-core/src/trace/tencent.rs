//! SNIA Tencent CBS block traces: `timestamp_s,offset_sectors,size_sectors,iotype,volume_id`.
//!
//! 512-byte sectors; iotype 0 = read, 1 = write; dev = volume_id. Extra fields are ignored.
//! The published files have no header; a header line whose first field is `timestamp`
//! (any case) is skipped all the same.

use super::fields::{num, request, scale, show, split_fields, too_few, uint, uint32, LineResult};
use crate::request::Op;

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<5>(line, ',');
        if f[0].eq_ignore_ascii_case("timestamp") {
            return Ok(super::fields::Parsed::Other);
        }
        if n < 5 {
            return Err(too_few(line, Some(','), 5));
        }
        let t = num(f[0], "field 1 (timestamp)")?;
        let off = uint(f[1], "field 2 (offset)")?;
        let len = uint(f[2], "field 3 (size)")?;
        let op = match f[3] {
            "0" => Op::Read,
            "1" => Op::Write,
            s => {
                return Err(format!(
                    "field 4 (iotype) {} is not 0 (read) or 1 (write)",
                    show(s)
                ))
            }
        };
        let dev = uint32(f[4], "field 5 (volume_id)")?;
        request(
            t * 1e6,
            op,
            scale(off, 512, "offset")?,
            scale(len, 512, "size")?,
            dev,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;

    #[test]
    fn parses_tencent() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("1538323200,100,8,1,1063").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev),
            (Op::Write, 51200, 4096, 1063)
        );
        assert_eq!(r.time_us, 1538323200e6);
        assert!(p.parse("1,1,1,2,3").unwrap_err().contains("iotype"));
    }
}
