//! Component parameters. Every component declares its parameters in its own file with
//! [`params!`]: names, defaults and one doc line each. In a configuration they live in the
//! component's own table, `[<category>.<name>]` (`[buffer.hitstat] hit_log = 64`,
//! `[ftl.bast] variant = "single"`, `[padding.fixed] threshold = 0.25`); the registry turns a
//! parameter type into validation, the resolved configuration and the docs ([`ParamSpec`]).

use crate::error::{Result, SimError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

/// Component tables of one configuration section, by component name.
pub type Tables = BTreeMap<String, serde_json::Value>;

/// One parameter of a component: its key in the component's table and one line of doc.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    pub name: &'static str,
    pub doc: &'static str,
}

/// The documented fields of a parameter struct (implemented by [`params!`]).
pub trait Fields {
    const FIELDS: &'static [ParamDoc];
}

/// A component's parameter struct (made by [`params!`]); `check` validates values, naming
/// `table.field` (e.g. `buffer.hitstat.levels`) in errors.
pub trait Params: Fields + Serialize + DeserializeOwned + Default + Clone + 'static {
    fn check(&self, _table: &str) -> Result<()> {
        Ok(())
    }
}

/// Declare a component's parameter struct: each field with its doc line and default (and
/// optionally `#[alias = "other"]`, a second name accepted in configurations).
///
/// ```ignore
/// ssdlab_core::params! {
///     /// BPLRU's parameters (`[buffer.bplru]`).
///     pub struct Params {
///         /// LRU compensation: strict | full | off.
///         compensation: String = "strict".into(),
///     }
/// }
/// ```
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[doc = $doc:literal])+ $(#[alias = $alias:literal])? $field:ident : $ty:ty = $default:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[doc = $doc])+ $(#[serde(alias = $alias)])? pub $field: $ty, )*
        }
        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $default, )* }
            }
        }
        impl $crate::params::Fields for $name {
            const FIELDS: &'static [$crate::params::ParamDoc] = &[
                $( $crate::params::ParamDoc { name: stringify!($field), doc: concat!($($doc),+).trim_ascii() }, )*
            ];
        }
    };
}

/// The empty parameter set of a component without parameters.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Fields for NoParams {
    const FIELDS: &'static [ParamDoc] = &[];
}

impl Params for NoParams {}

/// A parameter as the docs and `ssdlab policies` show it.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: serde_json::Value,
    pub doc: &'static str,
}

/// A parameter type with its type erased, as a registry entry holds it.
#[derive(Clone, Copy)]
pub struct ParamSpec {
    /// The table with defaults filled in, checked; `table` is its dotted name for errors.
    pub resolve: fn(Option<&serde_json::Value>, &str) -> Result<serde_json::Value>,
    pub fields: fn() -> Vec<ParamInfo>,
}

impl std::fmt::Debug for ParamSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = (self.fields)().iter().map(|p| p.name).collect();
        write!(f, "ParamSpec{names:?}")
    }
}

pub const fn spec<T: Params>() -> ParamSpec {
    ParamSpec {
        resolve: resolve_table::<T>,
        fields: fields_of::<T>,
    }
}

pub const NONE: ParamSpec = spec::<NoParams>();

fn fields_of<T: Params>() -> Vec<ParamInfo> {
    let defaults = serde_json::to_value(T::default()).unwrap_or_default();
    T::FIELDS
        .iter()
        .map(|f| ParamInfo {
            name: f.name,
            default: defaults.get(f.name).cloned().unwrap_or_default(),
            doc: f.doc,
        })
        .collect()
}

