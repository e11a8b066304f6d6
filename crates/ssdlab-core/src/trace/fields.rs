//! Allocation-free field splitting and number parsing shared by the text parsers.
//!
//! Every helper returns `Err(String)` describing the field and the offending value; the
//! reader adds the file, the line, the format name and its layout.

use crate::request::{Op, Request};

/// What a text parser made of one line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Parsed {
    /// A data request.
    Req(Request),
    /// A valid record of the format that is not a request (a completion event, a flush,
    /// a blkparse action that was not selected, ...). Counts as evidence in detection.
    Record,
    /// Not a record: a header, a summary or licence line.
    Other,
    /// The completion of an earlier request (blkparse C while D is replayed): its time, op and
    /// place, for the reader to match to the request and measure its latency.
    Done(Request),
}

pub(crate) type LineResult = std::result::Result<Parsed, String>;

/// Split `line` on the ASCII separator `sep` into at most `N` trimmed fields; returns the
/// fields and how many were found (at most `N`; further fields are ignored).
#[inline]
pub(crate) fn split_fields<const N: usize>(line: &str, sep: char) -> ([&str; N], usize) {
    debug_assert!(sep.is_ascii());
    let sep = sep as u8;
    let mut out = [""; N];
    let mut n = 0;
    let mut start = 0;
    for (i, &c) in line.as_bytes().iter().enumerate() {
        if c == sep {
            // `sep` is ASCII, so `start..i` lies on character boundaries.
            out[n] = line[start..i].trim_ascii();
            n += 1;
            if n == N {
                return (out, n);
            }
            start = i + 1;
        }
    }
    if n < N {
        out[n] = line[start..].trim_ascii();
        n += 1;
    }
    (out, n)
}

/// The `N` comma-separated fields of a CSV record that needs all `N` (further fields are
/// ignored); `None` for a header line, whose first field is `header` (any case).
#[inline]
pub(crate) fn csv<'a, const N: usize>(
    line: &'a str,
    header: Option<&str>,
) -> std::result::Result<Option<[&'a str; N]>, String> {
    let (f, n) = split_fields::<N>(line, ',');
    if header.is_some_and(|h| f[0].eq_ignore_ascii_case(h)) {
        return Ok(None);
    }
    if n < N {
        return Err(too_few(line, Some(','), N));
    }
    Ok(Some(f))
}

/// Split on ASCII whitespace into at most `N` fields.
#[inline]
pub(crate) fn split_ws<const N: usize>(line: &str) -> ([&str; N], usize) {
    let mut out = [""; N];
    let mut n = 0;
    for f in line.split_ascii_whitespace() {
        if n == N {
            break;
        }
        out[n] = f;
        n += 1;
    }
    (out, n)
}

/// A value for an error message: quoted, control characters escaped, shortened when long.
pub(crate) fn show(s: &str) -> String {
    const MAX: usize = 48;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let short: String = s.chars().take(MAX).collect();
        format!("{short:?}…")
    }
}

/// Error for a line with too few fields (slow path: counts the fields again).
pub(crate) fn too_few(line: &str, sep: Option<char>, need: usize) -> String {
    let found = match sep {
        Some(c) => line.split(c).count(),
        None => line.split_ascii_whitespace().count(),
    };
    let how = match sep {
        Some(',') => "comma-separated ".to_string(),
        Some(';') => "';'-separated ".to_string(),
        Some(c) => format!("{c:?}-separated "),
        None => "whitespace-separated ".to_string(),
    };
    format!(
        "expected at least {need} {how}fields, found {found} in {}",
        show(line)
    )
}

#[inline]
pub(crate) fn uint(s: &str, what: &str) -> std::result::Result<u64, String> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return Err(bad_uint(s, what));
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad_uint(s, what));
        }
        v = match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d))) {
            Some(v) => v,
            None => return Err(bad_uint(s, what)),
        };
    }
    Ok(v)
}

