//! Parse: a configuration from TOML (a file, each error at its line) or JSON (what the Python
//! layer sends), each key's value checked on its own as it is read (`check`'s per-key checks),
//! since overrides (`--set`) may complete the file; the checks between keys come after.

use super::check::{check_values, suggest_elsewhere};
use crate::config::Config;
use crate::error::{Result, SimError};

/// Parse a TOML configuration file and check each key's value on its own (component tables
/// included); every error found is reported, each as `file:line:`. Whether a table belongs
/// to the selected component, and the other checks between keys, are left to [`validate`],
/// since the file may be completed by overrides (`--set buffer.kind=hitstat`).
pub fn parse_toml_file(text: &str, file: &str) -> Result<Config> {
    let (cfg, mut errors) = Config::parse_toml(text);
    if let Some(c) = &cfg {
        errors.extend(check_values(c).into_iter().map(|e| (e, None)));
    }
    let errors = errors
        .into_iter()
        .map(|(e, at)| (suggest_elsewhere(e), at))
        .collect();
    crate::config::place_errors(errors, text, file)?;
    cfg.ok_or_else(|| SimError::Invalid(format!("{file}: the configuration could not be read")))
}

/// Parse a configuration in JSON (what the Python layer sends). With unknown keys or wrong
/// types, the values of the other keys are checked too, and every error found is reported;
/// otherwise [`validate`] checks it whole.
pub fn parse_json(text: &str) -> Result<Config> {
    let (cfg, mut errors) = Config::parse_json(text);
    if let (Some(c), false) = (&cfg, errors.is_empty()) {
        errors.extend(check_values(c));
    }
    SimError::all(errors).map_err(suggest_elsewhere)?;
    cfg.ok_or_else(|| SimError::Invalid("the configuration could not be read".into()))
}
