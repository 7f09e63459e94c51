//! The built-in model in its worker process (`echo_local::process`), against the real
//! SmolLM2-135M-Instruct weights: Stop reaches the worker, a killed worker fails its request
//! and the next request starts another, a quiet worker ends, llama.cpp's threads run on
//! OpenMP with a short spin. The worker is this crate's
//! `echo-local-worker` binary (the app and `echod` run their own binary instead).

use echo_local::{ChatMessage, ChatRole, Finish, LocalError, LocalModel, Next, Request};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/ci_model.rs"]
mod ci_model;
use ci_model::model_path;

/// A model of its own (a copy of the CI model's file) run in a worker process.
fn model(dir: &tempfile::TempDir, release_after: Option<Duration>) -> Arc<LocalModel> {
    echo_local::process::run_workers_in(PathBuf::from(env!("CARGO_BIN_EXE_echo-local-worker")));
    let own = dir.path().join("own.gguf");
    std::fs::copy(model_path(), &own).expect("copy");
    LocalModel::open(&own, release_after).expect("the CI model opens")
}

fn chat(text: &str, max_tokens: usize) -> Request {
    Request {
        messages: vec![
            ChatMessage::new(ChatRole::System, "You are a helpful assistant."),
            ChatMessage::new(ChatRole::User, text),
        ],
        tools: Vec::new(),
        forced: None,
        max_tokens,
        temperature: None,
        seed: None,
    }
}

async fn answer(model: &LocalModel, request: Request) -> Result<echo_local::Outcome, LocalError> {
    let mut generation = model.start(request);
    loop {
        if let Next::Done(result) = generation.next().await {
            return result;
        }
    }
}

#[tokio::test]
async fn stop_reaches_the_worker_process_within_a_few_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model(&dir, None);
    let mut generation = model.start(chat("Write a long story about a dragon.", 400));
    let mut seen = 0;
    let outcome = loop {
        match generation.next().await {
            Next::Event(_) => {
                seen += 1;
                if seen == 3 {
                    generation.stop();
                }
            }
            Next::Done(result) => break result.expect("a stopped generation still ends cleanly"),
        }
    };
    assert!(model.worker_pid().is_some(), "it ran in a worker process");
    // The worker ran ahead of the events the parent had read, by a token or a few.
    assert_eq!(outcome.finish, Finish::Cancelled, "{outcome:?}");
    assert!(outcome.output_tokens <= 30, "{outcome:?}");
}

#[tokio::test]
async fn a_killed_worker_fails_its_request_and_the_next_request_starts_another() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model(&dir, None);
    let mut generation = model.start(chat("Write a long story about a dragon.", 400));
    let mut killed = None;
    let result = loop {
        match generation.next().await {
            Next::Event(_) if killed.is_none() => {
                let pid = model.worker_pid().expect("a worker process");
                let status = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status()
                    .expect("kill");
                assert!(status.success());
                killed = Some(pid);
            }
            Next::Event(_) => {}
            Next::Done(result) => break result,
        }
    };
    let killed = killed.expect("the answer streamed");
    match result {
        Err(e @ LocalError::WorkerDied(_)) => {
            assert!(e.to_string().contains("worker process stopped"), "{e}");
        }
        other => panic!("expected the worker's death, got {other:?}"),
    }
    let again = answer(&model, chat("Name a colour.", 16))
        .await
        .expect("the next request answers");
    assert!(again.output_tokens > 0);
    let pid = model.worker_pid().expect("a new worker");
    assert_ne!(pid, killed);
}

#[tokio::test]
async fn a_quiet_worker_process_ends_and_the_next_request_starts_another() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model(&dir, Some(Duration::from_millis(300)));
    assert!(
        model.worker_pid().is_none(),
        "no worker before the first request"
    );
    let first = answer(&model, chat("Name a colour.", 16))
        .await
        .expect("answers");
    assert!(
        !first.timings.load.is_zero(),
        "the first request loaded the weights"
    );
    let pid = model.worker_pid().expect("a worker process");
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.worker_pid().is_some() || model.loaded() {
        assert!(
            Instant::now() < deadline,
            "the worker did not end after its quiet period"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The process is gone, not just let go of: it exits and is reaped a moment after the
    // parent stops counting it, so this waits for that too.
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the worker process {pid} is still there after its quiet period"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = answer(&model, chat("Name a colour.", 16))
        .await
        .expect("answers again");
    assert!(!again.timings.load.is_zero(), "it loaded the weights again");
    assert_eq!(again.cached_tokens, 0, "no cache survived the worker");
}

#[tokio::test]
async fn a_request_started_while_another_runs_says_it_waits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model(&dir, None);
    let mut first = model.start(chat("Write a long story about a dragon.", 64));
    let mut second = model.start(chat("Name a colour.", 8));
    assert!(!first.queued(), "nothing ran before the first");
    assert!(second.queued(), "the second waits behind the first");
    for generation in [&mut first, &mut second] {
        while let Next::Event(_) = generation.next().await {}
    }
    drop((first, second));
    let third = model.start(chat("Name a colour.", 8));
    assert!(!third.queued(), "once both ended, nothing waits");
}

/// llama.cpp's threads meet at an OpenMP barrier after every operation. The worker links GCC's
/// libgomp and starts with a short spin at those barriers (then its threads sleep), so a
/// busy machine slows the model instead of stalling it; a person's own OpenMP settings win.
#[tokio::test]
async fn the_worker_runs_llama_cpp_on_openmp_with_a_short_spin_at_its_barriers() {
    let worker = std::fs::read(env!("CARGO_BIN_EXE_echo-local-worker")).expect("the worker binary");
    assert!(
        worker
            .windows(b"GOMP_SPINCOUNT".len())
            .any(|w| w == b"GOMP_SPINCOUNT"),
        "the worker does not link libgomp: llama.cpp would run on ggml's own thread pool, whose \
         barriers spin without end"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model(&dir, None);
    answer(&model, chat("Name a colour.", 4))
        .await
        .expect("answers");
    let pid = model.worker_pid().expect("a worker process");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the worker's environment");
    let spin = environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"GOMP_SPINCOUNT="))
        .map(|v| String::from_utf8_lossy(v).into_owned());
    let own = std::env::var("GOMP_SPINCOUNT").ok();
    let expected = match (own, std::env::var_os("OMP_WAIT_POLICY")) {
        (Some(own), _) => Some(own),
        (None, Some(_)) => None,
        (None, None) => Some("10000".to_string()),
    };
    assert_eq!(spin, expected, "the worker's GOMP_SPINCOUNT");
}
