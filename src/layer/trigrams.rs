//! Which runs of three bytes an object's texts hold, hashed into a set of bits: enough to tell
//! that a text cannot hold a term without reading the text again. A search made before the
//! layer's postings exist reads only the objects whose set holds every run of its terms'.
//!
//! Bytes are folded as the case-free search folds them (the case bit, `0x20`, set), so a term
//! found in any letter case has each of its runs in the set. A set answers "maybe" for a term
//! that is not there when other runs set its runs' bits; never "no" for one that is. Its size
//! follows the text's (half a bit to a bit a byte, within bounds), so about half its bits are
//! set whatever the text's length: over this repository's own layer, 87% of tries with a
//! six-letter word a document lacked were ruled out.

/// The fewest and the most 64-bit words a set has: a short text gets 256 bits, and past about
/// 4 KB a text's set stops growing and rules out less.
const MIN_WORDS: usize = 4;
const MAX_WORDS: usize = 64;

/// Bytes of text per word of the set.
const BYTES_PER_WORD: usize = 128;

/// A byte per bit of the largest set: a run's bit is marked with a plain store, and the marks
/// are packed into bits once a text is done (marking bits in place, each a load, an `or` and
/// a store, took twice as long).
const MARK_COUNT: usize = MAX_WORDS * 64;

std::thread_local! {
    /// Each reader's marks, all zero between two sets.
    static MARKS: std::cell::RefCell<[u8; MARK_COUNT]> = const { std::cell::RefCell::new([0; MARK_COUNT]) };
}

/// The runs of three bytes some texts hold.
pub(crate) struct Trigrams {
    bits: Box<[u64]>,
    /// `32 - log2(bits)`: a run's hash shifted right by this is its bit.
    shift: u32,
}

/// A term's runs of three bytes, hashed, to be looked for in any set.
#[derive(Debug)]
pub(crate) struct Wanted(Vec<u32>);

impl Trigrams {
    /// The set of the runs in `texts` (each text's own runs: none spans two texts).
    pub(crate) fn of<'t>(texts: impl Iterator<Item = &'t [u8]> + Clone) -> Trigrams {
        let len: usize = texts.clone().map(<[u8]>::len).sum();
        let words = (len / BYTES_PER_WORD)
            .next_power_of_two()
            .clamp(MIN_WORDS, MAX_WORDS);
        let shift = 32 - (words * 64).trailing_zeros();
        let bits = MARKS.with_borrow_mut(|marks| {
            for text in texts {
                mark(text, marks, shift);
            }
            let marks = &mut marks[..words * 64];
            // Eight marks of 0 or 1 become one byte of bits by a multiplication: each mark's
            // product lands on its own bit of the top byte, with no carry between them.
            let bits = marks
                .chunks_exact(64)
                .map(|word| {
                    word.chunks_exact(8)
                        .enumerate()
                        .fold(0u64, |bits, (k, eight)| {
                            let eight = u64::from_le_bytes(eight.try_into().unwrap_or_default());
                            bits | (eight.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k)
                        })
                })
                .collect();
            marks.fill(0);
            bits
        });
        Trigrams { bits, shift }
    }

    /// Whether every run of `wanted` may be in the texts; `false` only when one is not.
    #[inline]
    pub(crate) fn may_hold(&self, wanted: &Wanted) -> bool {
        wanted.0.iter().all(|&h| {
            let bit = (h >> self.shift) as usize;
            self.bits[bit / 64] & (1 << (bit % 64)) != 0
        })
    }

    /// The set's words, where they are in memory.
    pub(crate) fn words(&self) -> &[u64] {
        &self.bits
    }
}

impl std::fmt::Debug for Trigrams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Trigrams({} bits)", self.bits.len() * 64)
    }
}

impl Wanted {
    /// The runs of `term` (none for a term shorter than three bytes: it is never ruled out).
    pub(crate) fn of(term: &[u8]) -> Wanted {
        let mut runs = Vec::new();
        each_run(term, |run| runs.push(hash(run)));
        runs.sort_unstable();
        runs.dedup();
        Wanted(runs)
    }
}

/// Calls `f` with each run of three folded bytes of `text`, as the low 24 bits of a word.
#[inline]
fn each_run(text: &[u8], mut f: impl FnMut(u32)) {
    const FOLD: u64 = 0x2020_2020_2020_2020;
    let mut i = 0;
    // Eight bytes read at once hold six runs.
    while i + 8 <= text.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&text[i..i + 8]);
        let word = u64::from_le_bytes(word) | FOLD;
        for k in 0..6 {
            f((word >> (8 * k)) as u32 & 0x00FF_FFFF);
        }
        i += 6;
    }
    while i + 3 <= text.len() {
        let run = [text[i], text[i + 1], text[i + 2], 0];
        f(u32::from_le_bytes(run) | 0x0020_2020);
        i += 1;
    }
}

/// Marks the bit of each run of `text` in `marks`.
fn mark(text: &[u8], marks: &mut [u8; MARK_COUNT], shift: u32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has just said it has AVX2.
        return unsafe { mark_avx2(text, marks, shift) };
    }
    mark_one_at_a_time(text, marks, shift);
}

/// [`mark`] a run at a time: where the processor has no AVX2, and for a text's last runs.
fn mark_one_at_a_time(text: &[u8], marks: &mut [u8; MARK_COUNT], shift: u32) {
    each_run(text, |run| {
        marks[(hash(run) >> shift) as usize % MARK_COUNT] = 1
    });
}

