//! Python bindings: configuration in (JSON), results out (JSON). The simulation runs with the GIL
//! released; progress callbacks reacquire it briefly, which is also where Ctrl-C is noticed.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ssdlab_core::error::SimError;
use ssdlab_core::{engine, registry, trace, Config};
use std::path::Path;

// Named after the package that exports it, so that it shows (and pickles) as `ssdlab.SsdlabError`.
pyo3::create_exception!(
    ssdlab,
    SsdlabError,
    PyValueError,
    "An ssdlab error caused by the input (configuration, trace, capacity)."
);

fn to_py(e: SimError) -> PyErr {
    match e {
        SimError::Cancelled => PyKeyboardInterrupt::new_err("simulation cancelled"),
        other => Python::with_gil(|py| {
            let err = SsdlabError::new_err(other.to_string());
            // `kind` lets callers tell configuration, trace, capacity and integrity errors apart.
            let _ = err.value(py).setattr("kind", other.kind());
            err
        }),
    }
}

fn parse_config(config_json: &str) -> PyResult<Config> {
    engine::parse_json(config_json).map_err(to_py)
}

/// The run's progress handed to Python: `progress(done, total)` at most every 100 ms (and for
/// the final report), taking the GIL only then: enough for a live progress bar and a prompt
/// Ctrl-C, without slowing other Python threads. A note goes to `progress.note(message)` when
/// the callable has one.
struct PyProgress {
    progress: Option<PyObject>,
    last: std::time::Instant,
    error: Option<PyErr>,
}

impl ssdlab_core::engine::Progress for PyProgress {
    fn update(&mut self, done: u64, total: u64) -> bool {
        if self.last.elapsed() < std::time::Duration::from_millis(100)
            && !(total > 0 && done == total)
        {
            return true;
        }
        self.last = std::time::Instant::now();
        Python::with_gil(|py| {
            if let Err(e) = py.check_signals() {
                self.error = Some(e);
                return false;
            }
            if let Some(p) = &self.progress {
                if let Err(e) = p.call1(py, (done, total)) {
                    self.error = Some(e);
                    return false;
                }
            }
            true
        })
    }

    fn note(&mut self, message: &str) {
        let Some(p) = &self.progress else {
            return;
        };
        Python::with_gil(|py| {
            if let Ok(note) = p.getattr(py, "note") {
                if let Err(e) = note.call1(py, (message,)) {
                    self.error.get_or_insert(e);
                }
            }
        });
    }
}

/// Run one simulation. `progress(done, total)` is called at most every 100 ms; an exception it
/// raises (or a pending Ctrl-C) cancels the run. Returns (resolved_config_json, metrics_json,
/// histograms_json, series_json, warnings); series_json maps column names to value lists (NaN as
/// null) and is "{}" when sampling is off.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn simulate(
    py: Python<'_>,
    config_json: &str,
    progress: Option<PyObject>,
) -> PyResult<(String, String, String, String, Vec<String>)> {
    let cfg = parse_config(config_json)?;
    let mut cb = PyProgress {
        progress,
        last: std::time::Instant::now(),
        error: None,
    };
    let result = py.allow_threads(|| ssdlab_core::simulate(&cfg, &mut cb));
    let mut callback_error = cb.error.take();
    if let Some(e) = callback_error.take() {
        // The callback raised (or Ctrl-C arrived), possibly on its final call after the run.
        return Err(e);
    }
    match result {
        Ok(r) => {
            let metrics = serde_json::to_string(&r.metrics)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let histograms = serde_json::to_string(&r.histograms)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let series = serde_json::to_string(&r.series)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok((r.config.to_json(), metrics, histograms, series, r.warnings))
        }
        Err(e) => Err(to_py(e)),
    }
}

/// Validate a configuration and return it with defaults filled in, the selected components'
/// parameters included (no run, no "auto" resolution).
#[pyfunction]
fn validate_config(config_json: &str) -> PyResult<String> {
    let mut cfg = parse_config(config_json)?;
    engine::fill_params(&mut cfg).map_err(to_py)?;
    Ok(cfg.to_json())
}

/// Parse a TOML configuration document into its JSON form (with defaults filled in).
#[pyfunction]
fn config_from_toml(text: &str) -> PyResult<String> {
    Ok(Config::from_toml_str(text).map_err(to_py)?.to_json())
}

/// Check a TOML configuration file's text key by key; every error names its `file:line`
/// (unknown keys, wrong types, values wrong on their own).
#[pyfunction]
fn check_config_file(text: &str, file: &str) -> PyResult<()> {
    engine::parse_toml_file(text, file).map_err(to_py)?;
    Ok(())
}

