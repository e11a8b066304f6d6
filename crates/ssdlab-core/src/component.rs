//! What every registry entry says of its component: its category and name, one summary line,
//! its own parameter type (its table is `[<category>.<name>]`) and the shared section keys it
//! reads. Each category's entry type (`buffer::Entry`, `ftl::Entry`, …) adds its builder and
//! rules to this; each component's file holds its entry, and `registry` lists them.

use crate::params::{ParamInfo, ParamSpec};

#[derive(Clone, Copy, Debug)]
pub struct Component {
    /// workload | ftl | gc | buffer | padding | scheduler | placement
    pub category: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// The component's own parameters, in `[<category>.<name>]`.
    pub params: ParamSpec,
    /// Shared section keys it reads (defaults come from `Config::default()`).
    pub reads: &'static [&'static str],
    /// Its table when not `[<category>.<name>]` (a section of its own, as `[fdp]`).
    pub own_table: Option<&'static str>,
}

impl Component {
    pub const fn new(
        category: &'static str,
        name: &'static str,
        summary: &'static str,
        params: ParamSpec,
        reads: &'static [&'static str],
    ) -> Component {
        Component {
            category,
            name,
            summary,
            params,
            reads,
            own_table: None,
        }
    }

    /// The same component with its parameters in the section `[table]`.
    pub const fn at_table(mut self, table: &'static str) -> Component {
        self.own_table = Some(table);
        self
    }

    /// A component whose own parameters are the type `P` (`crate::params::NoParams`: none).
    pub const fn of<P: crate::params::Params>(
        category: &'static str,
        name: &'static str,
        summary: &'static str,
        reads: &'static [&'static str],
    ) -> Component {
        Component::new(category, name, summary, crate::params::spec::<P>(), reads)
    }

    /// Dotted name of the component's parameter table, e.g. `buffer.hitstat`.
    pub fn table(&self) -> String {
        if let Some(t) = self.own_table {
            return t.to_string();
        }
        format!("{}.{}", self.category, self.name)
    }

    /// Its own parameters with dotted keys (`buffer.hitstat.hit_log`), defaults and docs.
    pub fn own_params(&self) -> Vec<ParamInfo> {
        (self.params.fields)()
    }
}

/// A registry entry whose builder needs nothing but the configuration (padding policies,
/// schedulers).
pub struct Entry<B> {
    pub info: Component,
    pub build: B,
}
