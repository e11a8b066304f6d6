//! Run one simulation from a TOML or JSON config file and print the metrics as JSON, with the
//! wall time. Used by `make bench` and for profiling the engine without Python.
//!
//!     cargo run --release -p ssdlab-core --example simulate -- config.toml

use ssdlab_core::{engine::NoProgress, Config};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: simulate CONFIG.toml|CONFIG.json");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let cfg = if path.ends_with(".json") {
        Config::from_json_str(&text)
    } else {
        Config::from_toml_file(&text, &path)
    };
    // A relative trace path is relative to the configuration file's folder, as in the CLI.
    let cfg = cfg.map(|mut c| {
        if let Some(p) = &c.workload.path {
            let dir = std::path::Path::new(&path)
                .parent()
                .unwrap_or(std::path::Path::new(""));
            c.workload.path = Some(dir.join(p).display().to_string());
        }
        c
    });
    let start = std::time::Instant::now();
    match cfg.and_then(|c| ssdlab_core::simulate(&c, &mut NoProgress)) {
        Ok(r) => {
            let secs = start.elapsed().as_secs_f64();
            let mut m = r.metrics.clone();
            m.insert("bench.wall_s".into(), secs);
            println!("{}", serde_json::to_string(&m).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
