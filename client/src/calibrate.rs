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
        loopback_round_trips_per_s: loopback_round_trips_per_s(each)?,
    })
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

fn loopback_round_trips_per_s(each: Duration) -> std::io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let echo = std::thread::Builder::new()
        .name("rpclab-calibrate-echo".into())
        .spawn(move || -> std::io::Result<()> {
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
    fn both_workloads_report_a_rate() {
        let f = calibrate(Duration::from_millis(20)).unwrap();
        assert!(f.cpu_rounds_per_s > 0.0 && f.cpu_rounds_per_s.is_finite());
        assert!(f.loopback_round_trips_per_s > 0.0);
    }
}
