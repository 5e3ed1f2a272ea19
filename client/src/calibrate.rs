//! A short, fixed measurement of the CPU set the process runs on.
//!
//! Two snapshots from different hosts differ by the host as much as by the
//! code. The lab runs this at the start of every run, once pinned to the
//! server's CPUs and once to the client's, and records the figures in the
//! manifest, so that `lab compare` can tell a slower host from slower code
//! and normalise by it. Two workloads, because RPC cells are bound by one
//! or the other:
//!
//! * a CPU-bound kernel (integer mixing and a small sort, in cache), whose
//!   rounds per second follow the core's speed;
//! * a one-byte TCP ping-pong over loopback between two threads, whose
//!   round trips per second follow the kernel's network path and wake-ups,
//!   what a small RPC spends most of its time in.
//!
//! Both run for a fixed time and report a rate; neither is a test.

use rpclab_model::result::CalibrationFigures;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Runs both workloads for `each` and returns their rates (`cpus` is left
/// for the caller, who knows which set it pinned the process to).
pub fn calibrate(each: Duration) -> std::io::Result<CalibrationFigures> {
    Ok(CalibrationFigures {
        cpus: String::new(),
        cpu_rounds_per_s: cpu_rounds_per_s(each),
        loopback_round_trips_per_s: loopback_round_trips_per_s(each, None)?,
    })
}

/// The loopback ping-pong *across* two CPU sets: the pinging thread on
/// `ping_cpus`, the echo on `echo_cpus` (the client's and the server's).
/// That is the path a single synchronous caller's every call takes, and
/// two hosts can differ there far more than on one set: a wake-up of an
/// idle core on another CPU is what a VM makes slow. The CPU kernel is not
/// run (0): it says nothing about the crossing.
pub fn calibrate_across(
    each: Duration,
    ping_cpus: &str,
    echo_cpus: &str,
) -> std::io::Result<CalibrationFigures> {
    let ping = parse_cpus(ping_cpus)?;
    let echo = parse_cpus(echo_cpus)?;
    pin_this_thread(&ping)?;
    Ok(CalibrationFigures {
        cpus: format!("{ping_cpus} → {echo_cpus}"),
        cpu_rounds_per_s: 0.0,
        loopback_round_trips_per_s: loopback_round_trips_per_s(each, Some(echo))?,
    })
}

/// A cpuset list (`0-2,5`) as CPU numbers.
fn parse_cpus(text: &str) -> std::io::Result<Vec<usize>> {
    let bad = || std::io::Error::other(format!("`{text}` is not a CPU list such as 0-2,5"));
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= libc::CPU_SETSIZE as usize {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    if cpus.is_empty() {
        return Err(bad());
    }
    Ok(cpus)
}

/// Pins the calling thread to `cpus` (within the container's cpuset, so no
/// capability is needed).
fn pin_this_thread(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays within
    // it (parse_cpus bounds every CPU by CPU_SETSIZE); pid 0 is this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus {
            libc::CPU_SET(*cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One round of the CPU kernel: mix 256 words, sort them, fold them.
fn cpu_round(seed: u64) -> u64 {
    let mut words = [0u64; 256];
    let mut x = seed | 1;
    for w in &mut words {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *w = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    words.sort_unstable();
    words.iter().fold(0, |acc, w| acc.rotate_left(5) ^ w)
}

fn cpu_rounds_per_s(each: Duration) -> f64 {
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut acc = 0u64;
    // At least one batch, however slow the machine: a rate, never 0/0.
    loop {
        for _ in 0..64 {
            acc = std::hint::black_box(cpu_round(acc.wrapping_add(rounds)));
            rounds += 1;
        }
        if start.elapsed() >= each {
            break;
        }
    }
    rounds as f64 / start.elapsed().as_secs_f64()
}

/// One-byte round trips per second between this thread and an echo thread
/// (pinned to `echo_cpus` when given).
fn loopback_round_trips_per_s(
    each: Duration,
    echo_cpus: Option<Vec<usize>>,
) -> std::io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let echo = std::thread::Builder::new()
        .name("rpclab-calibrate-echo".into())
        .spawn(move || -> std::io::Result<()> {
            if let Some(cpus) = &echo_cpus {
                pin_this_thread(cpus)?;
            }
            let (mut conn, _) = listener.accept()?;
            conn.set_nodelay(true)?;
            let mut byte = [0u8; 1];
            loop {
                match conn.read(&mut byte)? {
                    0 => return Ok(()),
                    _ => conn.write_all(&byte)?,
                }
            }
        })?;
    let mut conn = TcpStream::connect(addr)?;
    conn.set_nodelay(true)?;
    let mut byte = [0u8; 1];
    let start = Instant::now();
    let mut trips = 0u64;
    loop {
        conn.write_all(&[7])?;
        conn.read_exact(&mut byte)?;
        trips += 1;
        if start.elapsed() >= each {
            break;
        }
    }
    let rate = trips as f64 / start.elapsed().as_secs_f64();
    drop(conn);
    echo.join()
        .map_err(|_| std::io::Error::other("the calibration echo thread panicked"))??;
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_kernel_is_deterministic() {
        assert_eq!(cpu_round(42), cpu_round(42));
        assert_ne!(cpu_round(42), cpu_round(44));
    }

    #[test]
    fn cpu_lists_parse_as_cpusets_do_and_nonsense_is_refused() {
        assert_eq!(parse_cpus("0").unwrap(), vec![0]);
        assert_eq!(parse_cpus("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        for bad in ["", "a", "2-1", "0-99999"] {
            assert!(parse_cpus(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_crossing_reports_a_rate_between_two_cpus_of_this_machine() {
        let f = calibrate_across(Duration::from_millis(20), "0", "0").unwrap();
        assert!(f.loopback_round_trips_per_s > 0.0);
        assert_eq!(f.cpus, "0 → 0");
    }

    #[test]
    fn both_workloads_report_a_rate() {
        let f = calibrate(Duration::from_millis(20)).unwrap();
        assert!(f.cpu_rounds_per_s > 0.0 && f.cpu_rounds_per_s.is_finite());
        assert!(f.loopback_round_trips_per_s > 0.0);
    }
}
