//! What a crash leaves behind. The process holds API keys and the person's conversations in
//! memory, so it writes no core file (its core size limit is 0 from the start), and a panic
//! prints where it happened but not a message built at run time, which can carry what the
//! code was working on, unless `ECHO_LOG` asks for debug output. A fixed message (an
//! `expect("…")` or `panic!("…")` without arguments) cannot hold such data, so it is printed.

use std::any::Any;
use std::panic::Location;

/// Sets both up for the process; call it first thing in `main`. `program` names it in the
/// panic line.
pub fn harden(program: &'static str) {
    // The hard limit stays, so a person who wants a core file for a bug report can raise it.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Core);
    let no_core = rustix::process::Rlimit {
        current: Some(0),
        maximum: limit.maximum,
    };
    if let Err(e) = rustix::process::setrlimit(rustix::process::Resource::Core, no_core) {
        eprintln!("{program}: cannot turn off core files: {e}");
    }
    let verbose = std::env::var("ECHO_LOG")
        .is_ok_and(|filter| filter.contains("debug") || filter.contains("trace"));
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        eprintln!(
            "{}",
            panic_line(
                program,
                thread.name().unwrap_or("unnamed"),
                info.payload(),
                info.location(),
                verbose
            )
        );
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            eprintln!("{}", std::backtrace::Backtrace::force_capture());
        }
    }));
}

/// The one line a panic prints.
pub fn panic_line(
    program: &str,
    thread: &str,
    payload: &(dyn Any + Send),
    location: Option<&Location<'_>>,
    verbose: bool,
) -> String {
    let place = location
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_else(|| "an unknown place".into());
    let message = match (
        payload.downcast_ref::<&'static str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(fixed), _) => (*fixed).to_string(),
        (None, Some(built)) if verbose => built.clone(),
        (None, Some(_)) => {
            "its message is left out, as it may hold your data (ECHO_LOG=debug shows it)".into()
        }
        (None, None) => "no message".into(),
    };
    format!(
        "{program}: internal error (a bug: please report it) in thread '{thread}' at {place}: {message}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_built_at_run_time_is_left_out_unless_asked_for() {
        let here = Location::caller();
        let built: Box<dyn Any + Send> =
            Box::new(format!("cannot parse {}", "my password is hunter2"));
        let line = panic_line("echod", "main", built.as_ref(), Some(here), false);
        assert!(!line.contains("hunter2"), "{line}");
        assert!(line.contains("crash.rs"), "the place is kept: {line}");
        assert!(line.contains("ECHO_LOG=debug"), "{line}");
        let line = panic_line("echod", "main", built.as_ref(), Some(here), true);
        assert!(line.contains("hunter2"), "{line}");

        let fixed: Box<dyn Any + Send> = Box::new("the worker is gone");
        let line = panic_line("echod", "worker", fixed.as_ref(), None, false);
        assert!(line.ends_with("the worker is gone"), "{line}");
        assert!(line.contains("thread 'worker'"), "{line}");
    }
}