#[cold]
fn bad_uint(s: &str, what: &str) -> String {
    if s.is_empty() {
        format!("{what} is empty")
    } else if s.starts_with('-') {
        format!("{what} {} is negative", show(s))
    } else if s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{what} {} is too large", show(s))
    } else {
        format!("{what} {} is not a non-negative integer", show(s))
    }
}

#[inline]
pub(crate) fn uint32(s: &str, what: &str) -> std::result::Result<u32, String> {
    let v = uint(s, what)?;
    u32::try_from(v).map_err(|_| format!("{what} {} does not fit in 32 bits", show(s)))
}

/// A finite, non-negative decimal number (integer, fraction or exponent form).
#[inline]
pub(crate) fn num(s: &str, what: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v + 0.0),
        Ok(v) if v < 0.0 => Err(format!("{what} {} is negative", show(s))),
        _ => Err(bad_num(s, what)),
    }
}

#[cold]
fn bad_num(s: &str, what: &str) -> String {
    if s.is_empty() {
        format!("{what} is empty")
    } else {
        format!("{what} {} is not a finite non-negative number", show(s))
    }
}

/// `v * unit` bytes, with an overflow check.
#[inline]
pub(crate) fn scale(v: u64, unit: u64, what: &str) -> std::result::Result<u64, String> {
    v.checked_mul(unit)
        .ok_or_else(|| format!("{what} {v} × {unit} bytes overflows 64 bits"))
}

/// The five whitespace-separated columns DiskSim, MQSim and LinnOS share, `time devno offset
/// size op` (extra fields ignored): the time as written, the dev, the offset and size times
/// `unit_bytes`, and the op field as written. `fields` names fields 1, 3 and 4 in messages
/// ("field 1 (time_ms)").
#[inline]
pub(crate) fn dev_columns<'a>(
    line: &'a str,
    fields: [&str; 3],
    unit_bytes: u64,
) -> std::result::Result<(f64, u32, u64, u64, &'a str), String> {
    let (f, n) = split_ws::<5>(line);
    if n < 5 {
        return Err(too_few(line, None, 5));
    }
    let t = num(f[0], fields[0])?;
    let dev = uint32(f[1], "field 2 (devno)")?;
    let offset = scale(uint(f[2], fields[1])?, unit_bytes, fields[1])?;
    let size = scale(uint(f[3], fields[2])?, unit_bytes, fields[2])?;
    Ok((t, dev, offset, size, f[4]))
}

/// Build a request, checking that offset + length does not overflow and that the time,
/// once converted to µs, is still finite (a huge stamp times its unit overflows to ∞).
#[inline]
pub(crate) fn request(
    time_us: f64,
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    dev: u32,
) -> LineResult {
    request_measured(time_us, op, offset_bytes, len_bytes, dev, f32::NAN)
}

/// [`request`] with the latency the trace measured, in µs (NaN: none).
#[inline]
pub(crate) fn request_measured(
    time_us: f64,
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    dev: u32,
    measured_us: f32,
) -> LineResult {
    if !time_us.is_finite() {
        return Err("the time stamp overflows when converted to microseconds".to_string());
    }
    if offset_bytes.checked_add(len_bytes).is_none() {
        return Err(format!(
            "offset {offset_bytes} + size {len_bytes} bytes overflows 64 bits"
        ));
    }
    Ok(Parsed::Req(Request {
        time_us,
        op,
        offset_bytes,
        len_bytes,
        dev,
        measured_us,
        placement_id: 0,
    }))
}

/// A measured latency: a finite, non-negative number in `unit_us` µs, as the `f32` a request
/// keeps (a value too large for it is an error, not ∞).
#[inline]
pub(crate) fn latency(s: &str, unit_us: f64, what: &str) -> std::result::Result<f32, String> {
    let us = num(s, what)? * unit_us;
    let v = us as f32;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what} {} is too large a latency", show(s)))
    }
}

