//! blkreplay load files (e.g. the 1&1 "natural" example loads).
//!
//! Optional free-text licence/comment lines, a column header line starting with `start`
//! (`start ; sector; length ; op ; ...`), then records `start_s ; sector ; length_sectors ;
//! R|W ; ...` with whitespace around the fields and extra fields ignored. 512-byte sectors;
//! dev = 0. Before the header (or the first record) any line that does not look like a
//! record (a `;`-separated line whose first field is a number) is taken as licence text;
//! after it, every line must be a valid record.

use super::fields::{num, op_rw, request, scale, split_fields, too_few, uint, LineResult, Parsed};

#[derive(Default)]
pub(crate) struct Parser {
    /// The header or a record has been seen: from now on lines are strict.
    started: bool,
}

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<4>(line, ';');
        if !self.started {
            if n >= 2 && f[0].eq_ignore_ascii_case("start") {
                self.started = true;
                return Ok(Parsed::Other);
            }
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
        let op = op_rw(f[3], "field 4 (op)")?;
        request(t * 1e6, op, scale(sector, 512, "sector")?, scale(len, 512, "length")?, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    #[test]
    fn parses_blkreplay() {
        let mut p = Parser::default();
        assert_eq!(p.parse("Copyright Someone"), Ok(Parsed::Other));
        assert_eq!(p.parse("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0"), Ok(Parsed::Other));
        let Parsed::Req(r) = p.parse("0.449518165 ;     37766917 ;   14 ; W ; 0.0 ; 0.0").unwrap() else {
            panic!()
        };
        assert_eq!((r.op, r.offset_bytes, r.len_bytes), (Op::Write, 37766917 * 512, 14 * 512));
        assert!(p.parse("free text after the header").is_err());
        let mut p = Parser::default();
        assert!(matches!(p.parse("1.0 ; 8 ; 8 ; R"), Ok(Parsed::Req(_))));
        assert!(p.parse("1.0 ; 8 ; 8 ; X").unwrap_err().contains("op"));
    }
}
