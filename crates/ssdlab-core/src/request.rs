//! A host block I/O request, as every trace reader and workload generator yields it.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// Discard / TRIM / UNMAP.
    Trim,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// Arrival time in microseconds since the trace's own epoch (informational in counts mode).
    pub time_us: f64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Device / volume / LUN number as the trace states it (0 when it has none).
    pub dev: u32,
}

impl Request {
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.len_bytes
    }
}