/// The op a format writes as one of `codes` (case-insensitive); else the error
/// "`what` `s` is not `expect`".
#[inline]
pub(crate) fn op_code(
    s: &str,
    codes: &[(&str, Op)],
    what: &str,
    expect: &str,
) -> std::result::Result<Op, String> {
    match codes.iter().find(|(c, _)| c.eq_ignore_ascii_case(s)) {
        Some(&(_, op)) => Ok(op),
        None => Err(format!("{what} {} is not {expect}", show(s))),
    }
}

/// `R`/`W` (or `Read`/`Write`), case-insensitive.
#[inline]
pub(crate) fn op_rw(s: &str, what: &str) -> std::result::Result<Op, String> {
    const RW: [(&str, Op); 4] = [
        ("r", Op::Read),
        ("read", Op::Read),
        ("w", Op::Write),
        ("write", Op::Write),
    ];
    op_code(s, &RW, what, "R or W")
}

/// `1` = read, `0` = write (the LinnOS / FlashNet replayers' op).
pub(crate) const ONE_READ: [(&str, Op); 2] = [("1", Op::Read), ("0", Op::Write)];

/// A reader test: each line of `ok` parses to its request (time within 1e-6 µs and rounding, the
/// measured latency as given), each line of `bad` fails with an error that holds its text.
#[cfg(test)]
#[track_caller]
pub(crate) fn check(
    mut parse: impl FnMut(&str) -> LineResult,
    ok: &[(&str, Request)],
    bad: &[(&str, &str)],
) {
    for (line, w) in ok {
        let g = req(parse(line));
        assert_eq!(
            (g.op, g.offset_bytes, g.len_bytes, g.dev, g.measured()),
            (w.op, w.offset_bytes, w.len_bytes, w.dev, w.measured()),
            "{line}"
        );
        let tol = 1e-6 + w.time_us.abs() * f64::EPSILON;
        assert!((g.time_us - w.time_us).abs() <= tol, "{line}: {g:?}");
    }
    for (line, what) in bad {
        assert_contains(&err(parse(line)), &[what]);
    }
}

/// `msg` holds every one of `parts`.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_contains(msg: &str, parts: &[&str]) {
    for part in parts {
        assert!(msg.contains(part), "{part:?} not in: {msg}");
    }
}

/// The request a reader test expects `r` to be.
#[cfg(test)]
#[track_caller]
pub(crate) fn req(r: LineResult) -> Request {
    match r {
        Ok(Parsed::Req(r)) => r,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// The error message a reader test expects `r` to be.
#[cfg(test)]
#[track_caller]
pub(crate) fn err(r: LineResult) -> String {
    match r {
        Err(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_numbers() {
        let (f, n) = split_fields::<3>(" a , b,c,d", ',');
        assert_eq!((f, n), (["a", "b", "c"], 3));
        let (f, n) = split_ws::<4>("  1 2\t3 ");
        assert_eq!((f, n), (["1", "2", "3", ""], 3));
        assert_eq!(uint("12", "x"), Ok(12));
        assert_eq!(uint("18446744073709551615", "x"), Ok(u64::MAX));
        assert!(uint("18446744073709551616", "x")
            .unwrap_err()
            .contains("too large"));
        assert!(uint("", "x").unwrap_err().contains("empty"));
        assert_eq!(split_fields::<4>("a,b", ','), (["a", "b", "", ""], 2));
        assert_eq!(split_fields::<2>("a,b,", ','), (["a", "b"], 2));
        assert_eq!(split_fields::<3>("a,b,", ','), (["a", "b", ""], 3));
        assert!(uint("-1", "x").unwrap_err().contains("negative"));
        assert!(uint("1.5", "x")
            .unwrap_err()
            .contains("not a non-negative integer"));
        assert!(num("-0.5", "t").unwrap_err().contains("negative"));
        assert!(num("nan", "t").is_err());
        assert!(num("inf", "t").is_err());
        assert_eq!(num("1e3", "t"), Ok(1000.0));
        assert!(scale(u64::MAX / 2, 512, "lba").is_err());
        assert!(request(0.0, Op::Read, u64::MAX, 1, 0).is_err());
    }
}
