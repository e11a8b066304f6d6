//! SYSTOR'17 (Fujitsu VDI) CSV: header `Timestamp,Response,IOType,LUN,Offset,Size`.
//!
//! Timestamp in Unix seconds, IOType `R`/`W` (case-insensitive), Offset and Size in bytes;
//! dev = LUN. The header line is skipped (a file without it reads all the same, but
//! auto-detection needs it). Response, the measured response time in seconds, is kept as the
//! request's measured latency (µs;
//! an empty Response: none).

use super::fields::{
    csv, latency, num, op_rw, request_measured, split_fields, uint, uint32, LineResult, Parsed,
};

pub(crate) fn is_header(line: &str) -> bool {
    let (f, _) = split_fields::<1>(line, ',');
    f[0].eq_ignore_ascii_case("timestamp")
}

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let Some(f) = csv::<6>(line, Some("timestamp"))? else {
        return Ok(Parsed::Other);
    };
    let t = num(f[0], "field 1 (Timestamp)")?;
    let measured = match f[1] {
        "" => f32::NAN,
        s => latency(s, 1e6, "field 2 (Response)")?,
    };
    let op = op_rw(f[2], "field 3 (IOType)")?;
    let dev = uint32(f[3], "field 4 (LUN)")?;
    let off = uint(f[4], "field 5 (Offset)")?;
    let len = uint(f[5], "field 6 (Size)")?;
    request_measured(t * 1e6, op, off, len, dev, measured)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::{Op, Request};

    #[test]
    fn parses_systor() {
        assert_eq!(
            parse("Timestamp,Response,IOType,LUN,Offset,Size"),
            Ok(Parsed::Other)
        );
        let want = Request::new(1456095145133076.0, Op::Read, 899056122368, 131072, 3);
        check(
            parse,
            &[(
                "1456095145.133076000,0.000806000,R,3,899056122368,131072",
                Request {
                    measured_us: 806.0,
                    ..want
                },
            )],
            &[
                ("1,-0.1,R,0,1,1", "field 2 (Response)"),
                ("1,0,Q,0,1,1", "IOType"),
            ],
        );
    }
}
