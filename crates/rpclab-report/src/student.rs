//! Student's t distribution for whole degrees of freedom: the quantile a
//! plan's interval over JVM starts needs, with no statistics dependency.
//!
//! The CDF is the closed form for integer ν (Abramowitz & Stegun 26.7.3,
//! 26.7.4): with θ = atan(t / √ν), P(|T| < t) is a finite series in
//! cos²θ. The quantile is found by bisection, which is exact to the
//! precision asked and cannot fail to converge.

use std::f64::consts::PI;

/// P(T ≤ t) for T ~ t(ν), ν ≥ 1.
pub fn cdf(t: f64, df: u32) -> f64 {
    assert!(df >= 1, "Student's t needs at least one degree of freedom");
    let nu = f64::from(df);
    let theta = (t.abs() / nu.sqrt()).atan();
    let (s, c2) = (theta.sin(), theta.cos().powi(2));
    // A(t | ν) = P(|T| < |t|).
    let within = if df % 2 == 1 {
        // θ + sinθ cosθ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + … up to cos^(ν−3)θ).
        let mut sum = 0.0;
        if df > 1 {
            let (mut term, mut k) = (1.0, 1u32);
            sum = term;
            while 2 * k < df - 1 {
                term *= f64::from(2 * k) / f64::from(2 * k + 1) * c2;
                sum += term;
                k += 1;
            }
        }
        2.0 / PI * (theta + s * theta.cos() * sum)
    } else {
        // sinθ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … up to cos^(ν−2)θ).
        let (mut term, mut sum, mut k) = (1.0, 1.0, 1u32);
        while 2 * k < df {
            term *= f64::from(2 * k - 1) / f64::from(2 * k) * c2;
            sum += term;
            k += 1;
        }
        s * sum
    };
    if t >= 0.0 {
        0.5 + within / 2.0
    } else {
        0.5 - within / 2.0
    }
}

/// The `p` quantile of t(ν), for p in (0.5, 1).
pub fn quantile(p: f64, df: u32) -> f64 {
    assert!(p > 0.5 && p < 1.0, "an upper quantile, p in (0.5, 1)");
    let (mut lo, mut hi) = (0.0, 1.0);
    while cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_the_tables_values() {
        // Values from the standard t tables (four decimals).
        for (p, df, want) in [
            (0.975, 1, 12.7062),
            (0.975, 2, 4.3027),
            (0.975, 3, 3.1824),
            (0.975, 4, 2.7764),
            (0.975, 9, 2.2622),
            (0.995, 2, 9.9248),
            (0.995, 5, 4.0321),
            (0.95, 10, 1.8125),
        ] {
            let got = quantile(p, df);
            assert!(
                (got - want).abs() < 5e-4,
                "t({p}, {df}) = {got}, not {want}"
            );
        }
    }

    #[test]
    fn the_cdf_is_symmetric_and_monotone() {
        for df in 1..12 {
            assert!((cdf(0.0, df) - 0.5).abs() < 1e-12);
            let mut last = 0.0;
            for i in -40..=40 {
                let t = f64::from(i) / 4.0;
                let c = cdf(t, df);
                assert!(c >= last, "monotone at {t}, df {df}");
                assert!((c + cdf(-t, df) - 1.0).abs() < 1e-12);
                last = c;
            }
        }
    }
}
