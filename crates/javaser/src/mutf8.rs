//! Java's modified UTF-8 (`DataOutput.writeUTF`): U+0000 as `C0 80`,
//! supplementary characters as two 3-byte surrogates.

/// Number of bytes `s` takes in modified UTF-8.
pub fn encoded_len(s: &str) -> usize {
    // ASCII without NUL is the same bytes (the common case, and the lab's
    // payloads: a 1 MiB string is counted without decoding characters).
    if is_plain_ascii(s.as_bytes()) {
        return s.len();
    }
    s.chars()
        .map(|c| match c as u32 {
            0 => 2,
            1..=0x7f => 1,
            0x80..=0x7ff => 2,
            0x800..=0xffff => 3,
            _ => 6,
        })
        .sum()
}

/// Appends `s` in modified UTF-8 to `out`.
pub fn encode_into(s: &str, out: &mut Vec<u8>) {
    if is_plain_ascii(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    let mut buf = [0u16; 2];
    for c in s.chars() {
        for &u in c.encode_utf16(&mut buf).iter() {
            let u = u32::from(u);
            if (1..=0x7f).contains(&u) {
                out.push(u as u8);
            } else if u <= 0x7ff {
                out.push(0xc0 | (u >> 6) as u8);
                out.push(0x80 | (u & 0x3f) as u8);
            } else {
                out.push(0xe0 | (u >> 12) as u8);
                out.push(0x80 | ((u >> 6) & 0x3f) as u8);
                out.push(0x80 | (u & 0x3f) as u8);
            }
        }
    }
}

/// Whether `b` is ASCII without NUL: then modified UTF-8 and UTF-8 agree.
fn is_plain_ascii(b: &[u8]) -> bool {
    b.iter().all(|&x| (1..0x80).contains(&x))
}

/// Encodes `s` in modified UTF-8.
pub fn encode(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(encoded_len(s));
    encode_into(s, &mut v);
    v
}

/// Decodes modified UTF-8. Unpaired surrogates (which Java allows) become
/// U+FFFD; malformed byte sequences are an error (`None`).
pub fn decode(b: &[u8]) -> Option<String> {
    if is_plain_ascii(b) {
        return std::str::from_utf8(b).ok().map(str::to_owned);
    }
    let mut units = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let x = b[i];
        match x >> 4 {
            0..=7 => {
                units.push(u16::from(x));
                i += 1;
            }
            12 | 13 => {
                let y = *b.get(i + 1)?;
                if y & 0xc0 != 0x80 {
                    return None;
                }
                units.push((u16::from(x & 0x1f) << 6) | u16::from(y & 0x3f));
                i += 2;
            }
            14 => {
                let y = *b.get(i + 1)?;
                let z = *b.get(i + 2)?;
                if y & 0xc0 != 0x80 || z & 0xc0 != 0x80 {
                    return None;
                }
                units.push(
                    (u16::from(x & 0x0f) << 12) | (u16::from(y & 0x3f) << 6) | u16::from(z & 0x3f),
                );
                i += 3;
            }
            _ => return None,
        }
    }
    Some(
        char::decode_utf16(units)
            .map(|r| r.unwrap_or('\u{fffd}'))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_and_surrogates() {
        assert_eq!(encode("\0"), [0xc0, 0x80]);
        assert_eq!(encode("\u{1F600}"), [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]);
        assert_eq!(encoded_len("a\0\u{e9}\u{20ac}\u{1F600}"), 1 + 2 + 2 + 3 + 6);
        for s in ["", "abc", "\0x\0", "h\u{e9}llo \u{20ac} \u{1F600}"] {
            assert_eq!(decode(&encode(s)).as_deref(), Some(s));
        }
        assert_eq!(decode(&[0xff]), None);
        assert_eq!(decode(&[0xc3]), None);
    }
}
