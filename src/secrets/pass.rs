//! The one pass over a text's bytes that finds where a credential's anchor may be: each place
//! holding a probe byte, or starting the prefix of the one anchor made only of letters. Plain
//! comparisons of a block of bytes at once, which the compiler makes vector code of: no searcher
//! to build, so a process that checks one file pays for the bytes and nothing else.

/// The bytes literal anchors are found by, in the order one is chosen for an anchor (the first it
/// holds; a letter only for an anchor compared exactly), and the `=` and `:` assignments are
/// found by. Each is rare in prose; all are compared, whether an anchor holds them or not.
pub(super) const PROBES: [u8; 6] = *b"_-:=JI";

/// How many bytes of the anchor made only of letters are compared in the pass.
pub(super) const PREFIX: usize = 3;

/// How many places the pass compares at once.
const BLOCK: usize = 64;

/// The bytes a block's comparisons read: its places, and the prefix's length past the last.
const WINDOW: usize = BLOCK + PREFIX - 1;

/// Calls `hit` with each place of `text`, in order, that holds one of [`PROBES`] or starts
/// `prefix`, whose bytes are compared with the text's with `0x20` set in both (ASCII case aside,
/// for letters). A prefix of zeros starts nowhere.
pub(super) fn each_hit(text: &[u8], prefix: [u8; PREFIX], hit: impl FnMut(usize)) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, as just detected (a look at a cached word after the first).
        return unsafe { each_hit_avx2(text, prefix, hit) };
    }
    blocks(text, prefix, hit);
}

/// Detects the CPU's features [`each_hit`] asks for, once per process.
pub(super) fn prepare() {
    #[cfg(target_arch = "x86_64")]
    let _ = std::is_x86_feature_detected!("avx2");
}

/// [`blocks`], compiled for AVX2: twice the bytes in each comparison of the baseline's SSE2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn each_hit_avx2(text: &[u8], prefix: [u8; PREFIX], hit: impl FnMut(usize)) {
    blocks(text, prefix, hit);
}

#[inline(always)]
fn blocks(text: &[u8], prefix: [u8; PREFIX], mut hit: impl FnMut(usize)) {
    let mut start = 0;
    while start + WINDOW <= text.len() {
        let window = text[start..start + WINDOW].try_into().expect("a window");
        report(start, hits(window, prefix), &mut hit);
        start += BLOCK;
    }
    // The last bytes, then zeros: no probe, and no byte of a prefix with `0x20` set. Up to two
    // blocks: the window reads past its block.
    while start < text.len() {
        let mut window = [0u8; WINDOW];
        let rest = &text[start..text.len().min(start + WINDOW)];
        window[..rest.len()].copy_from_slice(rest);
        report(start, hits(&window, prefix), &mut hit);
        start += BLOCK;
    }
}

/// Whether each place of a block holds a probe or starts the prefix: a byte (1 or 0) each, eight
/// to a word, the first place in a word's lowest byte. No branch, so the loop is vector code.
#[inline(always)]
fn hits(window: &[u8; WINDOW], prefix: [u8; PREFIX]) -> [u64; BLOCK / 8] {
    let mut hits = [0u8; BLOCK];
    for (i, hit) in hits.iter_mut().enumerate() {
        let mut probe = 0u8;
        for p in PROBES {
            probe |= u8::from(window[i] == p);
        }
        let mut starts = 1u8;
        for (j, &p) in prefix.iter().enumerate() {
            starts &= u8::from(window[i + j] | 0x20 == p);
        }
        *hit = probe | starts;
    }
    let mut words = [0u64; BLOCK / 8];
    for (word, bytes) in words.iter_mut().zip(hits.chunks_exact(8)) {
        *word = u64::from_le_bytes(bytes.try_into().expect("eight bytes"));
    }
    words
}

/// Calls `hit` with the places of the block at `start` that `words` mark.
#[inline(always)]
fn report(start: usize, words: [u64; BLOCK / 8], hit: &mut impl FnMut(usize)) {
    if words.iter().all(|&w| w == 0) {
        return;
    }
    for (w, mut word) in words.into_iter().enumerate() {
        // A mark is the lowest bit of its byte: clearing the lowest set bit clears the mark.
        while word != 0 {
            hit(start + w * 8 + word.trailing_zeros() as usize / 8);
            word &= word - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every place the pass reports, against a byte-by-byte look, at every length around the
    /// block's and with the prefix at the very end, in the AVX2 build and the baseline's.
    #[test]
    fn the_pass_reports_every_probe_and_prefix_and_nothing_else() {
        let prefix = [b'b' | 0x20, b'e' | 0x20, b'a' | 0x20];
        let alphabet = b"ab_-:=JIxBEAe \n";
        for len in 0..(2 * BLOCK + PREFIX + 3) {
            for seed in 0..8usize {
                let text: Vec<u8> = (0..len)
                    .map(|i| alphabet[(i * 7 + seed * 13 + i * i * seed) % alphabet.len()])
                    .collect();
                let mut reported = Vec::new();
                each_hit(&text, prefix, |at| reported.push(at));
                let mut baseline = Vec::new();
                blocks(&text, prefix, |at| baseline.push(at));
                assert_eq!(reported, baseline, "the vector builds agree");
                let expected: Vec<usize> = (0..len)
                    .filter(|&i| {
                        PROBES.contains(&text[i])
                            || text[i..]
                                .get(..PREFIX)
                                .is_some_and(|w| w.iter().zip(prefix).all(|(b, p)| b | 0x20 == p))
                    })
                    .collect();
                assert_eq!(reported, expected, "{:?}", String::from_utf8_lossy(&text));
                let mut none = Vec::new();
                each_hit(&text, [0; PREFIX], |at| none.push(at));
                assert!(none.iter().all(|&at| PROBES.contains(&text[at])));
            }
        }
    }
}
