//! Alibaba Cloud block-trace CSV: `device_id,opcode,offset,length,timestamp`.
//!
//! opcode `R` or `W` (case-insensitive); offset and length in bytes; timestamp in µs;
//! dev = device_id. No header in the published files; a header line whose first field is
//! `device_id` is skipped. Fields after the fifth are ignored.

use super::fields::{num, op_rw, request, split_fields, too_few, uint, uint32, LineResult, Parsed};

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<5>(line, ',');
        if f[0].eq_ignore_ascii_case("device_id") {
            return Ok(Parsed::Other);
        }
        if n < 5 {
            return Err(too_few(line, Some(','), 5));
        }
        let dev = uint32(f[0], "field 1 (device_id)")?;
        let op = op_rw(f[1], "field 2 (opcode)")?;
        let off = uint(f[2], "field 3 (offset)")?;
        let len = uint(f[3], "field 4 (length)")?;
        let t = num(f[4], "field 5 (timestamp)")?;
        request(t, op, off, len, dev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    #[test]
    fn parses_alibaba() {
        let mut p = Parser;
        assert_eq!(
            p.parse("device_id,opcode,offset,length,timestamp"),
            Ok(Parsed::Other)
        );
        let Parsed::Req(r) = p.parse("12,W,8192,4096,1577808000000123").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev, r.time_us),
            (Op::Write, 8192, 4096, 12, 1577808000000123.0)
        );
        assert!(p.parse("1,X,0,512,1").unwrap_err().contains("opcode"));
        assert!(p.parse("1,R,0,512").unwrap_err().contains("at least 5"));
    }
}
