//! A host block I/O request, as every trace reader and workload generator yields it.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// Discard / TRIM / UNMAP.
    Trim,
}

#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Arrival time in microseconds since the trace's own epoch (informational in counts mode).
    pub time_us: f64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Device / volume / LUN number as the trace states it (0 when it has none).
    pub dev: u32,
    /// The latency the trace measured for this request on the traced device, in µs; NaN when
    /// it has none (see [`Request::measured`]). An `f32` (exact for whole µs up to 16 s, and
    /// to 0.1 µs up to 1.6 s) keeps the request at 40 bytes.
    pub measured_us: f32,
    /// NVMe FDP placement identifier its writes carry (`[fdp]`; 0 when the source gives none):
    /// a generic trace's `placement_id_col`, a flow's `placement_id`.
    pub placement_id: u16,
}

impl Request {
    /// A request without a measured latency.
    #[inline]
    pub fn new(time_us: f64, op: Op, offset_bytes: u64, len_bytes: u64, dev: u32) -> Request {
        Request {
            time_us,
            op,
            offset_bytes,
            len_bytes,
            dev,
            measured_us: f32::NAN,
            placement_id: 0,
        }
    }

    /// The same request carrying placement identifier `pid`.
    #[inline]
    pub fn with_placement_id(mut self, pid: u16) -> Request {
        self.placement_id = pid;
        self
    }

    /// The measured latency in µs, when the trace has one for this request.
    pub fn measured(&self) -> Option<f32> {
        (!self.measured_us.is_nan()).then_some(self.measured_us)
    }

    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.len_bytes
    }
}

/// Field by field, two missing measured latencies (NaN) being equal.
impl PartialEq for Request {
    fn eq(&self, o: &Request) -> bool {
        self.time_us == o.time_us
            && self.op == o.op
            && self.offset_bytes == o.offset_bytes
            && self.len_bytes == o.len_bytes
            && self.dev == o.dev
            && self.placement_id == o.placement_id
            && (self.measured_us == o.measured_us
                || (self.measured_us.is_nan() && o.measured_us.is_nan()))
    }
}
