//! WiscSee ftlsim event files (`blkparse-events-for-ftlsim.txt`):
//! `pid action op offset_B size_B time_s delta sync`.
//!
//! Whitespace-separated; action D (dispatch) records are the requests, C (completion)
//! records are checked and skipped; op `read`, `write` or `discard` (→ trim); offset and
//! size in bytes; time in seconds. dev = 0. Fields after time are ignored.

use super::fields::{num, op_code, request, show, split_ws, too_few, uint, LineResult, Parsed};
use crate::request::Op;

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let (f, n) = split_ws::<6>(line);
    if n < 6 {
        return Err(too_few(line, None, 6));
    }
    uint(f[0], "field 1 (pid)")?;
    let dispatch = match f[1] {
        "D" => true,
        "C" => false,
        s => return Err(format!("field 2 (action) {} is not D or C", show(s))),
    };
    let op = op_code(
        f[2],
        &[
            ("write", Op::Write),
            ("read", Op::Read),
            ("discard", Op::Trim),
        ],
        "field 3 (op)",
        "read, write or discard",
    )?;
    let off = uint(f[3], "field 4 (offset)")?;
    let len = uint(f[4], "field 5 (size)")?;
    let t = num(f[5], "field 6 (time)")?;
    if !dispatch {
        return Ok(Parsed::Record);
    }
    request(t * 1e6, op, off, len, 0)
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::Request;

    #[test]
    fn parses_wiscsee() {
        assert_eq!(
            parse("0 C read 299008 4096 0.000122793 0.000122793 False"),
            Ok(Parsed::Record)
        );
        check(
            parse,
            &[(
                "39949 D discard 299008 4096 0.5 0 False",
                Request::new(500000.0, Op::Trim, 299008, 4096, 0),
            )],
            &[
                ("0 X read 1 1 0.1 0 False", "action"),
                ("0 D flush 1 1 0.1 0 False", "op"),
            ],
        );
    }
}
