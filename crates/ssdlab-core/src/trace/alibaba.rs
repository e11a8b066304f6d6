//! Alibaba Cloud block-trace CSV: `device_id,opcode,offset,length,timestamp`.
//!
//! opcode `R` or `W` (case-insensitive); offset and length in bytes; timestamp in µs;
//! dev = device_id. No header in the published files; a header line whose first field is
//! `device_id` is skipped. Fields after the fifth are ignored.

use super::fields::{csv, num, op_rw, request, uint, uint32, LineResult, Parsed};

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let Some(f) = csv::<5>(line, Some("device_id"))? else {
        return Ok(Parsed::Other);
    };
    let dev = uint32(f[0], "field 1 (device_id)")?;
    let op = op_rw(f[1], "field 2 (opcode)")?;
    let off = uint(f[2], "field 3 (offset)")?;
    let len = uint(f[3], "field 4 (length)")?;
    let t = num(f[4], "field 5 (timestamp)")?;
    request(t, op, off, len, dev)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::{Op, Request};

    #[test]
    fn parses_alibaba() {
        assert_eq!(
            parse("device_id,opcode,offset,length,timestamp"),
            Ok(Parsed::Other)
        );
        check(
            parse,
            &[(
                "12,W,8192,4096,1577808000000123",
                Request::new(1577808000000123.0, Op::Write, 8192, 4096, 12),
            )],
            &[("1,X,0,512,1", "opcode"), ("1,R,0,512", "at least 5")],
        );
    }
}