/// The table with defaults filled in, checked; every error in it is reported: after a value
/// check fails, its key is set back to its default and the table checked again.
fn resolve_table<T: Params>(
    table: Option<&serde_json::Value>,
    path: &str,
) -> Result<serde_json::Value> {
    let Some(table) = table else {
        let p = T::default();
        p.check(path)?;
        return Ok(serde_json::to_value(p).unwrap_or_default());
    };
    let mut v = as_table(table, path)?.clone();
    let mut errors = Vec::new();
    loop {
        let (p, found) = deserialize_all::<T>(&mut v, path);
        errors.extend(found);
        let Some(p) = p else { break };
        let Err(e) = p.check(path) else {
            SimError::all(errors)?;
            return Ok(serde_json::to_value(p).unwrap_or_default());
        };
        // The key the check names, if the table gives it (else the check cannot go on).
        let key = match &e {
            SimError::Config { field, .. } => {
                field.strip_prefix(path).and_then(|k| k.strip_prefix('.'))
            }
            _ => None,
        };
        let removed = key.is_some_and(|k| v.as_object_mut().is_some_and(|m| m.remove(k).is_some()));
        errors.push(e);
        if !removed || errors.len() >= MAX_ERRORS {
            break;
        }
    }
    SimError::all(errors)?;
    Err(SimError::config(path, "invalid parameters"))
}

fn as_table<'a>(v: &'a serde_json::Value, path: &str) -> Result<&'a serde_json::Value> {
    if v.is_object() {
        Ok(v)
    } else {
        Err(SimError::config(
            path,
            "expected a table of parameters, e.g. [buffer.hitstat] with hit_log = 64",
        ))
    }
}

/// A component's parameters from its table (absent = every default). Errors name the key; all
/// unknown keys and wrong types are reported.
pub fn parse<T: Params>(table: Option<&serde_json::Value>, path: &str) -> Result<T> {
    let Some(v) = table else {
        return Ok(T::default());
    };
    let mut v = as_table(v, path)?.clone();
    let (p, errors) = deserialize_all::<T>(&mut v, path);
    SimError::all(errors)?;
    p.ok_or_else(|| SimError::config(path, "invalid parameters"))
}

/// The parameters of component `name` in `tables` (as resolved or given), checked.
pub fn of<T: Params>(tables: &Tables, section: &str, name: &str) -> Result<T> {
    let path = format!("{section}.{name}");
    let p = parse::<T>(tables.get(name), &path)?;
    p.check(&path)?;
    Ok(p)
}

/// At most this many errors are gathered from one input (a file of garbage stops there).
pub const MAX_ERRORS: usize = 100;

/// Deserialize a `T` from `v`, gathering every error: the key at fault is removed and
/// deserialization tried again, so one pass reports every unknown key and wrong type (up to
/// [`MAX_ERRORS`]). Error paths start with `prefix` (a component's table, `buffer.hitstat`).
/// Returns the value built without the wrong keys (None when an error could not be isolated).
pub(crate) fn deserialize_all<T: serde::de::DeserializeOwned>(
    v: &mut serde_json::Value,
    prefix: &str,
) -> (Option<T>, Vec<SimError>) {
    let mut errors = Vec::new();
    loop {
        let e = match serde_path_to_error::deserialize::<_, T>(&*v) {
            Ok(t) => return (Some(t), errors),
            Err(e) => e,
        };
        let removed = remove_path(v, e.path());
        let at = e.path().to_string();
        let field = match (prefix, at.as_str()) {
            ("", _) => at.clone(),
            (p, ".") => p.to_string(),
            (p, a) if a.starts_with('[') => format!("{p}{a}"),
            (p, a) => format!("{p}.{a}"),
        };
        errors.push(crate::error::field_error(field, e.into_inner().to_string()));
        if !removed || errors.len() >= MAX_ERRORS {
            return (None, errors);
        }
    }
}

/// Remove the key at `path` from `v`; false when the path is not a key of a table.
fn remove_path(v: &mut serde_json::Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let Some((last, parents)) = segments.split_last() else {
        return false;
    };
    let mut node = v;
    for s in parents {
        node = match (s, node) {
            (Segment::Map { key }, serde_json::Value::Object(m)) => match m.get_mut(key) {
                Some(n) => n,
                None => return false,
            },
            (Segment::Seq { index }, serde_json::Value::Array(a)) => match a.get_mut(*index) {
                Some(n) => n,
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, node) {
        (Segment::Map { key }, serde_json::Value::Object(m)) => m.remove(key).is_some(),
        _ => false,
    }
}
