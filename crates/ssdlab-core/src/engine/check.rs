//! Check: each key's value on its own (a section's fields, a component's name, a component's
//! table with its own parameters' checks), then the relations between them (a section's keys
//! together, a component's checks of the shared keys it reads, placement against the FTL, and
//! every flow's keys). Every error found is reported, each naming its field.

use crate::config::Config;
use crate::error::{nearest, Result, SimError};
use crate::registry::{self, check_name, component, known_keys, names, selections, selector};

/// Check a whole configuration: the sections' fields, the component names, and every component
/// table (a table must belong to the selected component and hold only its parameters, valid).
/// Every error found is reported.
pub fn validate(cfg: &Config) -> Result<()> {
    let mut errors = check_values(cfg);
    cfg.check_relations(&mut errors);
    check_components(cfg, &mut errors);
    check_selection(cfg, &mut errors);
    errors.extend(crate::synth::check(&cfg.workload).err());
    errors.extend(flow_errors(cfg));
    SimError::all(errors).map_err(suggest_elsewhere)
}

/// The relations between components: placement needs an FTL with several write frontiers;
/// the FTL's own checks of the shared keys it reads.
fn check_components(cfg: &Config, errors: &mut Vec<SimError>) {
    let ftl = registry::ftl(cfg).ok();
    if cfg.placement.kind != "none" && ftl.and_then(|e| e.frontiers).is_none() {
        let mut with: Vec<String> = registry::FTLS
            .iter()
            .filter(|e| e.frontiers.is_some())
            .map(|e| format!("\"{}\"", e.info.name))
            .collect();
        with.sort();
        errors.push(SimError::config(
            "placement.kind",
            format!(
                "placement `{}` needs an FTL with several write frontiers (ftl.kind = {}), not \"{}\"",
                cfg.placement.kind,
                with.join(" or "),
                cfg.ftl.kind
            ),
        ));
    }
    if let Some(e) = ftl {
        (e.check)(cfg, errors);
        check_supports(cfg, e, errors);
    }
    check_placement_handles(cfg, errors);
}

/// Each namespace's FDP placement handle list (`flows[i].placement_handles`): FDP on, handles
/// the device has, one list per namespace.
fn check_placement_handles(cfg: &Config, errors: &mut Vec<SimError>) {
    for (i, f) in cfg.flows.iter().enumerate() {
        let key = format!("flows[{i}].placement_handles");
        if f.placement_handles.is_empty() {
            continue;
        }
        if !cfg.fdp.enabled {
            errors.push(SimError::config(
                key,
                "a placement handle list needs [fdp] enabled = true",
            ));
            continue;
        }
        if let Some(h) = f.placement_handles.iter().find(|&&h| h >= cfg.fdp.handles) {
            let msg = format!(
                "reclaim unit handle {h} is beyond fdp.handles = {}",
                cfg.fdp.handles
            );
            errors.push(SimError::config(key, msg));
            continue;
        }
        let leader = cfg.namespace_leader(i);
        if cfg.flows[leader].placement_handles != f.placement_handles {
            let msg = format!("flows[{leader}], of the same namespace, gives another list");
            errors.push(SimError::config(key, msg));
        }
    }
}

/// What the configuration asks of the FTL beyond every FTL's interface, against what its entry
/// implements (`ftl::Supports`).
fn check_supports(cfg: &Config, ftl: &crate::ftl::Entry, errors: &mut Vec<SimError>) {
    let kind = &cfg.ftl.kind;
    if cfg.ftl.background_gc && !ftl.supports.background_gc {
        let msg = format!(
            "background GC is implemented for the {} FTL, not ftl.kind = \"{kind}\"",
            ftls_with(|s| s.background_gc)
        );
        errors.push(SimError::config("ftl.background_gc", msg));
    }
    if cfg.flows_confined() && !ftl.supports.die_sets {
        let msg = format!(
            "flows confined to channels or dies need the {} FTL (one per set of dies), not \"{kind}\"",
            ftls_with(|s| s.die_sets)
        );
        errors.push(SimError::config("ftl.kind", msg));
    }
    if cfg.fdp.enabled {
        check_fdp(cfg, ftl, errors);
    }
    let unit = cfg.device.page_bytes.0;
    if cfg.nand.units_per_page(unit) > 1 && !ftl.supports.large_pages {
        let msg = format!(
            "pages larger than the mapping unit need the {} FTL (it writes blocks in order), not ftl.kind = \"{kind}\"",
            ftls_with(|s| s.large_pages)
        );
        errors.push(SimError::config("nand.physical_page_bytes", msg));
    }
}

