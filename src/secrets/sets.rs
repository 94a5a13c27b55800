//! Sets of shapes of the credential table, by their place in it.

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
