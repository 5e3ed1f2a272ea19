//! Java's view of strings: UTF-16 lengths and CESU-8 bytes.
//!
//! Hessian string lengths count UTF-16 code units, and Java's
//! `Hessian2Output.printString` encodes each UTF-16 unit on its own: a
//! supplementary character (outside the Basic Multilingual Plane) becomes
//! two 3-byte sequences, one per surrogate, instead of UTF-8's single 4-byte
//! sequence (this is known as CESU-8). For text in the BMP, CESU-8 and UTF-8
//! are identical, which lets the encoder copy Rust's UTF-8 bytes directly in
//! the common case.

use bytes::BufMut;

/// Number of UTF-16 units of `s`.
pub(crate) fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // Every char starts with exactly one non-continuation byte; 4-byte
    // sequences are the supplementary characters, 2 units each.
    s.bytes()
        .map(|b| match b {
            0x80..=0xbf => 0,
            0xf0..=0xff => 2,
            _ => 1,
        })
        .sum()
}

/// Byte offset in `s` that ends the first chunk of at most `max_units`
/// UTF-16 units, and the chunk's length in units.
///
/// A supplementary character is never split: when its surrogate pair would
/// straddle the limit the chunk stops before it (Java does the same: "chunk
/// can't end in high surrogate").
pub(crate) fn split_at_units(s: &str, max_units: usize) -> (usize, usize) {
    if s.len() <= max_units {
        // Each unit takes at least one byte, so everything fits.
        return (s.len(), utf16_len(s));
    }
    let prefix = &s.as_bytes()[..max_units];
    if prefix.is_ascii() {
        return (max_units, max_units);
    }
    let mut units = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > max_units {
            return (i, units);
        }
        units += w;
    }
    (s.len(), units)
}

/// Writes `s` as CESU-8.
pub(crate) fn put_cesu8<B: BufMut>(buf: &mut B, s: &str) {
    let bytes = s.as_bytes();
    // Fast paths: without supplementary characters CESU-8 is UTF-8.
    if bytes.is_ascii() {
        buf.put_slice(bytes);
        return;
    }
    let Some(first) = bytes.iter().position(|&b| b >= 0xf0) else {
        buf.put_slice(bytes);
        return;
    };
    let mut start = 0;
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] >= 0xf0 {
            buf.put_slice(&bytes[start..i]);
            // Safe indexing: `s` is valid UTF-8, so a 4-byte lead has 3 continuation bytes.
            let cp = (u32::from(bytes[i] & 0x07) << 18)
                | (u32::from(bytes[i + 1] & 0x3f) << 12)
                | (u32::from(bytes[i + 2] & 0x3f) << 6)
                | u32::from(bytes[i + 3] & 0x3f);
            let v = cp - 0x10000;
            put_surrogate(buf, 0xd800 | (v >> 10));
            put_surrogate(buf, 0xdc00 | (v & 0x3ff));
            i += 4;
            start = i;
        } else {
            i += 1;
        }
    }
    buf.put_slice(&bytes[start..]);
}

fn put_surrogate<B: BufMut>(buf: &mut B, unit: u32) {
    buf.put_slice(&[
        0xe0 | (unit >> 12) as u8,
        0x80 | ((unit >> 6) & 0x3f) as u8,
        0x80 | (unit & 0x3f) as u8,
    ]);
}

/// Incremental CESU-8 (and, leniently, UTF-8) decoder for the chunks of one
/// string.
///
/// A surrogate pair may be split across chunks by writers that do not take
/// Java's care, so a pending high surrogate is carried from one chunk to the
/// next. Unpaired surrogates, which a Java `String` may contain but a Rust
/// `String` cannot, become U+FFFD.
#[derive(Default)]
pub(crate) struct Cesu8Decoder {
    pending_high: Option<u16>,
}

/// Outcome of decoding one chunk.
pub(crate) enum ChunkError {
    /// Not enough bytes for the announced number of units.
    Eof,
    /// A malformed sequence at this offset within the chunk's input slice.
    Invalid(usize),
}

