//! A process's own cost, measured from inside: CPU time of the whole
//! process and its peak resident memory.
//!
//! The load client (`rpclab-client`) and the raw-socket floor
//! (`rpclab-floor`) each report what they spent in their window. The
//! orchestrator reads the *server's* counters through the engine when the
//! client announces its window; the client's own window is known to the
//! nanosecond in the process, and its container may be gone by the time
//! the orchestrator could ask, so each tool measures itself.

use std::time::Duration;

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

/// Context switches, voluntary and not, of every thread of this process so
/// far (ended threads included: `getrusage` sums them for the process).
pub fn process_context_switches() -> u64 {
    // SAFETY: getrusage fills the zero-initialised struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return 0;
    }
    (usage.ru_nvcsw + usage.ru_nivcsw) as u64
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Work shows as CPU time, however slowly the machine runs it: the
    /// loop ends when the counter has moved, not after a fixed time.
    #[test]
    fn busy_work_shows_as_cpu_time() {
        let before = process_cpu_time();
        let mut x = 0u64;
        while process_cpu_time().saturating_sub(before) < Duration::from_millis(5) {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        assert!(process_cpu_time() > before);
        assert!(peak_rss() > 0);
    }

    /// A thread that sleeps switches out: the count grows by its switch.
    #[test]
    fn a_sleeping_thread_switches_and_is_counted() {
        let before = process_context_switches();
        std::thread::spawn(|| std::thread::sleep(Duration::from_millis(1)))
            .join()
            .unwrap();
        assert!(process_context_switches() > before);
    }
}
