//! Whether a text holds a term whatever the case of its ASCII letters, read straight from the
//! object's own text: no lowercased copy is kept (it would double what a layer weighs in memory).
//! A scan asks this only of the objects whose runs of three bytes (`layer::trigrams`) let the
//! term through.
//!
//! Three bytes of the term (its two rarest and its first), at their offsets, are compared 32
//! positions at a time with the case bit (`0x20`) set on both sides, in vector registers (one
//! AVX2 register where the processor has it, two SSE2 ones elsewhere); only
//! a position where all three agree is compared whole. Setting the bit makes `A` and `a` alike
//! and makes a few other pairs alike too (`@` and `` ` ``): those are ruled out by the whole
//! comparison, so nothing is missed and nothing is found that is not there. Two bytes were
//! tried first: a frequent pair (`dl` of `handler` for `needle`) doubled the time, and a loop
//! left to the compiler's vectorizer ran at a third of the memory's speed (ADR 0098).

/// Positions compared at once.
const BLOCK: usize = 32;

/// The longest term: a query's words are cut where the index cuts them.
const MAX_TERM: usize = super::terms::MAX_TOKEN_BYTES;

/// How common a byte is in text, once folded: a lower rank is rarer. English letter order;
/// digits and punctuation between; bytes of other scripts rare.
fn rank(b: u8) -> u8 {
    const LETTERS: &[u8; 26] = b"zqjxkvbpygfwmucldrhsnioate";
    match b {
        b'a'..=b'z' => 100 + LETTERS.iter().position(|&l| l == b).unwrap_or(0) as u8,
        b'0'..=b'9' => 90,
        0x80.. => 50,
        _ => 80,
    }
}

/// A term to look for, ASCII letters in any case (the term itself is lowercase).
#[derive(Clone, Debug)]
pub struct CaseFree {
    term: Box<[u8]>,
    /// Offsets of the two rarest bytes in the term (the same one twice for a one-byte term),
    /// and of its first byte.
    at: [usize; 3],
    /// Those bytes with the case bit set.
    want: [u8; 3],
}

impl CaseFree {
    /// `None` for an empty term, or one longer than any term the index holds.
    pub(crate) fn new(term: &str) -> Option<CaseFree> {
        let bytes = term.as_bytes();
        if bytes.is_empty() || bytes.len() > MAX_TERM {
            return None;
        }
        let mut by_rank: Vec<usize> = (0..bytes.len()).collect();
        by_rank.sort_by_key(|&i| (rank(bytes[i].to_ascii_lowercase()), i));
        let first = by_rank[0];
        // A second offset with another byte when there is one: two equal bytes say less.
        let second = by_rank[1..]
            .iter()
            .copied()
            .find(|&i| fold(bytes[i]) != fold(bytes[first]))
            .or_else(|| by_rank.get(1).copied())
            .unwrap_or(first);
        Some(CaseFree {
            term: bytes.into(),
            at: [first, second, 0],
            want: [fold(bytes[first]), fold(bytes[second]), fold(bytes[0])],
        })
    }

    /// Whether `text` holds the term, ASCII letters compared without case.
    pub(crate) fn is_in(&self, text: &str) -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has just said it has AVX2.
            return unsafe { self.is_in_avx2(text.as_bytes()) };
        }
        self.find(text.as_bytes(), block_mask)
    }

    /// [`CaseFree::find`] compiled for AVX2: a block's 32 positions are one comparison per byte
    /// instead of two, which halves a scan's instructions where it is the processor, not the
    /// memory, that a search waits for (a second term over a text already in the cache).
    ///
    /// # Safety
    /// Only on a processor with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn is_in_avx2(&self, hay: &[u8]) -> bool {
        self.find(hay, |blocks, want| {
            // SAFETY: this closure runs only inside a function compiled for AVX2.
            unsafe { block_mask_avx2(blocks, want) }
        })
    }

    /// Whether `hay` holds the term, `mask` telling which positions of a block have the three
    /// compared bytes.
    #[inline(always)]
    fn find(&self, hay: &[u8], mask: impl Fn([&[u8; BLOCK]; 3], [u8; 3]) -> u32) -> bool {
        let n = self.term.len();
        if hay.len() < n {
            return false;
        }
        // Positions where the term may start: 0..=last.
        let last = hay.len() - n;
        let whole = |i: usize| hay[i..i + n].eq_ignore_ascii_case(&self.term);
        let block = |hay: &[u8]| self.block(hay, &mask);
        let mut i = 0;
        while i + BLOCK <= last + 1 {
            let mut mask = block(&hay[i..]);
            while mask != 0 {
                if whole(i + mask.trailing_zeros() as usize) {
                    return true;
                }
                mask &= mask - 1;
            }
            i += BLOCK;
        }
        if i > last {
            return false;
        }
        // Fewer than a block of positions are left (a title, a short description): the same
        // comparison on a copy padded with zeros, which fold to a space and match no term's
        // byte; only the real positions are compared whole.
        let mut padded = [0u8; BLOCK + MAX_TERM];
        let rest = &hay[i..];
        padded[..rest.len()].copy_from_slice(rest);
        let mut mask = block(&padded);
        while mask != 0 {
            let at = i + mask.trailing_zeros() as usize;
            if at > last {
                return false;
            }
            if whole(at) {
                return true;
            }
            mask &= mask - 1;
        }
        false
    }

    /// Which of the first `BLOCK` positions of `hay` (which holds at least `BLOCK` plus the
    /// term's length bytes) have the three compared bytes where the term has them, a bit each.
    #[inline(always)]
    fn block(&self, hay: &[u8], mask: impl Fn([&[u8; BLOCK]; 3], [u8; 3]) -> u32) -> u32 {
        let at = |o: usize| {
            hay.get(o..o + BLOCK)
                .and_then(|s| <&[u8; BLOCK]>::try_from(s).ok())
        };
        let (Some(p), Some(q), Some(r)) = (at(self.at[0]), at(self.at[1]), at(self.at[2])) else {
            return u32::MAX;
        };
        mask([p, q, r], self.want)
    }
}

