//! UMass Trace Repository / SPC CSV (Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp`.
//!
//! LBA in 512-byte sectors, Size in bytes, Opcode `r`/`w` (case-insensitive; `read`/`write`
//! accepted), Timestamp in seconds. Extra trailing fields are ignored. dev = ASU.

use super::fields::{num, op_rw, request, scale, split_fields, too_few, uint, uint32, LineResult};

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<5>(line, ',');
        if n < 5 {
            return Err(too_few(line, Some(','), 5));
        }
        let dev = uint32(f[0], "field 1 (ASU)")?;
        let lba = uint(f[1], "field 2 (LBA)")?;
        let len = uint(f[2], "field 3 (Size)")?;
        let op = op_rw(f[3], "field 4 (Opcode)")?;
        let t = num(f[4], "field 5 (Timestamp)")?;
        request(t * 1e6, op, scale(lba, 512, "LBA")?, len, dev)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;
    use crate::request::Op;

    #[test]
    fn parses_umass() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("2,20941264,8192,W,0.551706,extra").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev),
            (Op::Write, 20941264 * 512, 8192, 2)
        );
        assert!((r.time_us - 551706.0).abs() < 1e-6);
        assert!(p.parse("0,1,2,x,0.1").unwrap_err().contains("Opcode"));
        assert!(p.parse("0,1,2,r").unwrap_err().contains("at least 5"));
    }
}
