//! FlashNet / LinnOS replayer output: a block trace replayed on a real device, with the latency
//! of every request. CSV without header:
//! `ts_record_ms,latency_us,io_type,size_B,offset_B,ts_submit_ms,size_after_replay`.
//!
//! `ts_record_ms` is the original trace's arrival time, `ts_submit_ms` the time the replayer
//! actually submitted the request (both in ms, fractions allowed); io_type 1 = read, 0 = write;
//! size and offset in bytes; `latency_us` is what the device took, kept as the request's
//! measured latency. dev = 0. `size_after_replay` (the bytes the replay transferred) is checked
//! but not used; later fields are ignored.
//!
//! The request's time is `ts_submit_ms` by default: the replayer often ran behind the record
//! times (and these may have 1 s resolution), so the submit times are the load the device
//! actually saw, the one its latencies were measured under. `timestamp = "record"` replays the
//! record times instead.

use super::fields::{
    latency, num, request_measured, show, split_fields, too_few, uint, LineResult,
};
use crate::request::Op;

pub(crate) struct Parser {
    /// Time from `ts_submit_ms` (else `ts_record_ms`).
    pub(crate) submit: bool,
}

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_fields::<7>(line, ',');
        if n < 7 {
            return Err(too_few(line, Some(','), 7));
        }
        let record = num(f[0], "field 1 (ts_record_ms)")?;
        let lat = latency(f[1], 1.0, "field 2 (latency_us)")?;
        let op = match f[2] {
            "1" => Op::Read,
            "0" => Op::Write,
            s => {
                return Err(format!(
                    "field 3 (io_type) {} is not 1 (read) or 0 (write)",
                    show(s)
                ))
            }
        };
        let len = uint(f[3], "field 4 (size_B)")?;
        let off = uint(f[4], "field 5 (offset_B)")?;
        let submit = num(f[5], "field 6 (ts_submit_ms)")?;
        uint(f[6], "field 7 (size_after_replay)")?;
        let t = if self.submit { submit } else { record };
        request_measured(t * 1e3, op, off, len, 0, lat)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::Parsed;
    use super::*;

    fn req(p: &mut Parser, line: &str) -> crate::request::Request {
        match p.parse(line) {
            Ok(Parsed::Req(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_flashnet() {
        let line = "147000.000,2277,1,69632,2809856,147005.484,69632";
        let r = req(&mut Parser { submit: true }, line);
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev, r.measured()),
            (Op::Read, 2809856, 69632, 0, Some(2277.0))
        );
        assert_eq!(r.time_us, 147005.484e3);
        let r = req(&mut Parser { submit: false }, line);
        assert_eq!(r.time_us, 147_000_000.0);
        let r = req(
            &mut Parser { submit: true },
            "0.000,120,0,4096,4923392,0.091,4096",
        );
        assert_eq!((r.op, r.time_us, r.measured_us), (Op::Write, 91.0, 120.0));
    }

    #[test]
    fn names_the_bad_field() {
        let mut p = Parser { submit: true };
        let mut err = |l: &str| p.parse(l).unwrap_err();
        assert!(err("0,120,2,4096,0,0.1,4096").contains("field 3 (io_type) \"2\""));
        assert!(err("0,-5,1,4096,0,0.1,4096").contains("field 2 (latency_us)"));
        assert!(err("0,1e300,1,4096,0,0.1,4096").contains("too large"));
        assert!(err("0,5,1,4k,0,0.1,4096").contains("field 4 (size_B)"));
        assert!(err("0,5,1,4096,0,x,4096").contains("field 6 (ts_submit_ms)"));
        assert!(err("0,5,1,4096,0,0.1").contains("at least 7"));
        assert!(err("0.000,120,1,4096,4923392,0.091,big").contains("field 7"));
    }
}
