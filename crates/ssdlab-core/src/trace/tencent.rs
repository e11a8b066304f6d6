//! SNIA Tencent CBS block traces: `timestamp_s,offset_sectors,size_sectors,iotype,volume_id`.
//!
//! 512-byte sectors; iotype 0 = read, 1 = write; dev = volume_id. Extra fields are ignored.
//! The published files have no header; a header line whose first field is `timestamp`
//! (any case) is skipped all the same.

use super::fields::{csv, num, op_code, request, scale, uint, uint32, LineResult, Parsed};
use crate::request::Op;

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let Some(f) = csv::<5>(line, Some("timestamp"))? else {
        return Ok(Parsed::Other);
    };
    let t = num(f[0], "field 1 (timestamp)")?;
    let off = uint(f[1], "field 2 (offset)")?;
    let len = uint(f[2], "field 3 (size)")?;
    let op = op_code(
        f[3],
        &[("0", Op::Read), ("1", Op::Write)],
        "field 4 (iotype)",
        "0 (read) or 1 (write)",
    )?;
    let dev = uint32(f[4], "field 5 (volume_id)")?;
    request(
        t * 1e6,
        op,
        scale(off, 512, "offset")?,
        scale(len, 512, "size")?,
        dev,
    )
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::Request;

    #[test]
    fn parses_tencent() {
        check(
            parse,
            &[(
                "1538323200,100,8,1,1063",
                Request::new(1538323200e6, Op::Write, 51200, 4096, 1063),
            )],
            &[("1,1,1,2,3", "iotype")],
        );
    }
}
