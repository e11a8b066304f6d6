//! One error type for the whole engine. Every variant names what is at fault:
//! the configuration field, the trace file and line, or the value.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// A configuration field is missing, unknown or out of range; `at` is where it was given
    /// (`file.toml:12`), when known.
    Config {
        field: String,
        msg: String,
        at: Option<String>,
    },
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
    /// Several errors in one input (a configuration file with three wrong values), in order.
    Many(Vec<SimError>),
}

/// How many of [`SimError::Many`]'s errors its message lists.
pub const SHOWN_ERRORS: usize = 20;

impl SimError {
    pub fn config(field: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Config {
            field: field.into(),
            msg: msg.into(),
            at: None,
        }
    }
    /// The same error, placed at `at` (`file.toml:12`, or `file.toml` when the line is unknown).
    pub fn at(self, at: impl Into<String>) -> Self {
        match self {
            SimError::Config { field, msg, .. } => SimError::Config {
                field,
                msg,
                at: Some(at.into()),
            },
            SimError::Many(v) => {
                let at = at.into();
                SimError::Many(v.into_iter().map(|e| e.at(at.clone())).collect())
            }
            other => SimError::Invalid(format!("{}: {other}", at.into())),
        }
    }
    /// Ok when `errors` is empty, else the one error, or all of them as [`SimError::Many`]
    /// (each once: two checks may find the same fault).
    pub fn all(errors: Vec<SimError>) -> Result<()> {
        let mut flat: Vec<SimError> = Vec::new();
        for e in errors.into_iter().flat_map(SimError::into_list) {
            if !flat.contains(&e) {
                flat.push(e);
            }
        }
        match flat.len() {
            0 => Ok(()),
            1 => Err(flat.pop().expect("one error")),
            _ => Err(SimError::Many(flat)),
        }
    }
    /// The errors this one stands for (itself, or those of [`SimError::Many`]).
    pub fn into_list(self) -> Vec<SimError> {
        match self {
            SimError::Many(v) => v,
            e => vec![e],
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
        // "No such file or directory", not "... (os error 2)": the errno is the system's word.
        let mut msg = err.to_string();
        if let Some(i) = msg.rfind(" (os error ") {
            if msg.ends_with(')') {
                msg.truncate(i);
            }
        }
        SimError::Io {
            path: path.into(),
            msg,
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
            // The kind they share (all `config` for a configuration file), else `invalid`.
            SimError::Many(v) => match v.first().map(SimError::kind) {
                Some(k) if v.iter().all(|e| e.kind() == k) => k,
                _ => "invalid",
            },
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config {
                field,
                msg,
                at: None,
            } => write!(f, "config field `{field}`: {msg}"),
            SimError::Config {
                field,
                msg,
                at: Some(at),
            } => write!(f, "{at}: config field `{field}`: {msg}"),
            SimError::Trace { file, line, msg } => write!(f, "{file}:{line}: {msg}"),
            SimError::Io { path, msg } => write!(f, "{path}: {msg}"),
            SimError::Capacity(m) => write!(f, "capacity: {m}"),
            SimError::Integrity(m) => write!(f, "integrity check failed: {m}"),
            SimError::Cancelled => write!(f, "cancelled"),
            SimError::Invalid(m) => write!(f, "{m}"),
            SimError::Many(v) => {
                write!(f, "{} errors:", v.len())?;
                for e in v.iter().take(SHOWN_ERRORS) {
                    write!(f, "\n  {e}")?;
                }
                if v.len() > SHOWN_ERRORS {
                    write!(f, "\n  … and {} more", v.len() - SHOWN_ERRORS)?;
                }
                Ok(())
            }
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
        Some((_, valid)) => {
            let msg = unknown_key_message(&path, &valid);
            SimError::config(path, msg)
        }
        None => SimError::config(path, msg),
    }
}

/// The message for the unknown key `path` where `valid` are the keys of its table: the nearest
/// valid key, else the list of them (`registry` adds the keys of that name in other tables).
pub fn unknown_key_message(path: &str, valid: &[&str]) -> String {
    let (section, last) = path.rsplit_once('.').unwrap_or(("", path));
    match nearest(last, valid) {
        Some(k) if section.is_empty() => format!("unknown key; did you mean `{k}`?"),
        Some(k) => format!("unknown key; did you mean `{section}.{k}`?"),
        None => format!("unknown key; valid: {}", valid.join(", ")),
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

/// The valid name closest to `name` by edit distance (a swap of two neighbours counts as one
/// edit), if it is close enough to be a typo: one edit in a short name, a third of a long one.
pub fn nearest<'a>(name: &str, valid: &[&'a str]) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        // Rows i-2, i-1 and i of the optimal-string-alignment table.
        let mut before: Vec<usize> = vec![0; b.len() + 1];
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut row = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                row[j] = (prev[j - 1] + cost).min(prev[j] + 1).min(row[j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    row[j] = row[j].min(before[j - 2] + 1);
                }
            }
            before = std::mem::replace(&mut prev, row);
        }
        prev[b.len()]
    };
    let (best, d) = valid
        .iter()
        .map(|v| (*v, distance(name, v)))
        .min_by_key(|(_, d)| *d)?;
    let n = name.chars().count();
    (d <= (n / 3).max(1) && d < n).then_some(best)
}

