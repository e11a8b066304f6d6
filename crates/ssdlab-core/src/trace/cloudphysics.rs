//! CloudPhysics VMware block trace as CSV (libCacheSim `cloudPhysicsIO.csv`):
//! header `version,time,op,size,lbn`.
//!
//! time in whole seconds (the CSV is derived from the `vscsi` binary form of the same
//! trace, whose µs stamps it divides by 1,000,000: `cloudPhysicsIO.csv` and
//! `cloudPhysicsIO.vscsi` agree record for record on op, size and lbn, and the CSV time is
//! the vscsi time / 10⁶ rounded down); op = SCSI opcode in hex (`28`/`2a` READ(10)/WRITE(10), `08`/`0a` READ(6)/
//! WRITE(6), `88`/`8a` READ(16)/WRITE(16), `a8`/`aa` READ(12)/WRITE(12); an optional `0x`
//! prefix is accepted); size in bytes; lbn in 512-byte sectors. Other opcodes are malformed
//! records. The trace has no device column: dev = 0.

use super::fields::{csv, num, request, scale, show, split_fields, uint, LineResult, Parsed};
use crate::request::Op;

pub(crate) fn is_header(line: &str) -> bool {
    let (f, n) = split_fields::<2>(line, ',');
    n == 2 && f[0].eq_ignore_ascii_case("version") && f[1].eq_ignore_ascii_case("time")
}

#[inline]
fn scsi_op(s: &str) -> std::result::Result<Op, String> {
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    match u8::from_str_radix(h, 16) {
        Ok(0x28 | 0x08 | 0x88 | 0xa8) => Ok(Op::Read),
        Ok(0x2a | 0x0a | 0x8a | 0xaa) => Ok(Op::Write),
        Ok(_) => Err(format!(
            "field 3 (op) SCSI opcode {} is neither a READ (28, 08, 88, a8) nor a WRITE (2a, 0a, 8a, aa)",
            show(s)
        )),
        Err(_) => Err(format!("field 3 (op) {} is not a hexadecimal SCSI opcode", show(s))),
    }
}

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let Some(f) = csv::<5>(line, Some("version"))? else {
        return Ok(Parsed::Other);
    };
    uint(f[0], "field 1 (version)")?;
    let t = num(f[1], "field 2 (time)")?;
    let op = scsi_op(f[2])?;
    let len = uint(f[3], "field 4 (size)")?;
    let lbn = uint(f[4], "field 5 (lbn)")?;
    request(t * 1e6, op, scale(lbn, 512, "lbn")?, len, 0)
}

#[cfg(test)]
mod tests {
    use super::super::fields::{err, req};
    use super::*;

    #[test]
    fn parses_cloudphysics() {
        assert!(is_header("version,time,op,size,lbn"));
        assert_eq!(parse("version,time,op,size,lbn"), Ok(Parsed::Other));
        let r = req(parse("1,5633898,2a,512,42932745"));
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.time_us),
            (Op::Write, 42932745 * 512, 512, 5633898e6)
        );
        for (code, op) in [
            ("28", Op::Read),
            ("0x88", Op::Read),
            ("A8", Op::Read),
            ("0a", Op::Write),
            ("8A", Op::Write),
        ] {
            assert_eq!(req(parse(&format!("1,1,{code},512,1"))).op, op, "{code}");
        }
        assert!(err(parse("1,1,35,512,1")).contains("SCSI opcode \"35\""));
        assert!(err(parse("1,1,zz,512,1")).contains("hexadecimal"));
    }
}
