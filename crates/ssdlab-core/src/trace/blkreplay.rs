//! blkreplay load files (e.g. the 1&1 "natural" example loads).
//!
//! Optional free-text licence/comment lines and a column header line starting with `start`
//! (`start ; sector; length ; op ; ...`; some files repeat the licence block and the header),
//! then records `start_s ; sector ; length_sectors ; op ; ...` with whitespace around the
//! fields and extra fields ignored. 512-byte sectors; dev = 0. op is `R` or `W`, possibly
//! with blktrace RWBS-style suffixes (`RA` = read-ahead → read; `WS` → write).
//!
//! Until the first record, any line that does not look like a record (a `;`-separated line
//! whose first field is a number) is taken as licence or header text. From the first record
//! on, every line must be a valid record, except repeated `start ;` header lines.

use super::fields::{num, request, scale, show, split_fields, too_few, uint, LineResult, Parsed};
use crate::request::Op;

#[derive(Default)]
pub(crate) struct Parser {
    /// The header or a record has been seen: from now on lines are strict.
    started: bool,
}

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<4>(line, ';');
        if n >= 2 && f[0].eq_ignore_ascii_case("start") {
            return Ok(Parsed::Other);
        }
        if !self.started {
            if n < 2 || num(f[0], "").is_err() {
                return Ok(Parsed::Other);
            }
            self.started = true;
        }
        if n < 4 {
            return Err(too_few(line, Some(';'), 4));
        }
        let t = num(f[0], "field 1 (start)")?;
        let sector = uint(f[1], "field 2 (sector)")?;
        let len = uint(f[2], "field 3 (length)")?;
        let op = op_letter(f[3])?;
        request(
            t * 1e6,
            op,
            scale(sector, 512, "sector")?,
            scale(len, 512, "length")?,
            0,
        )
    }
}

/// `R`/`W` with optional RWBS-style flag letters after it (`RA`, `WS`, `WM`...).
#[inline]
fn op_letter(s: &str) -> std::result::Result<Op, String> {
    let b = s.as_bytes();
    let op = match b.first() {
        Some(b'R' | b'r') => Op::Read,
        Some(b'W' | b'w') => Op::Write,
        _ => return Err(format!("field 4 (op) {} is not R or W", show(s))),
    };
    if !b[1..].iter().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!("field 4 (op) {} is not R or W", show(s)));
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::super::fields::{err, req};
    use super::*;

    #[test]
    fn parses_blkreplay() {
        let mut p = Parser::default();
        assert_eq!(p.parse("Copyright Someone"), Ok(Parsed::Other));
        assert_eq!(
            p.parse("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0"),
            Ok(Parsed::Other)
        );
        assert_eq!(
            p.parse("more licence text after the header"),
            Ok(Parsed::Other)
        );
        let r = req(p.parse("0.449518165 ;     37766917 ;   14 ; W ; 0.0 ; 0.0"));
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes),
            (Op::Write, 37766917 * 512, 14 * 512)
        );
        assert_eq!(req(p.parse("0.5 ; 1 ; 8 ; RA ; 0.0 ; 0.0")).op, Op::Read);
        assert!(p.parse("free text after the first record").is_err());
        assert_eq!(p.parse("start ; sector; length ; op"), Ok(Parsed::Other));
        let mut p = Parser::default();
        assert!(matches!(p.parse("1.0 ; 8 ; 8 ; R"), Ok(Parsed::Req(_))));
        assert!(err(p.parse("1.0 ; 8 ; 8 ; X")).contains("op"));
    }
}
