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
    csv, latency, num, op_code, request_measured, uint, LineResult, Parsed, ONE_READ,
};

pub(crate) struct Parser {
    /// Time from `ts_submit_ms` (else `ts_record_ms`).
    pub(crate) submit: bool,
}

impl Parser {
    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let Some(f) = csv::<7>(line, None)? else {
            return Ok(Parsed::Other);
        };
        let record = num(f[0], "field 1 (ts_record_ms)")?;
        let lat = latency(f[1], 1.0, "field 2 (latency_us)")?;
        let op = op_code(
            f[2],
            &ONE_READ,
            "field 3 (io_type)",
            "1 (read) or 0 (write)",
        )?;
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
    use super::super::fields::check;
    use super::*;
    use crate::request::{Op, Request};

    /// `r` with the measured latency `us`.
    fn measured(r: Request, us: f32) -> Request {
        Request {
            measured_us: us,
            ..r
        }
    }

    #[test]
    fn parses_flashnet() {
        let line = "147000.000,2277,1,69632,2809856,147005.484,69632";
        let read = |t| measured(Request::new(t, Op::Read, 2809856, 69632, 0), 2277.0);
        let write = measured(Request::new(91.0, Op::Write, 4923392, 4096, 0), 120.0);
        check(
            |l| Parser { submit: true }.parse(l),
            &[
                (line, read(147005.484e3)),
                ("0.000,120,0,4096,4923392,0.091,4096", write),
            ],
            &[],
        );
        check(
            |l| Parser { submit: false }.parse(l),
            &[(line, read(147_000_000.0))],
            &[],
        );
    }

    #[test]
    fn names_the_bad_field() {
        check(
            |l| Parser { submit: true }.parse(l),
            &[],
            &[
                ("0,120,2,4096,0,0.1,4096", "field 3 (io_type) \"2\""),
                ("0,-5,1,4096,0,0.1,4096", "field 2 (latency_us)"),
                ("0,1e300,1,4096,0,0.1,4096", "too large"),
                ("0,5,1,4k,0,0.1,4096", "field 4 (size_B)"),
                ("0,5,1,4096,0,x,4096", "field 6 (ts_submit_ms)"),
                ("0,5,1,4096,0,0.1", "at least 7"),
                ("0.000,120,1,4096,4923392,0.091,big", "field 7"),
            ],
        );
    }
}