/// "did you mean `x`?" for the valid name nearest to `name`, else "valid: a, b, c".
pub fn suggestion(name: &str, valid: &[&str]) -> String {
    match nearest(name, valid) {
        Some(v) => format!("did you mean `{v}`?"),
        None => format!("valid: {}", valid.join(", ")),
    }
}

/// The error for an enumerated key's value that is none of `valid`: it names the field and
/// suggests the nearest valid value (or lists them).
pub fn unknown_value(field: impl Into<String>, value: &str, valid: &[&str]) -> SimError {
    SimError::config(
        field,
        format!("unknown value `{value}`; {}", suggestion(value, valid)),
    )
}

/// Ok when `value` is one of `valid`, else [`unknown_value`].
pub fn one_of(field: &str, value: &str, valid: &[&str]) -> Result<()> {
    if valid.contains(&value) {
        Ok(())
    } else {
        Err(unknown_value(field, value, valid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_say_what_happened_without_the_errno() {
        let e = std::fs::File::open("/no/such/file").unwrap_err();
        assert_eq!(
            SimError::io("/no/such/file", e).to_string(),
            "/no/such/file: No such file or directory"
        );
    }

    #[test]
    fn enumerated_values_suggest_the_nearest() {
        let valid = ["none", "lru", "block-lru"];
        assert_eq!(
            one_of("buffer.kind", "lur", &valid)
                .unwrap_err()
                .to_string(),
            "config field `buffer.kind`: unknown value `lur`; did you mean `lru`?"
        );
        assert_eq!(
            unknown_value("k", "zzzzzz", &valid).to_string(),
            "config field `k`: unknown value `zzzzzz`; valid: none, lru, block-lru"
        );
        // One letter is no typo of another; two edits of three letters are not a typo.
        assert_eq!(nearest("X", &["Q", "D", "C"]), None);
        assert_eq!(nearest("arc", &valid), None);
        assert_eq!(nearest("modle", &["model", "fixed"]), Some("model"));
        assert_eq!(nearest("periodd", &["period"]), Some("period"));
        one_of("k", "lru", &valid).unwrap();
    }

    #[test]
    fn several_errors_list_twenty_then_count_the_rest() {
        assert_eq!(SimError::all(vec![]), Ok(()));
        let one = SimError::config("a", "bad");
        assert_eq!(SimError::all(vec![one.clone()]), Err(one.clone()));
        let errs: Vec<_> = (1..=23)
            .map(|i| SimError::config(format!("k{i}"), "bad").at(format!("c.toml:{i}")))
            .collect();
        let e = SimError::all(errs).unwrap_err();
        assert_eq!(e.kind(), "config");
        let text = e.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 22, "{text}");
        assert_eq!(lines[0], "23 errors:");
        assert_eq!(lines[1], "  c.toml:1: config field `k1`: bad");
        assert_eq!(lines[20], "  c.toml:20: config field `k20`: bad");
        assert_eq!(lines[21], "  … and 3 more");
        let twice = SimError::all(vec![
            one.clone(),
            SimError::Invalid("x".into()),
            one.clone(),
        ]);
        assert_eq!(
            twice,
            Err(SimError::Many(vec![
                one.clone(),
                SimError::Invalid("x".into())
            ]))
        );
        let mixed = SimError::all(vec![one, SimError::Invalid("x".into())]).unwrap_err();
        assert_eq!(mixed.kind(), "invalid");
    }
}
