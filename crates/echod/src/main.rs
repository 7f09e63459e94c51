//! The `echod` binary: everything is in the library, [`echod::main`].

fn main() -> std::process::ExitCode {
    echod::main()
}
