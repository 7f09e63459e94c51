//! A GGUF model file chosen by a person: any bytes are read as the built-in model reads a
//! file's header, metadata, tokenizer and chat template, and end in a model or a clear error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| echo_local::fuzz_model_file(bytes));
