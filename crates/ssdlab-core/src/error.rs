//! One error type for the whole engine. Every variant names what is at fault:
//! the configuration field, the trace file and line, or the value.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// A configuration field is missing, unknown or out of range.
    Config { field: String, msg: String },
    /// A trace record could not be parsed (file, 1-based line, what was expected).
    Trace {
        file: String,
        line: u64,
        msg: String,
    },
    /// A file could not be opened, read or written.
    Io { path: String, msg: String },
    /// A request does not fit the device (and folding was not asked for).
    Capacity(String),
    /// The integrity checker found a mapping that does not hold the latest version.
    Integrity(String),
    /// The run was interrupted (Ctrl-C or a cancel request).
    Cancelled,
    /// Anything else that is the user's input, not a bug.
    Invalid(String),
}

impl SimError {
    pub fn config(field: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Config {
            field: field.into(),
            msg: msg.into(),
        }
    }
    pub fn trace(file: impl Into<String>, line: u64, msg: impl Into<String>) -> Self {
        SimError::Trace {
            file: file.into(),
            line,
            msg: msg.into(),
        }
    }
    pub fn io(path: impl Into<String>, err: impl fmt::Display) -> Self {
        SimError::Io {
            path: path.into(),
            msg: err.to_string(),
        }
    }
    /// Short machine-readable kind, used by the Python layer to pick an exception class.
    pub fn kind(&self) -> &'static str {
        match self {
            SimError::Config { .. } => "config",
            SimError::Trace { .. } => "trace",
            SimError::Io { .. } => "io",
            SimError::Capacity(_) => "capacity",
            SimError::Integrity(_) => "integrity",
            SimError::Cancelled => "cancelled",
            SimError::Invalid(_) => "invalid",
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config { field, msg } => write!(f, "config field `{field}`: {msg}"),
            SimError::Trace { file, line, msg } => write!(f, "{file}:{line}: {msg}"),
            SimError::Io { path, msg } => write!(f, "{path}: {msg}"),
            SimError::Capacity(m) => write!(f, "capacity: {m}"),
            SimError::Integrity(m) => write!(f, "integrity check failed: {m}"),
            SimError::Cancelled => write!(f, "cancelled"),
            SimError::Invalid(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for SimError {}

pub type Result<T> = std::result::Result<T, SimError>;

/// A deserialisation error at a field path ("." = the whole document), in plain words, with the
/// nearest valid key suggested for an unknown one.
pub fn field_error(path: String, msg: String) -> SimError {
    let path = if path == "." {
        "<document>".to_string()
    } else {
        path
    };
    let msg = plain_words(&msg);
    match unknown_key(&msg) {
        Some((key, valid)) => {
            let section = path.rsplit_once('.').map_or("", |(s, _)| s);
            let msg = match nearest(key, &valid) {
                Some(k) if section.is_empty() => format!("unknown key; did you mean `{k}`?"),
                Some(k) => format!("unknown key; did you mean `{section}.{k}`?"),
                None => format!("unknown key; valid: {}", valid.join(", ")),
            };
            SimError::config(path, msg)
        }
        None => SimError::config(path, msg),
    }
}

/// serde's type names ("expected u64") as a user would say them.
fn plain_words(msg: &str) -> String {
    let mut m = msg.to_string();
    for (from, to) in [
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("invalid type: ", ""),
        ("invalid value: ", ""),
    ] {
        m = m.replace(from, to);
    }
    m
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a`") as (x, [a, b]).
fn unknown_key(msg: &str) -> Option<(&str, Vec<&str>)> {
    let rest = msg.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let valid = rest.split('`').skip(1).step_by(2).collect();
    Some((key, valid))
}

/// The valid key closest to `key` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    };
    let (best, d) = valid
        .iter()
        .map(|v| (*v, distance(key, v)))
        .min_by_key(|(_, d)| *d)?;
    (d <= (key.chars().count() / 3).max(2)).then_some(best)
}
