//! Java behaviour a writer needs to reproduce Java's bytes exactly.

/// `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 units.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

/// The order in which a `java.util.HashMap<String, _>` built by `put`ting
/// `keys` in this order (default capacity and load factor) iterates them:
/// indices into `keys`. Kryo's MapSerializer writes entries in this order,
/// so a writer following it produces the bytes a Java peer would. (Buckets
/// with 8 or more colliding keys, which Java turns into trees, are not
/// modelled; any order reads back as the same map.)
pub fn hash_map_order(keys: &[&str]) -> Vec<usize> {
    // The table doubles from 16 while size > capacity * 0.75; a resize
    // keeps the insertion order within each bucket.
    let mut cap: usize = 16;
    while keys.len() > cap / 4 * 3 {
        cap *= 2;
    }
    let bucket = |k: &str| {
        let h = string_hash(k) as u32;
        ((h ^ (h >> 16)) as usize) & (cap - 1)
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| bucket(keys[i]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_codes_match_java() {
        // Values of "…".hashCode() in Java.
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("path"), 3433509);
        assert_eq!(string_hash("hello"), 99162322);
    }
}