/// The FTLs that implement what `has` asks, as "a or b".
fn ftls_with(has: fn(&crate::ftl::Supports) -> bool) -> String {
    let names: Vec<&str> = registry::FTLS
        .iter()
        .filter(|e| has(&e.supports))
        .map(|e| e.info.name)
        .collect();
    names.join(" or ")
}

/// What `[fdp]` needs of the rest: an FTL that implements it, no sets of dies of the flows' own,
/// and (timed) dies that split evenly into its reclaim groups.
fn check_fdp(cfg: &Config, ftl: &crate::ftl::Entry, errors: &mut Vec<SimError>) {
    if !ftl.supports.fdp {
        let msg = format!(
            "FDP (fdp.enabled) is implemented on the {} FTL, not ftl.kind = \"{}\"",
            ftls_with(|s| s.fdp),
            cfg.ftl.kind
        );
        errors.push(SimError::config("fdp.enabled", msg));
    }
    if cfg.flows_confined() {
        errors.push(SimError::config(
            "fdp.enabled",
            "FDP's reclaim groups are its sets of dies: flows cannot also be confined to channels or dies",
        ));
    }
    let (groups, dies) = (cfg.fdp.reclaim_groups as u64, cfg.device.dies());
    if cfg.run.mode == "timed" && !dies.is_multiple_of(groups) {
        errors.push(SimError::config(
            "fdp.reclaim_groups",
            format!("{groups} reclaim groups cannot split the device's {dies} dies evenly"),
        ));
    }
}

/// Each flow's workload, queue depth and cap checked as the single-flow keys are, the errors
/// renamed to the flow's keys (`flows[1].workload.kind`, `flows[1].queue_depth`); what is not
/// the flow's own is reported once, by the whole configuration's checks.
fn flow_errors(cfg: &Config) -> Vec<SimError> {
    let mut out = Vec::new();
    for i in 0..cfg.flows.len() {
        let fc = cfg.flow_view(i);
        let mut errors = check_values(&fc);
        fc.check_relations(&mut errors);
        errors.extend(crate::synth::check(&fc.workload).err());
        for e in errors.into_iter().flat_map(SimError::into_list) {
            if let SimError::Config { field, msg, at } = e {
                let own = field.starts_with("workload")
                    || field == "run.queue_depth"
                    || field == "run.max_inflight";
                if own {
                    let field = format!("flows[{i}].{}", field.trim_start_matches("run."));
                    out.push(SimError::Config { field, msg, at });
                }
            }
        }
    }
    out
}

/// The checks of each key on its own (a value, a component's name, a component's table), which
/// hold whatever the other keys say: what a configuration file is checked with before
/// overrides complete it.
pub(super) fn check_values(cfg: &Config) -> Vec<SimError> {
    let mut errors = Vec::new();
    cfg.check_values(&mut errors);
    for (category, field, name) in [
        ("workload", "workload.kind", &cfg.workload.kind),
        ("ftl", "ftl.kind", &cfg.ftl.kind),
        ("gc", "ftl.gc", &cfg.ftl.gc),
        ("buffer", "buffer.kind", &cfg.buffer.kind),
        ("scheduler", "device.scheduler", &cfg.device.scheduler),
        ("placement", "placement.kind", &cfg.placement.kind),
    ] {
        errors.extend(check_name(category, field, name).err());
    }
    if cfg.buffer.padding != "auto" {
        errors.extend(check_name("padding", "buffer.padding", &cfg.buffer.padding).err());
    }
    errors.extend(crate::ftl::hybrid::ModelStats::parse(&cfg.ftl.model_stats).err());
    errors.extend(crate::ftl::log_stats::Utilisation::parse(&cfg.ftl.log_utilisation).err());
    check_tables(cfg, &mut errors);
    errors
}

