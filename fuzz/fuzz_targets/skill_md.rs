//! A SKILL.md as found on disk: any text is a skill with a name and description, or a reason
//! that names the part of the front matter at fault.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(text) = std::str::from_utf8(bytes) {
        echo_tools::fuzz_skill_md(text);
    }
});
