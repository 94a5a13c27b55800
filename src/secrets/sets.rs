//! The small sets the credential check's tables are made of: shapes of the table, and pairs of
//! bytes.

use super::shapes::SHAPES;

/// Shapes of the table, by their place in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ShapeSet(u32);

const _: () = assert!(SHAPES.len() <= 32, "a `ShapeSet` holds 32 shapes");

impl ShapeSet {
    pub(super) const NONE: ShapeSet = ShapeSet(0);

    pub(super) fn one(shape: usize) -> ShapeSet {
        ShapeSet(1 << shape)
    }

    pub(super) fn insert(&mut self, shape: usize) {
        self.0 |= 1 << shape;
    }

    pub(super) fn union(self, other: ShapeSet) -> ShapeSet {
        ShapeSet(self.0 | other.0)
    }

    pub(super) fn contains(self, shape: usize) -> bool {
        self.0 & (1 << shape) != 0
    }

    /// The shapes in table order.
    pub(super) fn iter(self) -> impl Iterator<Item = usize> {
        (0..SHAPES.len()).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// A set of pairs of bytes that may say a pair is in it when it is not (one in forty, for the
/// few dozen pairs of the shape table), never the other way: one look at 512 bytes, where an
/// exact set would be 8 KiB to fault in at start.
pub(super) struct Pairs([u64; PAIR_WORDS]);

const PAIR_WORDS: usize = 64;

impl Pairs {
    pub(super) const fn new() -> Pairs {
        Pairs([0; PAIR_WORDS])
    }

    fn bit(first: u8, second: u8) -> usize {
        let mixed = (u32::from(first) << 8 | u32::from(second)).wrapping_mul(0x9E37_79B1);
        (mixed >> 20) as usize % (PAIR_WORDS * 64)
    }

    /// Inserts the pair, in every ASCII case of its letters when `any_case`.
    pub(super) fn insert(&mut self, first: u8, second: u8, any_case: bool) {
        for f in cases(first, any_case) {
            for s in cases(second, any_case) {
                let bit = Pairs::bit(f, s);
                self.0[bit / 64] |= 1 << (bit % 64);
            }
        }
    }

    /// Whether the pair may be in the set: false only if it is not.
    pub(super) fn may_have(&self, first: u8, second: u8) -> bool {
        let bit = Pairs::bit(first, second);
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

/// A set of bytes.
#[derive(Clone, Copy, Default)]
pub(super) struct Bytes([u64; 4]);

impl Bytes {
    pub(super) fn insert(&mut self, b: u8) {
        self.0[usize::from(b / 64)] |= 1 << (b % 64);
    }

    pub(super) fn has(&self, b: u8) -> bool {
        self.0[usize::from(b / 64)] & (1 << (b % 64)) != 0
    }
}

/// `b`, and when `any_case` its other ASCII case.
pub(super) fn cases(b: u8, any_case: bool) -> impl Iterator<Item = u8> {
    let other = (any_case && b.is_ascii_alphabetic()).then_some(b ^ 0x20);
    std::iter::once(b).chain(other)
}
