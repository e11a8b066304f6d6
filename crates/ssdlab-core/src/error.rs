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
