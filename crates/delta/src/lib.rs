//! The `delta` command line as a library: [`cli`] parses arguments, calls the engine
//! (`delta_engine`), renders on the terminal and maps every outcome to an exit code. The
//! binary (`main.rs`) only calls it; the integration tests read its argument definitions.

pub mod cli;
