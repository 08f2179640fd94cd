//! The `delta` command line.

fn main() {}
