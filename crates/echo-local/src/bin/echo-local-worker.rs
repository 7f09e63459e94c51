//! A model worker on its own, for echo-local's tests of the worker process
//! (`tests/worker_process.rs`): the app and `echod` run their own binary as the worker
//! instead (`echo_local::process`), so this one is not shipped.

fn main() -> std::process::ExitCode {
    echo_local::process::main()
}
