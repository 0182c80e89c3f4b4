//! cubefleet binary.
fn main() {}
