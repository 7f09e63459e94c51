//! `config.toml` as anyone may write it: any bytes are a config or an error that points at a
//! line and column inside the text and says what is wrong there; text that is not TOML is
//! never a config.
#![no_main]

use echo_core::config::{Config, ConfigError};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let is_toml = text.parse::<toml::Table>().is_ok();
    match Config::parse(text, Path::new("config.toml")) {
        Ok(_) => assert!(is_toml, "not TOML, taken as a config: {text:?}"),
        Err(ConfigError::File {
            line,
            column,
            message,
            ..
        }) => {
            let lines = text.split('\n').count();
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
            assert!(column >= 1);
            assert!(!message.trim().is_empty(), "an error without a reason");
        }
        Err(other) => panic!("not a file error: {other}"),
    }
});
