//! WiscSee ftlsim event files (`blkparse-events-for-ftlsim.txt`):
//! `pid action op offset_B size_B time_s delta sync`.
//!
//! Whitespace-separated; action D (dispatch) records are the requests, C (completion)
//! records are checked and skipped; op `read`, `write` or `discard` (→ trim); offset and
//! size in bytes; time in seconds. dev = 0. Fields after time are ignored.

use super::fields::{num, request, show, split_ws, too_few, uint, LineResult, Parsed};
use crate::request::Op;

pub(crate) struct Parser;

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
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
        let op = if f[2].eq_ignore_ascii_case("write") {
            Op::Write
        } else if f[2].eq_ignore_ascii_case("read") {
            Op::Read
        } else if f[2].eq_ignore_ascii_case("discard") {
            Op::Trim
        } else {
            return Err(format!(
                "field 3 (op) {} is not read, write or discard",
                show(f[2])
            ));
        };
        let off = uint(f[3], "field 4 (offset)")?;
        let len = uint(f[4], "field 5 (size)")?;
        let t = num(f[5], "field 6 (time)")?;
        if !dispatch {
            return Ok(Parsed::Record);
        }
        request(t * 1e6, op, off, len, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_wiscsee() {
        let mut p = Parser;
        let Parsed::Req(r) = p.parse("39949 D discard 299008 4096 0.5 0 False").unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.time_us),
            (Op::Trim, 299008, 4096, 500000.0)
        );
        assert_eq!(
            p.parse("0 C read 299008 4096 0.000122793 0.000122793 False"),
            Ok(Parsed::Record)
        );
        assert!(p
            .parse("0 X read 1 1 0.1 0 False")
            .unwrap_err()
            .contains("action"));
        assert!(p
            .parse("0 D flush 1 1 0.1 0 False")
            .unwrap_err()
            .contains("op"));
    }
}
