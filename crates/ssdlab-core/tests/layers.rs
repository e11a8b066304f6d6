//! The engine's modules form layers: no module reaches back to one that depends on it (in
//! particular `config`, `buffer`, `ftl` and `padding` have no cycle; `config` knows no
//! component). The graph is read from the `crate::<module>` paths in the sources, unit tests
//! excluded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut g = Graph::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let deps = g.entry(module.clone()).or_default();
        for part in code.split("crate::").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                deps.insert(name);
            }
        }
    }
    g
}

/// One cycle of `g`, if any (depth-first search).
fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        n: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(g, n, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_cycles() {
    let g = graph();
    assert!(
        g["config"]
            .iter()
            .all(|d| ["error", "params", "trace", "units"].contains(&d.as_str())),
        "config imports {:?}",
        g["config"]
    );
    assert!(g.contains_key("engine") && g["registry"].contains("buffer"));
    assert_eq!(cycle(&g), None, "module cycle");
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g = graph();
    g.get_mut("units").unwrap().insert("config".into());
    let c = cycle(&g).expect("units -> config -> units");
    assert!(
        c.contains(&"config".to_string()) && c.contains(&"units".to_string()),
        "{c:?}"
    );
}
