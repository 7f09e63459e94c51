//! A model server's streamed answer: any bytes, read as server-sent events and decoded by both
//! protocols, end in an answer or an error that names the problem (echo-llm's `checks`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| echo_llm::fuzzing::stream(bytes));