/// Every component table must name a registered component of its category and hold only its
/// parameters, with valid values.
fn check_tables(cfg: &Config, errors: &mut Vec<SimError>) {
    for (category, tables, _) in selections(cfg) {
        for (name, table) in tables {
            let path = format!("{category}.{name}");
            match component(category, name) {
                Some(comp) => errors.extend((comp.params.resolve)(Some(table), &path).err()),
                None => {
                    let valid = names(category);
                    let msg = match nearest(name, &valid) {
                        Some(n) => {
                            format!("unknown {category} `{name}`; did you mean [{category}.{n}]?")
                        }
                        None => format!(
                            "unknown key: not a field of [{category}] nor a {category} component ({})",
                            valid.join(", ")
                        ),
                    };
                    errors.push(SimError::config(path, msg));
                }
            }
        }
    }
}

/// Every component table must belong to the selected component; the selected component's
/// parameters (its defaults, when it has no table) must be valid.
fn check_selection(cfg: &Config, errors: &mut Vec<SimError>) {
    for (category, tables, selected) in selections(cfg) {
        for name in tables.keys() {
            let path = format!("{category}.{name}");
            if *name != selected && component(category, name).is_some() {
                errors.push(SimError::config(
                    path.clone(),
                    format!(
                        "parameters for {category} `{name}`, but {} = \"{selected}\": set {} = \"{name}\" or remove [{path}]",
                        selector(category),
                        selector(category)
                    ),
                ));
            }
        }
        if !tables.contains_key(&selected) {
            if let Some(comp) = component(category, &selected) {
                errors.extend((comp.params.resolve)(None, &comp.table()).err());
            }
        }
    }
}

/// `e` with every unknown key whose last part is a key elsewhere pointed to that key
/// (`workload.rw` → `workload.fio.rw`), rather than to a near key of its own table.
pub(super) fn suggest_elsewhere(e: SimError) -> SimError {
    match e {
        SimError::Many(v) => SimError::Many(v.into_iter().map(suggest_elsewhere).collect()),
        SimError::Config { field, msg, at } if msg.starts_with("unknown key") => {
            let last = field.rsplit('.').next().unwrap_or("");
            let elsewhere: Vec<String> = known_keys()
                .into_iter()
                .filter(|k| *k != field && k.rsplit('.').next() == Some(last))
                .map(|k| format!("`{k}`"))
                .collect();
            let msg = match elsewhere.split_last() {
                None => msg,
                Some((one, [])) => format!("unknown key; did you mean {one}?"),
                Some((last, others)) => {
                    format!("unknown key; did you mean {} or {last}?", others.join(", "))
                }
            };
            SimError::Config { field, msg, at }
        }
        e => e,
    }
}

impl Config {
    /// Check every field that does not need the workload ([`validate`]). Errors name the field.
    pub fn validate(&self) -> Result<()> {
        validate(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(toml: &str) -> String {
        validate(&Config::from_toml_str(toml).unwrap())
            .unwrap_err()
            .to_string()
    }

    /// Pages larger than the mapping unit need an FTL that writes blocks in order (moved here
    /// from config.rs with the rule: the FTL's entry says what it supports).
    #[test]
    fn large_pages_need_an_ftl_that_supports_them() {
        let e = error("[nand]\nphysical_page_bytes = \"16KiB\"\n[ftl]\nkind = \"bast\"\n");
        assert!(e.contains("need the page FTL"), "{e}");
        assert!(e.contains("`nand.physical_page_bytes`"), "{e}");
    }
}
