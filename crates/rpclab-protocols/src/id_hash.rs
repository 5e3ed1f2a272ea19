//! A hash map keyed by call or stream ids, the per-call lookup of the
//! multiplexing connections ([`mux`](crate::mux) and gRPC's reader).
//!
//! Ids are sequential, so an identity hash would give hashbrown equal
//! control bytes for neighbouring ids; one multiplication (Fibonacci
//! hashing) spreads them, at a fraction of SipHash's cost per call.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from sequential ids (`u32` or `u64`) to `V`, hashed by [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Hashes an id with one multiplication.
#[derive(Default)]
pub struct IdHasher(u64);

const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(FIBONACCI);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(FIBONACCI);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(FIBONACCI);
    }
}
