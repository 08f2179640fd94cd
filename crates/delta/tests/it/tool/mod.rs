//! Integration tests of the tool system: expansion of every seed 003 example, the 19
//! verification tests of seed 003 §10, an injection corpus, the process runner and calls.
mod calls;
mod expansion;
mod injection;
mod process;
mod props;
mod seed_suite;
mod support;
