//! Idle power states (`controller.sleep_after_us`, `controller.wake_us`): an NVMe controller
//! idle for long enough enters a non-operational power state on its own (Autonomous Power State
//! Transition, NVMe Base Specification 1.4 §8.4.2), and the first command after that waits the
//! state's exit latency (the power state descriptor's EXLAT, Identify Controller) before the
//! controller serves it. Commands arriving while it wakes wait for the same wake.
//!
//! Linux programs the idle time before each transition as 50 × (entry + exit latency)
//! (drivers/nvme/host/core.c, `nvme_configure_apst`), so a state with ≈ 1 ms of latency is
//! entered after ≈ 100 ms idle: a bursty trace (a replay of one-second arrival stamps) meets
//! the wake at the start of every burst.

/// The controller's power state: when it wakes, if a wake is under way or done.
#[derive(Clone, Debug)]
pub struct Power {
    sleep_after_us: f64,
    wake_us: f64,
    /// When the last wake completes (or completed).
    awake_at_us: f64,
    /// Commands that found the controller asleep.
    pub wakes: u64,
}

impl Power {
    /// The model of `sleep_after_us` idle before sleeping and `wake_us` to wake (None: off).
    pub fn new(sleep_after_us: f64, wake_us: f64) -> Option<Power> {
        (wake_us > 0.0).then_some(Power {
            sleep_after_us,
            wake_us,
            awake_at_us: 0.0,
            wakes: 0,
        })
    }

    /// A command arrives at `t`; the device has had nothing to do since `idle_since_us` (the
    /// end of its last request or operation; 0 at the start: the device is awake when the
    /// run starts, as after the replayer's warm-up). Returns when the controller can start it.
    #[inline]
    pub fn start(&mut self, t: f64, idle_since_us: f64) -> f64 {
        if t >= idle_since_us + self.sleep_after_us && t >= self.awake_at_us {
            self.awake_at_us = t + self.wake_us;
            self.wakes += 1;
        }
        t.max(self.awake_at_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_command_after_an_idle_period_waits_the_exit_latency() {
        let mut p = Power::new(100.0, 900.0).unwrap();
        // Busy until 50: at 120 only 70 µs idle, still awake.
        assert_eq!(p.start(120.0, 50.0), 120.0);
        assert_eq!(p.wakes, 0);
        // Idle since 200: at 300 it has slept (100 µs idle); the wake ends at 1200.
        assert_eq!(p.start(300.0, 200.0), 1200.0);
        // A command arriving during the wake waits for the same wake, not a new one.
        assert_eq!(p.start(500.0, 200.0), 1200.0);
        assert_eq!(p.wakes, 1);
        // After the wake, busy until 1300: awake.
        assert_eq!(p.start(1350.0, 1300.0), 1350.0);
        // Exactly the idle threshold: asleep.
        assert_eq!(p.start(1500.0, 1400.0), 2400.0);
        assert_eq!(p.wakes, 2);
        assert!(Power::new(100.0, 0.0).is_none());
    }
}
