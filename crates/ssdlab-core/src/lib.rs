//! ssdlab-core: the engine of a trace-driven SSD simulator.
//!
//! Data flow: workload (`trace`, `synth`) → `engine` (splits requests into page accesses) →
//! `buffer` (write-buffer policy) → `ftl` (mapping, GC) → `nand` (costs, wear) → `metrics`.
//! Every component is constructed through `registry`, the one list of components.

pub mod buffer;
pub mod component;
pub mod config;
pub mod engine;
pub mod error;
pub mod ftl;
pub mod gc;
pub mod list;
pub mod metrics;
pub mod nand;
pub mod padding;
pub mod params;
pub mod placement;
pub mod registry;
pub mod request;
pub mod rng;
pub mod synth;
pub mod timed;
pub mod trace;
pub mod units;

pub use config::Config;
pub use engine::{simulate, Progress, RunResult};
pub use error::{Result, SimError};
