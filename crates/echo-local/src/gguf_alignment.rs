//! The one GGUF field candle's header reader cannot take: `general.alignment = 0` makes it
//! divide by zero (candle-core 0.11.1, `gguf_file.rs`: `position.div_ceil(alignment)`), a panic
//! on a person's file instead of an error. [`zero_alignment`] walks the metadata first, as
//! the format lays it out, and says whether that key is there with the value 0. Anything it
//! cannot walk is left to candle's reader, which reports it.

use std::io::Read;

/// The metadata key whose 0 breaks the reader.
const KEY: &[u8] = b"general.alignment";
/// Arrays nest at most this deep (candle's own limit is lower).
const MAX_DEPTH: usize = 64;

/// Whether the GGUF bytes of `reader` set `general.alignment` to 0. `None` when the header
/// cannot be walked (not GGUF, cut off, a value type the format does not have).
pub(crate) fn zero_alignment(reader: &mut impl Read, size: u64) -> Option<bool> {
    let mut r = Walker { reader, left: size };
    if r.u32()? != u32::from_le_bytes(*b"GGUF") {
        return None;
    }
    let wide = match r.u32()? {
        1 => false,
        2 | 3 => true,
        _ => return None,
    };
    let _tensors = r.len(wide)?;
    let pairs = r.len(wide)?;
    // A key given twice counts as its last value, as the reader keeps it.
    let mut zero = false;
    for _ in 0..pairs {
        // Only a key of the right length is read; any other is skipped unread (a hostile
        // length must not become an allocation).
        let key_len = r.len(wide)?;
        let is_key = if key_len == KEY.len() as u64 {
            r.bytes(key_len)? == KEY
        } else {
            r.skip(key_len)?;
            false
        };
        let kind = r.u32()?;
        let width = match kind {
            0 | 1 => 1,
            2 | 3 => 2,
            4 | 5 => 4,
            10 | 11 => 8,
            // Other types of the key are ignored by the reader (it uses its default).
            _ => 0,
        };
        if is_key && width > 0 {
            zero = r.bytes(width)?.iter().all(|b| *b == 0);
        } else {
            if is_key {
                zero = false;
            }
            r.skip_value(kind, wide, 0)?;
        }
    }
    Some(zero)
}

/// Reads the header's little-endian fields, never past the file's end.
struct Walker<'a, R> {
    reader: &'a mut R,
    left: u64,
}

impl<R: Read> Walker<'_, R> {
    fn bytes(&mut self, n: u64) -> Option<Vec<u8>> {
        if n > self.left {
            return None;
        }
        self.left -= n;
        let mut out = vec![0; usize::try_from(n).ok()?];
        self.reader.read_exact(&mut out).ok()?;
        Some(out)
    }

    /// Passes over `n` bytes without keeping them.
    fn skip(&mut self, n: u64) -> Option<()> {
        if n > self.left {
            return None;
        }
        self.left -= n;
        let copied = std::io::copy(&mut (&mut *self.reader).take(n), &mut std::io::sink()).ok()?;
        (copied == n).then_some(())
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    /// A length or count: 32 bits in GGUF version 1, 64 after.
    fn len(&mut self, wide: bool) -> Option<u64> {
        if wide {
            Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
        } else {
            self.u32().map(u64::from)
        }
    }

    fn skip_value(&mut self, kind: u32, wide: bool, depth: usize) -> Option<()> {
        let fixed = match kind {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            8 => {
                let n = self.len(wide)?;
                return self.skip(n);
            }
            9 if depth < MAX_DEPTH => {
                let inner = self.u32()?;
                let count = self.len(wide)?;
                // Every element takes at least one byte: a count past the file is cut off.
                if count > self.left {
                    return None;
                }
                for _ in 0..count {
                    self.skip_value(inner, wide, depth + 1)?;
                }
                return Some(());
            }
            _ => return None,
        };
        self.skip(fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF v3 header with no tensors and `pairs` (key, type, value bytes).
    fn gguf(pairs: &[(&[u8], u32, Vec<u8>)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend((pairs.len() as u64).to_le_bytes());
        for (key, kind, value) in pairs {
            out.extend((key.len() as u64).to_le_bytes());
            out.extend(*key);
            out.extend(kind.to_le_bytes());
            out.extend(value);
        }
        out
    }

    fn check(bytes: &[u8]) -> Option<bool> {
        zero_alignment(&mut &bytes[..], bytes.len() as u64)
    }

    #[test]
    fn a_zero_alignment_is_found_behind_other_values() {
        let mut array = 8u32.to_le_bytes().to_vec();
        array.extend(2u64.to_le_bytes());
        for s in [&b"a"[..], b"bc"] {
            array.extend((s.len() as u64).to_le_bytes());
            array.extend(s);
        }
        let name = {
            let mut v = 4u64.to_le_bytes().to_vec();
            v.extend(b"test");
            v
        };
        let zero = gguf(&[
            (b"general.name", 8, name.clone()),
            (b"tokenizer.ggml.tokens", 9, array),
            (KEY, 4, 0u32.to_le_bytes().to_vec()),
        ]);
        assert_eq!(check(&zero), Some(true));
        let fine = gguf(&[
            (b"general.name", 8, name),
            (KEY, 4, 32u32.to_le_bytes().to_vec()),
        ]);
        assert_eq!(check(&fine), Some(false));
        let twice = gguf(&[(KEY, 4, 32u32.to_le_bytes().to_vec()), (KEY, 0, vec![0])]);
        assert_eq!(check(&twice), Some(true), "the last value counts");
        assert_eq!(check(&gguf(&[])), Some(false));
    }

    #[test]
    fn what_cannot_be_walked_is_left_to_the_reader() {
        assert_eq!(check(b"not a model"), None);
        let cut = gguf(&[(KEY, 4, 0u32.to_le_bytes().to_vec())]);
        assert_eq!(check(&cut[..cut.len() - 2]), None);
        // An array claiming more elements than the file has bytes.
        let mut huge = 0u32.to_le_bytes().to_vec();
        huge.extend(u64::MAX.to_le_bytes());
        assert_eq!(check(&gguf(&[(b"x", 9, huge)])), None);
    }

    #[test]
    fn a_file_with_a_zero_alignment_is_a_clear_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("zero.gguf");
        let arch = {
            let mut v = 5u64.to_le_bytes().to_vec();
            v.extend(b"llama");
            v
        };
        let bytes = gguf(&[
            (b"general.architecture", 8, arch),
            (KEY, 4, 0u32.to_le_bytes().to_vec()),
        ]);
        std::fs::write(&path, bytes).expect("write");
        let Err(e) = crate::gguf::read_header(&path) else {
            panic!("a zero alignment was read as a model");
        };
        assert!(e.to_string().contains("general.alignment is 0"), "{e}");
    }
}
