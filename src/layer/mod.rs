//! The layer: reading `.ai/` into an index of objects (filled in by the layer work).
