//! A delimited-text reader whose columns, units and op codes are named by the user.
//!
//! Example (TOML): a whitespace-separated file `time_ns dev op sector nsectors`:
//! ```toml
//! delimiter = "whitespace"
//! time_col = 0
//! dev_col = 1
//! op_col = 2
//! offset_col = 3
//! size_col = 4
//! offset_unit_bytes = 512
//! size_unit_bytes = 512
//! time_unit_us = 1e-3
//! read_codes = ["r", "1"]
//! write_codes = ["w", "0"]
//! ```

use super::fields::{num, request, scale, show, too_few, uint, uint32, LineResult, Parsed};
use crate::error::{Result, SimError};
use crate::request::Op;

fn default_delimiter() -> String {
    ",".to_string()
}
fn one() -> u64 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn default_read() -> Vec<String> {
    vec!["r".to_string(), "read".to_string()]
}
fn default_write() -> Vec<String> {
    vec!["w".to_string(), "write".to_string()]
}

/// Column layout of a `generic` trace.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenericSpec {
    /// Field delimiter: a single character, or "whitespace" (runs of spaces/tabs; "tab" is
    /// accepted for a tab). Default ",".
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
    /// Number of leading lines to skip (header). Lines starting with '#' are always skipped.
    #[serde(default)]
    pub skip_lines: u64,
    /// 0-based column of the time stamp (none: every request at time 0).
    #[serde(default)]
    pub time_col: Option<usize>,
    /// 0-based column of the op code.
    pub op_col: usize,
    /// 0-based column of the offset.
    pub offset_col: usize,
    /// 0-based column of the size.
    pub size_col: usize,
    /// 0-based column of the device / volume (none: dev 0).
    #[serde(default)]
    pub dev_col: Option<usize>,
    /// 0-based column of the NVMe FDP placement identifier the request's writes carry
    /// (`[fdp]`; none: 0), an integer in 0..=65535.
    #[serde(default)]
    pub placement_id_col: Option<usize>,
    /// Bytes per offset unit (1 = bytes, 512 = sectors, 4096 = 4K blocks). Default 1.
    #[serde(default = "one")]
    pub offset_unit_bytes: u64,
    /// Bytes per size unit. Default 1.
    #[serde(default = "one")]
    pub size_unit_bytes: u64,
    /// Microseconds per time unit (1e6 for seconds, 1e-3 for ns). Default 1.
    #[serde(default = "one_f")]
    pub time_unit_us: f64,
    /// Op codes (matched case-insensitively after trimming). Default ["r", "read"].
    #[serde(default = "default_read")]
    pub read_codes: Vec<String>,
    /// Default ["w", "write"].
    #[serde(default = "default_write")]
    pub write_codes: Vec<String>,
    /// Default none.
    #[serde(default)]
    pub trim_codes: Vec<String>,
}

impl Default for GenericSpec {
    /// `op,offset,size` in bytes, comma-separated, no time, no device, r/w op codes.
    fn default() -> Self {
        GenericSpec {
            delimiter: default_delimiter(),
            skip_lines: 0,
            time_col: None,
            op_col: 0,
            offset_col: 1,
            size_col: 2,
            dev_col: None,
            placement_id_col: None,
            offset_unit_bytes: 1,
            size_unit_bytes: 1,
            time_unit_us: 1.0,
            read_codes: default_read(),
            write_codes: default_write(),
            trim_codes: Vec::new(),
        }
    }
}

impl GenericSpec {
    /// A header line, then `time_ns dev op sector nsectors` columns split at `delimiter` (the
    /// layout of the example above), with the default op codes.
    pub fn ns_sectors(delimiter: &str) -> Self {
        GenericSpec {
            delimiter: delimiter.into(),
            skip_lines: 1,
            time_col: Some(0),
            dev_col: Some(1),
            placement_id_col: None,
            op_col: 2,
            offset_col: 3,
            size_col: 4,
            offset_unit_bytes: 512,
            size_unit_bytes: 512,
            time_unit_us: 1e-3,
            ..GenericSpec::default()
        }
    }
}

/// `None` = whitespace.
fn delimiter_char(d: &str) -> std::result::Result<Option<char>, String> {
    if d.eq_ignore_ascii_case("whitespace") {
        return Ok(None);
    }
    if d.eq_ignore_ascii_case("tab") || d == "\\t" {
        return Ok(Some('\t'));
    }
    let mut it = d.chars();
    match (it.next(), it.next()) {
        (Some('\n' | '\r'), None) => Err("a line break cannot be the delimiter".to_string()),
        (Some(c), None) => Ok(Some(c)),
        _ => Err(format!(
            "`{d}`: expected a single character or \"whitespace\""
        )),
    }
}

