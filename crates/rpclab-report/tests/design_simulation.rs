//! The lab's design, simulated: how often does it decide wrongly?
//!
//! Per-round log ratios are drawn from the two-level model the plan
//! assumes: a JVM start's own offset (σ_between) plus each round's noise
//! (σ_within), with the spreads the pilot measured (docs/methodology.md,
//! "The analysis plan"). 10,000 seeded runs per case. The lab's design
//! (a fixed number of starts × rounds, t over the start means, Bonferroni
//! over a claim's pairs) must decide a false direction at a true ratio of
//! 1, and any magnitude or equivalence at the edge of its band, in at most
//! α of runs. The design used before plans (one start, the median's
//! order-statistic interval, a look after every round from 6 on, stopping
//! at the first decided one) is simulated beside it and its rate printed.
//!
//! Where the lab's rate is α exactly by construction (an edge case: the
//! interval's own tail), the check allows the simulation's own error,
//! three standard errors of a proportion α over 10,000 runs.

use rpclab_model::aggregate::{median, median_interval};
use rpclab_model::random::SplitMix64;
use rpclab_model::verdict::{Direction, Magnitude};
use rpclab_report::across_starts::across_starts;
use rpclab_report::verdicts::{band, equivalence_band, magnitude};

const RUNS: usize = 10_000;
const ALPHA: f64 = 0.05;
const FLOOR: f64 = 0.05;
const MAGNITUDE_TOLERANCE: f64 = 0.25;
const EQUIVALENCE_TOLERANCE: f64 = 0.10;