impl Cesu8Decoder {
    /// Decodes `units` UTF-16 units from the front of `input` into `out` and
    /// returns the number of bytes used.
    pub(crate) fn chunk(
        &mut self,
        input: &[u8],
        units: usize,
        out: &mut String,
    ) -> Result<usize, ChunkError> {
        // Fast path: plain ASCII.
        if self.pending_high.is_none()
            && let Some(head) = input.get(..units)
            && head.is_ascii()
            && let Ok(s) = std::str::from_utf8(head)
        {
            out.push_str(s);
            return Ok(units);
        }
        let mut i = 0;
        let mut left = units;
        while left > 0 {
            let b0 = *input.get(i).ok_or(ChunkError::Eof)?;
            match b0 {
                0x00..=0x7f => {
                    // Copy the whole ASCII run at once.
                    let run = input[i..]
                        .iter()
                        .take(left)
                        .take_while(|b| b.is_ascii())
                        .count();
                    self.flush_pending(out);
                    if let Ok(s) = std::str::from_utf8(&input[i..i + run]) {
                        out.push_str(s);
                    }
                    i += run;
                    left -= run;
                }
                0xc0..=0xdf => {
                    let b1 = cont(input, i + 1)?;
                    let cp = (u32::from(b0 & 0x1f) << 6) | b1;
                    // Overlong forms are rejected, except C0 80 for NUL (modified UTF-8).
                    if cp < 0x80 && cp != 0 {
                        return Err(ChunkError::Invalid(i));
                    }
                    self.push_scalar(cp, out);
                    i += 2;
                    left -= 1;
                }
                0xe0..=0xef => {
                    let b1 = cont(input, i + 1)?;
                    let b2 = cont(input, i + 2)?;
                    let cp = (u32::from(b0 & 0x0f) << 12) | (b1 << 6) | b2;
                    if cp < 0x800 {
                        return Err(ChunkError::Invalid(i));
                    }
                    match cp {
                        0xd800..=0xdbff => {
                            self.flush_pending(out);
                            self.pending_high = Some(cp as u16);
                        }
                        0xdc00..=0xdfff => match self.pending_high.take() {
                            Some(hi) => {
                                let c = 0x10000 + ((u32::from(hi) - 0xd800) << 10) + (cp - 0xdc00);
                                out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                            }
                            None => out.push(char::REPLACEMENT_CHARACTER),
                        },
                        _ => self.push_scalar(cp, out),
                    }
                    i += 3;
                    left -= 1;
                }
                0xf0..=0xf4 => {
                    // Standard UTF-8 for a supplementary character, as non-Java
                    // writers send it: two UTF-16 units.
                    if left < 2 {
                        return Err(ChunkError::Invalid(i));
                    }
                    let b1 = cont(input, i + 1)?;
                    let b2 = cont(input, i + 2)?;
                    let b3 = cont(input, i + 3)?;
                    let cp = (u32::from(b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3;
                    if !(0x10000..=0x10ffff).contains(&cp) {
                        return Err(ChunkError::Invalid(i));
                    }
                    self.push_scalar(cp, out);
                    i += 4;
                    left -= 2;
                }
                _ => return Err(ChunkError::Invalid(i)),
            }
        }
        Ok(i)
    }

    /// Ends the string: an unpaired trailing high surrogate becomes U+FFFD.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.flush_pending(out);
    }

    fn flush_pending(&mut self, out: &mut String) {
        if self.pending_high.take().is_some() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }

    fn push_scalar(&mut self, cp: u32, out: &mut String) {
        self.flush_pending(out);
        out.push(char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
}

/// The 6 payload bits of the continuation byte at `i`.
fn cont(input: &[u8], i: usize) -> Result<u32, ChunkError> {
    match input.get(i) {
        Some(&b) if b & 0xc0 == 0x80 => Ok(u32::from(b & 0x3f)),
        Some(_) => Err(ChunkError::Invalid(i)),
        None => Err(ChunkError::Eof),
    }
}

/// Bytes used by `units` UTF-16 units at the front of `input`, without
/// decoding them (for skipping). Validates lead bytes only.
pub(crate) fn skip_units(input: &[u8], units: usize) -> Result<usize, ChunkError> {
    if let Some(head) = input.get(..units)
        && head.is_ascii()
    {
        return Ok(units);
    }
    let mut i = 0;
    let mut left = units;
    while left > 0 {
        let b0 = *input.get(i).ok_or(ChunkError::Eof)?;
        let (len, w) = match b0 {
            0x00..=0x7f => (1, 1),
            0xc0..=0xdf => (2, 1),
            0xe0..=0xef => (3, 1),
            0xf0..=0xf4 if left >= 2 => (4, 2),
            _ => return Err(ChunkError::Invalid(i)),
        };
        i += len;
        left -= w;
    }
    if i > input.len() {
        return Err(ChunkError::Eof);
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cesu(s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        put_cesu8(&mut v, s);
        v
    }

    #[test]
    fn lengths_count_utf16_units() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é€"), 2);
        assert_eq!(utf16_len("a😀b"), 4);
    }

    #[test]
    fn supplementary_characters_become_two_surrogates() {
        assert_eq!(cesu("😀"), [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]);
        assert_eq!(cesu("aé€"), "aé€".as_bytes());
    }

    #[test]
    fn chunks_never_split_a_pair() {
        assert_eq!(split_at_units("ab😀", 3), (2, 2));
        assert_eq!(split_at_units("ab😀", 4), (6, 4));
        assert_eq!(split_at_units("abcdef", 4), (4, 4));
        assert_eq!(split_at_units("éé", 1), (2, 1));
    }

    #[test]
    fn decodes_cesu8_utf8_and_split_pairs() {
        let mut out = String::new();
        let mut d = Cesu8Decoder::default();
        let bytes = cesu("x😀");
        assert!(matches!(d.chunk(&bytes, 3, &mut out), Ok(7)));
        // a pair split across two chunks, then a 4-byte UTF-8 sequence
        assert!(matches!(d.chunk(&[0xed, 0xa0, 0xbd], 1, &mut out), Ok(3)));
        assert!(matches!(d.chunk(&[0xed, 0xb8, 0x80], 1, &mut out), Ok(3)));
        assert!(matches!(d.chunk("😀".as_bytes(), 2, &mut out), Ok(4)));
        // lone surrogates
        assert!(matches!(
            d.chunk(&[0xed, 0xa0, 0x80, b'a'], 2, &mut out),
            Ok(4)
        ));
        assert!(matches!(d.chunk(&[0xed, 0xb0, 0x80], 1, &mut out), Ok(3)));
        d.finish(&mut out);
        assert_eq!(out, "x😀😀😀\u{fffd}a\u{fffd}");
    }

    #[test]
    fn rejects_malformed_sequences() {
        let mut out = String::new();
        let mut d = Cesu8Decoder::default();
        assert!(matches!(
            d.chunk(&[0xc1, 0x81], 1, &mut out),
            Err(ChunkError::Invalid(0))
        ));
        assert!(matches!(
            d.chunk(&[0xe0, 0x41, 0x80], 1, &mut out),
            Err(ChunkError::Invalid(1))
        ));
        assert!(matches!(
            d.chunk(&[0xff], 1, &mut out),
            Err(ChunkError::Invalid(0))
        ));
        assert!(matches!(
            d.chunk(&[0xe2, 0x82], 1, &mut out),
            Err(ChunkError::Eof)
        ));
        assert!(matches!(
            d.chunk("😀".as_bytes(), 1, &mut out),
            Err(ChunkError::Invalid(0))
        ));
        assert!(matches!(d.chunk(&[0xc0, 0x80], 1, &mut out), Ok(2)));
    }
}
