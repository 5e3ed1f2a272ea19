//! A seeded random generator for what must replay from its seed: a run's
//! order of systems in each round (xtask's rounds), a test's kill points,
//! a simulation's draws. One small, well-known generator, no dependency.

/// A small, well-known generator (SplitMix64, Steele et al. 2014): enough
/// to shuffle a handful of systems reproducibly, with no dependency;
/// the same seed draws the same sequence on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0), by rejection so that no index is
    /// favoured.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// A uniform draw from [0, 1): the top 53 bits of the next output.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_replays_its_order_and_another_seed_draws_another() {
        let order = |seed| {
            let mut rng = SplitMix64::new(seed);
            (0..6)
                .map(|_| {
                    let mut v: Vec<u32> = (0..5).collect();
                    rng.shuffle(&mut v);
                    v
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(order(42), order(42));
        assert_ne!(order(42), order(43));
        for round in order(7) {
            let mut sorted = round.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4], "a shuffle is a permutation");
        }
    }

    #[test]
    fn every_position_is_reached_evenly() {
        // 3 items, 60,000 shuffles: each item lands first about a third of
        // the time (a biased shuffle is off by far more than 2 %).
        let mut rng = SplitMix64::new(1);
        let mut first = [0u32; 3];
        for _ in 0..60_000 {
            let mut v = [0, 1, 2];
            rng.shuffle(&mut v);
            first[v[0]] += 1;
        }
        for n in first {
            assert!((19_600..=20_400).contains(&n), "{first:?}");
        }
    }

    #[test]
    fn below_stays_below_and_uniform_in_the_unit_interval() {
        let mut rng = SplitMix64::new(9);
        for n in [1, 2, 3, 7, 1000] {
            assert!((0..200).all(|_| rng.below(n) < n));
        }
        assert!((0..1000)
            .map(|_| rng.uniform())
            .all(|u| (0.0..1.0).contains(&u)));
    }
}
