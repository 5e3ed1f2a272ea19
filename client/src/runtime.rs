//! The tokio runtime of the client's binaries (`rpclab-client`,
//! `rpclab-echo`), sized to the CPUs they run on.
//!
//! On one CPU (the lab pins the client; `bench peers` pins every tool),
//! tokio's current-thread scheduler: the multi-thread one runs a task woken
//! by another right after it (its LIFO slot), so a shared HTTP/2
//! connection's task ran after every caller that queued a request and wrote
//! each request alone; in FIFO order the callers' requests are queued first
//! and written together. It also saves the cross-thread wake-ups of
//! `block_on` on a second thread.

use tokio::runtime::{Builder, Runtime};

/// The CPUs this process may run on (1 when the system does not say).
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A runtime for `cpus` CPUs: current-thread for one (or none), otherwise
/// one worker thread per CPU.
pub fn for_cpus(cpus: usize) -> std::io::Result<Runtime> {
    if cpus <= 1 {
        Builder::new_current_thread().enable_all().build()
    } else {
        Builder::new_multi_thread()
            .worker_threads(cpus)
            .enable_all()
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cpu_is_the_current_thread_scheduler_and_more_are_workers() {
        use tokio::runtime::RuntimeFlavor;
        assert_eq!(
            for_cpus(1).unwrap().handle().runtime_flavor(),
            RuntimeFlavor::CurrentThread
        );
        let two = for_cpus(2).unwrap();
        assert_eq!(two.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        assert_eq!(two.metrics().num_workers(), 2);
        assert!(available_cpus() >= 1);
    }
}