/// Bit `j` set where byte `j` of every block, folded, is its `want`.
#[cfg(target_arch = "x86_64")]
fn block_mask(blocks: [&[u8; BLOCK]; 3], want: [u8; 3]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of every x86_64 processor; the loads read 16 bytes at offsets 0 and
    // 16 of 32-byte arrays.
    unsafe {
        let bit = _mm_set1_epi8(0x20);
        let half = |o: usize| {
            let mut m = _mm_set1_epi8(-1);
            for (block, w) in blocks.iter().zip(want) {
                let v = _mm_or_si128(_mm_loadu_si128(block.as_ptr().add(o).cast()), bit);
                m = _mm_and_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8(w as i8)));
            }
            _mm_movemask_epi8(m) as u32
        };
        half(0) | (half(16) << 16)
    }
}

/// [`block_mask`] in one AVX2 register a byte: 32 positions a comparison.
///
/// # Safety
/// Only on a processor with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn block_mask_avx2(blocks: [&[u8; BLOCK]; 3], want: [u8; 3]) -> u32 {
    use std::arch::x86_64::*;
    let bit = _mm256_set1_epi8(0x20);
    let mut m = _mm256_set1_epi8(-1);
    for (block, w) in blocks.iter().zip(want) {
        // SAFETY: an unaligned load of the 32 bytes of a 32-byte array.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        let v = _mm256_or_si256(v, bit);
        m = _mm256_and_si256(m, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(w as i8)));
    }
    _mm256_movemask_epi8(m) as u32
}

/// [`block_mask`] byte by byte, where there are no SSE2 registers.
#[cfg(not(target_arch = "x86_64"))]
fn block_mask(blocks: [&[u8; BLOCK]; 3], want: [u8; 3]) -> u32 {
    let mut mask = 0;
    for j in 0..BLOCK {
        if blocks.iter().zip(want).all(|(b, w)| fold(b[j]) == w) {
            mask |= 1 << j;
        }
    }
    mask
}

/// `b` with the case bit set: an ASCII capital becomes its small letter.
fn fold(b: u8) -> u8 {
    b | 0x20
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(term: &str, text: &str) -> bool {
        CaseFree::new(term).expect("a term").is_in(text)
    }

    #[test]
    fn finds_the_term_in_any_case_and_at_any_place() {
        for text in ["quasar", "QUASAR", "a QuAsAr", "xx quasar", "quasars end"] {
            assert!(holds("quasar", text), "{text}");
        }
        let long = format!("{}QuAsAr{}", "lorem ipsum ".repeat(40), " dolor".repeat(40));
        assert!(holds("quasar", &long));
        // At the very end of a text longer than a block, and across a block's edge.
        for at in 0..80 {
            let text = format!("{}Needle", "-".repeat(at));
            assert!(holds("needle", &text), "at {at}");
        }
    }

    #[test]
    fn finds_nothing_that_is_not_there() {
        assert!(!holds("quasar", "quasi"));
        assert!(!holds("quasar", ""));
        // Bytes that fold alike but are other characters.
        assert!(!holds("a", "@@@"));
        assert!(!holds("a1", "A\x11"));
        assert!(!holds("needle", &"needl".repeat(100)));
    }

    #[test]
    fn other_scripts_are_compared_as_written() {
        assert!(holds("日本", "これは日本語"));
        assert!(!holds("日本", "これは中国語"));
        assert!(holds("x", "x"));
    }

    #[test]
    fn agrees_with_a_lowercased_search_on_every_offset() {
        let text: String = (0..300)
            .map(|i| ["Alpha", "beta", "GAMMA", "dElTa", "é", " ", "\n", "q"][i * 7 % 8])
            .collect();
        for term in [
            "alpha", "beta", "gamma", "delta", "qé", "a b", "mm", "zz", "é", "q",
        ] {
            let expected = text.to_ascii_lowercase().contains(term);
            assert_eq!(holds(term, &text), expected, "{term}");
        }
    }

    #[test]
    fn the_wide_registers_find_what_the_narrow_ones_find() {
        // `is_in` takes AVX2 where the processor has it; `find` with `block_mask` is the SSE2
        // (or byte by byte) comparison every processor has. Both must agree on every offset.
        let text: String = (0..700)
            .map(|i| ["Needle", "quasar", "NEEDL", "e", " ", "@", "`", "\n", "Ü"][i * 5 % 9])
            .collect();
        for term in ["needle", "quasar", "needlee", "e ", "@", "ü", "eq", "zzz"] {
            let finder = CaseFree::new(term).expect("a term");
            for start in 0..80 {
                let hay = &text.as_bytes()[start.min(text.len())..];
                let Ok(part) = std::str::from_utf8(hay) else {
                    continue;
                };
                assert_eq!(
                    finder.is_in(part),
                    finder.find(hay, block_mask),
                    "{term} from {start}"
                );
                assert_eq!(
                    finder.is_in(part),
                    part.to_ascii_lowercase().contains(term),
                    "{term} from {start}"
                );
            }
        }
    }
}