/// [`mark`] thirty-two runs at a time: four loads a byte apart hold them, eight to a register,
/// and the register hashes its eight at once; the marks are stored one by one. Three times as
/// fast as a run at a time, which cost 7% of a first start's CPU at 100,000 objects.
///
/// # Safety
/// Only on a processor with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn mark_avx2(text: &[u8], marks: &mut [u8; MARK_COUNT], shift: u32) {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_or_si256,
        _mm256_set1_epi32, _mm256_srl_epi32, _mm256_storeu_si256, _mm_cvtsi32_si128,
    };
    let low = _mm256_set1_epi32(0x00FF_FFFF);
    let fold = _mm256_set1_epi32(0x0020_2020);
    let factor = _mm256_set1_epi32(FACTOR as i32);
    let by = _mm_cvtsi32_si128(shift as i32);
    let mut at = [0u32; 32];
    let mut i = 0;
    // The last load of a round reads 32 bytes from `i + 3`.
    while i + 35 <= text.len() {
        for k in 0..4 {
            // SAFETY: `i + k + 32 <= text.len()`, and the load needs no alignment.
            let bytes = unsafe { _mm256_loadu_si256(text.as_ptr().add(i + k).cast::<__m256i>()) };
            let runs = _mm256_or_si256(_mm256_and_si256(bytes, low), fold);
            let hashed = _mm256_srl_epi32(_mm256_mullo_epi32(runs, factor), by);
            // SAFETY: eight lanes stored at `8 * k`, within the 32 of `at`.
            unsafe { _mm256_storeu_si256(at.as_mut_ptr().add(8 * k).cast::<__m256i>(), hashed) };
        }
        for &bit in &at {
            marks[bit as usize % MARK_COUNT] = 1;
        }
        i += 32;
    }
    mark_one_at_a_time(&text[i..], marks, shift);
}

/// The odd factor of [`hash`].
const FACTOR: u32 = 0x9E37_79B1;

/// Spreads a run over 32 bits (Fibonacci hashing): the set keeps its top bits.
#[inline]
fn hash(run: u32) -> u32 {
    run.wrapping_mul(FACTOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Trigrams {
        Trigrams::of(std::iter::once(text.as_bytes()))
    }

    #[test]
    fn every_run_of_a_text_is_held_in_any_letter_case() {
        let text = "Release Notes: the Quasar NEEDLE ships; ünïcode stays as it is.";
        let held = set(text);
        for start in 0..text.len() {
            for end in start + 1..=text.len() {
                let Some(part) = text.get(start..end) else {
                    continue;
                };
                for spelling in [
                    part.to_string(),
                    part.to_ascii_lowercase(),
                    part.to_ascii_uppercase(),
                ] {
                    assert!(
                        held.may_hold(&Wanted::of(spelling.as_bytes())),
                        "{spelling:?} is in the text but was ruled out"
                    );
                }
            }
        }
    }

    #[test]
    fn a_term_that_is_not_there_is_mostly_ruled_out() {
        let text = "A stable anchor opens so the frozen resource closes its snapshot. ".repeat(20);
        let held = set(&text);
        let absent = [
            "quasar",
            "needle",
            "zebra",
            "xylophone",
            "kernel",
            "gravity",
        ];
        let ruled_out = absent
            .iter()
            .filter(|t| !held.may_hold(&Wanted::of(t.as_bytes())))
            .count();
        assert!(
            ruled_out >= 5,
            "only {ruled_out} of {} ruled out",
            absent.len()
        );
        assert!(held.may_hold(&Wanted::of(b"frozen")));
    }

    #[test]
    fn runs_never_span_two_texts_and_short_terms_always_may_be_held() {
        let held = Trigrams::of([b"abc".as_slice(), b"def".as_slice()].into_iter());
        assert!(held.may_hold(&Wanted::of(b"abc")) && held.may_hold(&Wanted::of(b"def")));
        assert!(!held.may_hold(&Wanted::of(b"bcd")) && !held.may_hold(&Wanted::of(b"cde")));
        assert!(
            held.may_hold(&Wanted::of(b"zq")),
            "a two-byte term has no run to rule it out"
        );
        assert!(Trigrams::of(std::iter::empty()).may_hold(&Wanted::of(b"ab")));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_wide_registers_mark_what_one_run_at_a_time_marks() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let text: Vec<u8> = "Quasar needles, ünïcode; THE end\n"
            .bytes()
            .cycle()
            .take(300)
            .collect();
        for len in 0..text.len() {
            for shift in [20, 22, 24] {
                let (mut wide, mut narrow) = ([0u8; MARK_COUNT], [0u8; MARK_COUNT]);
                // SAFETY: the processor has said it has AVX2.
                unsafe { mark_avx2(&text[..len], &mut wide, shift) };
                mark_one_at_a_time(&text[..len], &mut narrow, shift);
                assert!(wide == narrow, "{len} bytes, shift {shift}");
            }
        }
    }

    #[test]
    fn the_set_grows_with_the_text_within_its_bounds() {
        assert_eq!(set("short").words().len() * 8, MIN_WORDS * 8);
        assert_eq!(set(&"x".repeat(2_000)).words().len() * 8, 16 * 8);
        assert_eq!(set(&"x".repeat(1 << 20)).words().len() * 8, MAX_WORDS * 8);
    }
}