/// Runs so far in this process that started from a kept preconditioned device, and (`clear`)
/// forget the kept device (`engine/precondition.rs`).
#[pyfunction]
#[pyo3(signature = (clear=false))]
fn precondition_cache(clear: bool) -> u64 {
    if clear {
        ssdlab_core::engine::clear_precondition_cache();
    }
    ssdlab_core::engine::precondition_cache_hits()
}

/// The default configuration, as JSON.
#[pyfunction]
fn default_config() -> String {
    Config::default().to_json()
}

fn trace_opts(options_json: &str) -> PyResult<trace::TraceOptions> {
    serde_json::from_str(options_json).map_err(|e| {
        // Without serde_json's " at line L column C" of a JSON text the user never wrote.
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or_default();
        to_py(SimError::Invalid(format!("trace options: {msg}")))
    })
}

/// Statistics of a trace file, as JSON.
#[pyfunction]
#[pyo3(signature = (path, options_json="{}", page_bytes=4096))]
fn trace_info(py: Python<'_>, path: &str, options_json: &str, page_bytes: u64) -> PyResult<String> {
    let opts = trace_opts(options_json)?;
    let info = py
        .allow_threads(|| trace::info(Path::new(path), &opts, page_bytes))
        .map_err(to_py)?;
    serde_json::to_string(&info).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The statistics seeds 000 and 003 reason with (`ssdlab trace profile`), as JSON.
#[pyfunction]
#[pyo3(signature = (path, options_json="{}", profile_json="{}"))]
fn trace_profile(
    py: Python<'_>,
    path: &str,
    options_json: &str,
    profile_json: &str,
) -> PyResult<String> {
    let opts = trace_opts(options_json)?;
    let popts: trace::ProfileOptions = serde_json::from_str(profile_json)
        .map_err(|e| to_py(SimError::config("profile options", e.to_string())))?;
    let p = py
        .allow_threads(|| trace::profile(Path::new(path), &opts, &popts))
        .map_err(to_py)?;
    serde_json::to_string(&p).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The latencies a trace measured (µs), reads and writes each in trace order: (format name,
/// reads, writes, requests without one); reads and writes are little-endian f32 arrays as bytes.
#[pyfunction]
#[pyo3(signature = (path, options_json="{}"))]
fn trace_measured<'py>(
    py: Python<'py>,
    path: &str,
    options_json: &str,
) -> PyResult<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>, u64)> {
    let opts = trace_opts(options_json)?;
    let m = py
        .allow_threads(|| trace::measured_latencies(Path::new(path), &opts))
        .map_err(to_py)?;
    let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    Ok((
        m.format,
        PyBytes::new(py, &bytes(&m.read)),
        PyBytes::new(py, &bytes(&m.write)),
        m.missing,
    ))
}

/// Convert a trace into the compact binary cache; returns the number of records written.
#[pyfunction]
#[pyo3(signature = (path, out, options_json="{}"))]
fn trace_convert(py: Python<'_>, path: &str, out: &str, options_json: &str) -> PyResult<u64> {
    let opts = trace_opts(options_json)?;
    py.allow_threads(|| trace::convert(Path::new(path), &opts, Path::new(out)))
        .map_err(to_py)
}

/// Write the synthetic workload of a configuration as a trace ("msr" or "binary"); returns the
/// number of requests written.
#[pyfunction]
fn trace_generate(py: Python<'_>, config_json: &str, out: &str, format: &str) -> PyResult<u64> {
    let cfg = parse_config(config_json)?;
    py.allow_threads(|| ssdlab_core::synth::generate(&cfg, Path::new(out), format))
        .map_err(to_py)
}

/// Detect a trace file's format.
#[pyfunction]
fn trace_detect(path: &str) -> PyResult<String> {
    Ok(trace::detect(Path::new(path))
        .map_err(to_py)?
        .name()
        .to_string())
}

/// Names and layouts of the supported trace formats, as JSON [[name, layout], …].
#[pyfunction]
fn trace_formats() -> String {
    let v: Vec<(&str, &str)> = trace::Format::all()
        .iter()
        .map(|f| (f.name(), f.layout()))
        .collect();
    serde_json::to_string(&v).unwrap_or_default()
}

/// Every registered component as JSON: [{category, name, summary, table, params, reads}].
#[pyfunction]
fn components() -> String {
    registry::components_json().to_string()
}

/// The component reference (docs/components.md) as markdown.
#[pyfunction]
fn components_markdown() -> String {
    registry::markdown()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdlabError", m.py().get_type::<SsdlabError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(config_from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(check_config_file, m)?)?;
    m.add_function(wrap_pyfunction!(default_config, m)?)?;
    m.add_function(wrap_pyfunction!(precondition_cache, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_profile, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(trace_measured, m)?)?;
    m.add_function(wrap_pyfunction!(trace_generate, m)?)?;
    m.add_function(wrap_pyfunction!(trace_detect, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(components_markdown, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
