//! The client's own cost, measured from inside: CPU time of the whole
//! process and its peak resident memory.
//!
//! The orchestrator reads the *server's* counters through the engine when
//! the client announces its window; the client's own window is known to the
//! nanosecond here, and its container may be gone by the time the
//! orchestrator could ask, so the client measures itself.

use rpclab_model::result::Cost;
use std::time::{Duration, Instant};

/// CPU time consumed so far by every thread of this process.
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer we pass,
    // which points at a live, properly aligned local.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Peak resident set size of this process, in bytes.
pub fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the zero-initialised struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return 0;
    }
    usage.ru_maxrss as u64 * 1024
}

/// A reading taken when the measurement window opens.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    cpu: Duration,
    at: Instant,
}

impl Mark {
    pub fn now() -> Mark {
        Mark {
            cpu: process_cpu_time(),
            at: Instant::now(),
        }
    }

    /// The cost from this mark until now, over `calls` calls.
    pub fn cost_until_now(&self, calls: u64) -> Cost {
        let cpu = process_cpu_time().saturating_sub(self.cpu);
        let wall = self.at.elapsed().as_secs_f64().max(1e-9);
        Cost {
            cpu_ms: cpu.as_secs_f64() * 1e3,
            cpu_us_per_call: if calls == 0 {
                0.0
            } else {
                cpu.as_secs_f64() * 1e6 / calls as f64
            },
            cpu_cores_busy: cpu.as_secs_f64() / wall,
            memory_peak_mib: peak_rss() as f64 / (1024.0 * 1024.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_as_cpu_time() {
        let mark = Mark::now();
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let cost = mark.cost_until_now(10);
        assert!(cost.cpu_ms >= 30.0, "{cost:?}");
        assert!(cost.cpu_cores_busy > 0.5, "{cost:?}");
        assert!(cost.memory_peak_mib > 0.0);
    }
}