/// Box–Muller normals over the model's seeded SplitMix64.
struct Normal(SplitMix64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0.uniform()
    }

    fn draw(&mut self, sd: f64) -> f64 {
        let u = self.uniform().max(f64::MIN_POSITIVE);
        let v = self.uniform();
        sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The model's spreads of a per-round log ratio.
#[derive(Clone, Copy)]
struct Noise {
    within: f64,
    between: f64,
}

/// The pilot's: seed 001's within-start spread, and a start effect of
/// 0.03 (the pilot saw 0 to 0.06).
const PILOT: Noise = Noise {
    within: 0.09,
    between: 0.03,
};

/// One run of the lab's design: per-round speed ratios, by start.
fn planned_run(
    rng: &mut Normal,
    true_ratio: f64,
    starts: u32,
    rounds: u32,
    n: Noise,
) -> Vec<Vec<f64>> {
    (0..starts)
        .map(|_| {
            let offset = rng.draw(n.between);
            (0..rounds)
                .map(|_| (true_ratio.ln() + offset + rng.draw(n.within)).exp())
                .collect()
        })
        .collect()
}

/// Share of runs of the lab's design (pairs of a claim of `family`, each
/// at α / family) in which `wrong` holds of some pair's interval.
fn lab_rate(
    seed: u64,
    true_ratio: f64,
    (starts, rounds, family): (u32, u32, usize),
    n: Noise,
    wrong: impl Fn(f64, f64, f64) -> bool,
) -> f64 {
    let mut rng = Normal(SplitMix64::new(seed));
    let alpha = ALPHA / family as f64;
    let mut hits = 0;
    for _ in 0..RUNS {
        let any = (0..family).any(|_| {
            let run = planned_run(&mut rng, true_ratio, starts, rounds, n);
            let a = across_starts(&run, alpha).expect("two starts or more");
            wrong(a.low, a.high, a.ratio)
        });
        hits += usize::from(any);
    }
    hits as f64 / RUNS as f64
}

/// A direction decided at a true ratio of 1 (anything but "within noise").
fn false_direction(low: f64, high: f64, ratio: f64) -> bool {
    let (d, decided) = band(low, high, ratio, FLOOR);
    decided && matches!(d, Direction::Holds | Direction::Reversed)
}

/// The design before plans: one start, a look after every round from 6 to
/// `max`, stopping at the first look whose interval decides. Returns the
/// share of runs that decided a direction at a true ratio of 1, and the
/// share whose interval excluded 1 at some look.
fn old_design(seed: u64, max: usize, n: Noise) -> (f64, f64) {
    let mut rng = Normal(SplitMix64::new(seed));
    let (mut wrong, mut excluded) = (0, 0);
    for _ in 0..RUNS {
        let offset = rng.draw(n.between);
        let ratios: Vec<f64> = (0..max)
            .map(|_| (offset + rng.draw(n.within)).exp())
            .collect();
        let mut decided_wrong = false;
        let mut excluded_once = false;
        for look in 6..=max {
            let r = &ratios[..look];
            let ci = median_interval(r, 0.95).expect("six values");
            excluded_once |= ci.low > 1.0 || ci.high < 1.0;
            let (d, decided) = band(ci.low, ci.high, median(r), FLOOR);
            if decided {
                decided_wrong = matches!(d, Direction::Holds | Direction::Reversed);
                break;
            }
        }
        wrong += usize::from(decided_wrong);
        excluded += usize::from(excluded_once);
    }
    (wrong as f64 / RUNS as f64, excluded as f64 / RUNS as f64)
}

/// α plus three standard errors of a proportion α over [`RUNS`] runs.
fn at_most_alpha() -> f64 {
    ALPHA + 3.0 * (ALPHA * (1.0 - ALPHA) / RUNS as f64).sqrt()
}

#[test]
fn at_a_true_ratio_of_1_the_lab_decides_a_direction_in_at_most_alpha_of_runs() {
    for (design, name) in [
        ((4, 1, 1), "4 starts × 1 round, one pair"),
        ((4, 1, 3), "4 starts × 1 round, a claim of 3 pairs"),
        ((5, 1, 6), "5 starts × 1 round, a claim of 6 pairs"),
        ((2, 1, 1), "2 starts × 1 round, one pair"),
        ((3, 2, 3), "3 starts × 2 rounds, a claim of 3 pairs"),
    ] {
        for (noise, what) in [
            (PILOT, "pilot spreads"),
            (
                Noise {
                    within: 0.02,
                    between: 0.10,
                },
                "starts dominate",
            ),
        ] {
            let rate = lab_rate(7, 1.0, design, noise, false_direction);
            println!(
                "lab design, {name}, {what}: false direction in {:.2} % of runs",
                rate * 100.0
            );
            assert!(rate <= ALPHA, "{name}, {what}: {rate}");
        }
    }
    for (max, noise, what) in [
        (
            12,
            Noise {
                within: 0.09,
                between: 0.0,
            },
            "no start effect",
        ),
        (
            20,
            Noise {
                within: 0.09,
                between: 0.0,
            },
            "no start effect",
        ),
        (12, PILOT, "pilot spreads"),
        (20, PILOT, "pilot spreads"),
    ] {
        let (wrong, excluded) = old_design(7, max, noise);
        println!(
            "old design, 6 to {max} rounds, one start, {what}: false direction in {:.2} % of runs, interval clear of 1 at some look in {:.2} %",
            wrong * 100.0,
            excluded * 100.0
        );
    }
    // The old design is worse than α where starts differ at all: its one
    // start's offset is in every round.
    let (wrong, _) = old_design(7, 20, PILOT);
    assert!(
        wrong > ALPHA,
        "the old design's rate {wrong} should show why it was replaced"
    );
}

#[test]
fn at_the_edges_of_the_bands_the_lab_decides_in_at_most_alpha_of_runs() {
    // Published 1.5: the magnitude band is [1.2, 1.875]. At either edge a
    // decided magnitude (match or differ) is a coin the interval tosses.
    for edge in [
        1.5 * (1.0 + MAGNITUDE_TOLERANCE),
        1.5 / (1.0 + MAGNITUDE_TOLERANCE),
    ] {
        let rate = lab_rate(11, edge, (4, 1, 1), PILOT, |lo, hi, _| {
            magnitude(1.5, Some((lo, hi)), MAGNITUDE_TOLERANCE) != Magnitude::Undecided
        });
        println!(
            "magnitude at the edge {edge:.3}: decided in {:.2} % of runs",
            rate * 100.0
        );
        assert!(rate <= at_most_alpha(), "magnitude at {edge}: {rate}");
    }
    // "About as fast" at the edge of ±10 %: holding it is a false verdict.
    for edge in [
        1.0 + EQUIVALENCE_TOLERANCE,
        1.0 / (1.0 + EQUIVALENCE_TOLERANCE),
    ] {
        let rate = lab_rate(13, edge, (4, 1, 1), PILOT, |lo, hi, r| {
            equivalence_band(lo, hi, r, EQUIVALENCE_TOLERANCE) == (Direction::Holds, true)
        });
        println!(
            "equivalence at the edge {edge:.3}: held in {:.2} % of runs",
            rate * 100.0
        );
        assert!(rate <= at_most_alpha(), "equivalence at {edge}: {rate}");
    }
    // "Within noise" at the floor's edge is as often wrong as the
    // interval's upper tail: decided level in at most α of runs.
    let rate = lab_rate(17, 1.0 + FLOOR, (4, 1, 1), PILOT, |lo, hi, r| {
        band(lo, hi, r, FLOOR) == (Direction::WithinNoise, true) && hi <= 1.0 + FLOOR
    });
    println!(
        "within noise at the floor's edge: decided in {:.2} % of runs",
        rate * 100.0
    );
    assert!(rate <= at_most_alpha(), "floor: {rate}");
}
