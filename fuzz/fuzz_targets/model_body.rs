//! A model server's whole (non-streamed) answer: any body is an answer only when it is JSON,
//! and is otherwise refused as malformed, saying so (echo-llm's `checks`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| echo_llm::fuzzing::whole(bytes));