impl GenericSpec {
    /// Check the spec; errors name the field (`generic.<field>`).
    pub fn validate(&self) -> Result<()> {
        delimiter_char(&self.delimiter).map_err(|m| SimError::config("generic.delimiter", m))?;
        if self.offset_unit_bytes == 0 {
            return Err(SimError::config(
                "generic.offset_unit_bytes",
                "must be at least 1",
            ));
        }
        if self.size_unit_bytes == 0 {
            return Err(SimError::config(
                "generic.size_unit_bytes",
                "must be at least 1",
            ));
        }
        if !(self.time_unit_us.is_finite() && self.time_unit_us > 0.0) {
            return Err(SimError::config(
                "generic.time_unit_us",
                format!("{}: must be a positive number", self.time_unit_us),
            ));
        }
        let mut cols: Vec<(&str, usize)> = vec![
            ("op_col", self.op_col),
            ("offset_col", self.offset_col),
            ("size_col", self.size_col),
        ];
        if let Some(c) = self.time_col {
            cols.push(("time_col", c));
        }
        if let Some(c) = self.dev_col {
            cols.push(("dev_col", c));
        }
        if let Some(c) = self.placement_id_col {
            cols.push(("placement_id_col", c));
        }
        for (i, (name, c)) in cols.iter().enumerate() {
            if let Some((other, _)) = cols[..i].iter().find(|(_, c2)| c2 == c) {
                return Err(SimError::config(
                    format!("generic.{name}"),
                    format!("column {c} is also `{other}`"),
                ));
            }
        }
        let lists = [
            ("read_codes", &self.read_codes),
            ("write_codes", &self.write_codes),
            ("trim_codes", &self.trim_codes),
        ];
        if lists.iter().all(|(_, l)| l.is_empty()) {
            return Err(SimError::config(
                "generic.read_codes",
                "no op codes given (read_codes, write_codes, trim_codes)",
            ));
        }
        let mut seen: Vec<(String, &str)> = Vec::new();
        for (name, list) in lists {
            for code in list {
                let c = code.trim().to_ascii_lowercase();
                if c.is_empty() {
                    return Err(SimError::config(
                        format!("generic.{name}"),
                        "an op code is empty",
                    ));
                }
                if let Some((_, other)) = seen.iter().find(|(s, _)| *s == c) {
                    return Err(SimError::config(
                        format!("generic.{name}"),
                        format!("op code `{code}` is also in `{other}`"),
                    ));
                }
                seen.push((c, name));
            }
        }
        Ok(())
    }
}

const NONE: usize = usize::MAX;

/// Store field `i` in the slot(s) of the roles that use column `i`.
#[inline]
fn put<'a>(cols: &[usize; 6], i: usize, f: &'a str, v: &mut [&'a str; 6]) {
    for (k, &c) in cols.iter().enumerate() {
        if c == i {
            v[k] = f;
        }
    }
}

pub(crate) struct Parser {
    spec: GenericSpec,
    delim: Option<char>,
    /// Columns: op, offset, size, time, dev, placement identifier (NONE when absent).
    cols: [usize; 6],
    /// Fields needed: 1 + the largest column.
    need: usize,
    codes: Vec<(String, Op)>,
}

impl Parser {
    /// `spec` must be valid.
    pub(crate) fn new(spec: GenericSpec) -> Parser {
        let delim = delimiter_char(&spec.delimiter).unwrap_or(Some(','));
        let cols = [
            spec.op_col,
            spec.offset_col,
            spec.size_col,
            spec.time_col.unwrap_or(NONE),
            spec.dev_col.unwrap_or(NONE),
            spec.placement_id_col.unwrap_or(NONE),
        ];
        let need = cols
            .iter()
            .filter(|&&c| c != NONE)
            .max()
            .copied()
            .unwrap_or(0)
            + 1;
        let mut codes = Vec::new();
        for (list, op) in [
            (&spec.read_codes, Op::Read),
            (&spec.write_codes, Op::Write),
            (&spec.trim_codes, Op::Trim),
        ] {
            for c in list {
                codes.push((c.trim().to_string(), op));
            }
        }
        Parser {
            spec,
            delim,
            cols,
            need,
            codes,
        }
    }

    #[cold]
    fn bad_op(&self, s: &str) -> String {
        format!(
            "op_col (column {}) value {} is none of read_codes {:?}, write_codes {:?}, trim_codes {:?}",
            self.spec.op_col,
            show(s),
            self.spec.read_codes,
            self.spec.write_codes,
            self.spec.trim_codes
        )
    }

