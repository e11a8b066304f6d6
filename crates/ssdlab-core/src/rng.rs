//! Small deterministic PRNG (xoshiro256**, seeded by SplitMix64) and a Zipf sampler
//! (rejection-inversion, Hörmann & Derflinger 1996: O(1) memory and time per sample).
//! Kept in-tree so results never change with a dependency's version.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Exponentially distributed with the given mean (inversion; 1 − U keeps the log finite).
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.f64()).ln()
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) (Lemire's multiply-shift; n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Zipf distribution over ranks 1..=n with P(k) ∝ k^−θ (θ > 0).
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

fn helper1(x: f64) -> f64 {
    // ln(1+x)/x, accurate near 0
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    // (e^x − 1)/x, accurate near 0
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        assert!(n >= 1 && theta > 0.0);
        let mut z = Zipf {
            n: n as f64,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.theta) * lx) * lx
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.theta);
        if t < -1.0 {
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }
    /// A rank in 1..=n.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn zipf_matches_pmf() {
        // Empirical frequencies of ranks 1..3 against k^-θ / H(n, θ).
        let (n, theta) = (100u64, 0.9);
        let z = Zipf::new(n, theta);
        let mut rng = Rng::new(1);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        let hn: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        for k in 1..=3u64 {
            let p = (k as f64).powf(-theta) / hn;
            let got = counts[k as usize] as f64 / draws as f64;
            assert!(
                (got - p).abs() < 0.01 * p.max(0.05),
                "rank {k}: {got} vs {p}"
            );
        }
    }
}
