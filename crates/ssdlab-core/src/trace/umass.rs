//! UMass Trace Repository / SPC CSV (Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp`.
//!
//! LBA in 512-byte sectors, Size in bytes, Opcode `r`/`w` (case-insensitive; `read`/`write`
//! accepted), Timestamp in seconds. Extra trailing fields are ignored. dev = ASU.

use super::fields::{csv, num, op_rw, request, scale, uint, uint32, LineResult, Parsed};

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let Some(f) = csv::<5>(line, None)? else {
        return Ok(Parsed::Other);
    };
    let dev = uint32(f[0], "field 1 (ASU)")?;
    let lba = uint(f[1], "field 2 (LBA)")?;
    let len = uint(f[2], "field 3 (Size)")?;
    let op = op_rw(f[3], "field 4 (Opcode)")?;
    let t = num(f[4], "field 5 (Timestamp)")?;
    request(t * 1e6, op, scale(lba, 512, "LBA")?, len, dev)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::{Op, Request};

    #[test]
    fn parses_umass() {
        check(
            parse,
            &[(
                "2,20941264,8192,W,0.551706,extra",
                Request::new(551706.0, Op::Write, 20941264 * 512, 8192, 2),
            )],
            &[("0,1,2,x,0.1", "Opcode"), ("0,1,2,r", "at least 5")],
        );
    }
}