    #[inline]
    pub(crate) fn parse(&mut self, line: &str, line_no: u64) -> LineResult {
        if line_no <= self.spec.skip_lines {
            return Ok(Parsed::Other);
        }
        let mut v = [""; 6];
        let mut found = 0usize;
        match self.delim {
            None => {
                for (i, f) in line.split_ascii_whitespace().enumerate() {
                    put(&self.cols, i, f, &mut v);
                    found = i + 1;
                    if found == self.need {
                        break;
                    }
                }
            }
            Some(d) => {
                for (i, f) in line.split(d).enumerate() {
                    put(&self.cols, i, f.trim_ascii(), &mut v);
                    found = i + 1;
                    if found == self.need {
                        break;
                    }
                }
            }
        }
        if found < self.need {
            return Err(too_few(line, self.delim, self.need));
        }
        let op_s = v[0];
        let op = match self
            .codes
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(op_s))
        {
            Some((_, op)) => *op,
            None => return Err(self.bad_op(op_s)),
        };
        let off = uint(v[1], "offset_col")?;
        let off = scale(off, self.spec.offset_unit_bytes, "offset_col value")?;
        let len = uint(v[2], "size_col")?;
        let len = scale(len, self.spec.size_unit_bytes, "size_col value")?;
        let t = if self.cols[3] == NONE {
            0.0
        } else {
            num(v[3], "time_col")? * self.spec.time_unit_us
        };
        let dev = if self.cols[4] == NONE {
            0
        } else {
            uint32(v[4], "dev_col")?
        };
        let r = request(t, op, off, len, dev)?;
        if self.cols[5] == NONE {
            return Ok(r);
        }
        let pid = uint(v[5], "placement_id_col")?;
        let pid = u16::try_from(pid)
            .map_err(|_| format!("placement_id_col value {pid} is over 65535"))?;
        Ok(match r {
            Parsed::Req(req) => Parsed::Req(req.with_placement_id(pid)),
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_fields() {
        assert!(GenericSpec::default().validate().is_ok());
        let s = GenericSpec {
            delimiter: "ab".into(),
            ..Default::default()
        };
        assert!(
            matches!(s.validate(), Err(SimError::Config { field, .. }) if field == "generic.delimiter")
        );
        let s = GenericSpec {
            size_col: 0,
            ..Default::default()
        };
        assert!(
            matches!(s.validate(), Err(SimError::Config { field, .. }) if field == "generic.size_col")
        );
        let s = GenericSpec {
            time_unit_us: 0.0,
            ..Default::default()
        };
        assert!(
            matches!(s.validate(), Err(SimError::Config { field, .. }) if field == "generic.time_unit_us")
        );
        let s = GenericSpec {
            write_codes: vec!["R".into()],
            ..Default::default()
        };
        assert!(
            matches!(s.validate(), Err(SimError::Config { field, .. }) if field == "generic.write_codes")
        );
    }

    #[test]
    fn serde_defaults() {
        let s: GenericSpec =
            serde_json::from_str(r#"{"op_col":0,"offset_col":1,"size_col":2}"#).unwrap();
        assert_eq!(s, GenericSpec::default());
        let e = serde_json::from_str::<GenericSpec>(r#"{"op_col":0,"offset_col":1}"#).unwrap_err();
        assert!(e.to_string().contains("size_col"));
        let e = serde_json::from_str::<GenericSpec>(
            r#"{"op_col":0,"offset_col":1,"size_col":2,"x":1}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field"));
    }

    #[test]
    fn parses_generic() {
        let spec = GenericSpec {
            trim_codes: vec!["D".into()],
            ..GenericSpec::ns_sectors("whitespace")
        };
        spec.validate().unwrap();
        let mut p = Parser::new(spec);
        assert_eq!(p.parse("time dev op off size", 1), Ok(Parsed::Other));
        let Parsed::Req(r) = p.parse("2000 7 W 8 16 extra", 2).unwrap() else {
            panic!()
        };
        assert_eq!(
            (r.time_us, r.dev, r.op, r.offset_bytes, r.len_bytes),
            (2.0, 7, Op::Write, 4096, 8192)
        );
        let Parsed::Req(r) = p.parse("0 7  read 8 16", 3).unwrap() else {
            panic!()
        };
        assert_eq!(r.op, Op::Read);
        let Parsed::Req(r) = p.parse("0 7 d 8 16", 3).unwrap() else {
            panic!()
        };
        assert_eq!(r.op, Op::Trim);
        assert!(p.parse("0 7 x 8 16", 4).unwrap_err().contains("op_col"));
        assert!(p.parse("0 7 w 8", 4).unwrap_err().contains("at least 5"));
    }
}
