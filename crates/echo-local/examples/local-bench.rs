//! Speed of the built-in runtime on one GGUF model: prompt processing and generation
//! tokens/s, time to first token for a first turn and for a follow-up turn that reuses the
//! prompt cache, and the forced-call (constrained) generation speed.
//!
//! `cargo run --profile profiling -p echo-local --example local-bench -- MODEL.gguf [RUNS]`

use echo_local::{ChatMessage, ChatRole, Event, LocalModel, Next, Outcome, Request, ToolDef};
use std::time::{Duration, Instant};

struct Timed {
    outcome: Outcome,
    first: Duration,
    total: Duration,
    text: String,
}

async fn timed(model: &LocalModel, request: Request) -> Timed {
    let started = Instant::now();
    let mut first = None;
    let mut text = String::new();
    let mut generation = model.start(request);
    loop {
        match generation.next().await {
            Next::Event(e) => {
                first.get_or_insert_with(|| started.elapsed());
                match e {
                    Event::Text(t) => text.push_str(&t),
                    Event::ToolCall(c) => text.push_str(&c.arguments),
                }
            }
            Next::Done(result) => {
                let outcome = match result {
                    Ok(o) => o,
                    Err(e) => {
                        eprintln!("generation failed: {e}");
                        std::process::exit(1);
                    }
                };
                return Timed {
                    outcome,
                    first: first.unwrap_or_else(|| started.elapsed()),
                    total: started.elapsed(),
                    text,
                };
            }
        }
    }
}

fn long_system() -> String {
    let mut s =
        String::from("You are a helpful assistant. Here is what you know about the user:\n");
    for i in 0..40 {
        s.push_str(&format!(
            "- Fact {i}: the user once mentioned item number {i} in a list of things they like.\n"
        ));
    }
    s
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: local-bench MODEL.gguf [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let load = Instant::now();
    let model = match LocalModel::open(std::path::Path::new(&path), None) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    println!(
        "model: {} ({:?}, window {})",
        model.info().name,
        model.info().arch,
        model.info().window
    );
    // Warm-up: loads the weights.
    let warm = timed(
        &model,
        Request {
            messages: vec![ChatMessage::new(ChatRole::User, "Hi")],
            tools: Vec::new(),
            forced: None,
            max_tokens: 1,
            temperature: Some(0.0),
        },
    )
    .await;
    println!(
        "load + first token: {:.0} ms",
        (load.elapsed()).as_secs_f64() * 1000.0 - 0.0 * warm.total.as_secs_f64()
    );

    for run in 0..runs {
        let system = format!("{}\nRun {run}.", long_system());
        let first = Request {
            messages: vec![
                ChatMessage::new(ChatRole::System, system.clone()),
                ChatMessage::new(
                    ChatRole::User,
                    "Tell me a short story about a lighthouse keeper.",
                ),
            ],
            tools: Vec::new(),
            forced: None,
            max_tokens: 128,
            temperature: Some(0.0),
        };
        let a = timed(&model, first.clone()).await;
        let prefill_tps = a.outcome.prompt_tokens as f64 / a.first.as_secs_f64();
        let gen_secs = (a.total - a.first).as_secs_f64();
        let gen_tps = (a.outcome.output_tokens.saturating_sub(1)) as f64 / gen_secs;
        let mut follow = first;
        follow
            .messages
            .push(ChatMessage::new(ChatRole::Assistant, a.text.clone()));
        follow
            .messages
            .push(ChatMessage::new(ChatRole::User, "Now make it sadder."));
        follow.max_tokens = 16;
        let b = timed(&model, follow).await;
        let forced = timed(&model, Request {
            messages: vec![
                ChatMessage::new(ChatRole::System, "Extract facts about the user."),
                ChatMessage::new(ChatRole::User, "I live in Lisbon, I have two cats and I work as a nurse."),
            ],
            tools: vec![ToolDef {
                name: "extract".into(),
                description: "Record facts".into(),
                parameters: serde_json::json!({"type":"object","properties":{"facts":{"type":"array","items":{"type":"string"},"maxItems":5}},"required":["facts"],"additionalProperties":false}),
            }],
            forced: Some("extract".into()),
            max_tokens: 128,
            temperature: Some(0.0),
        })
        .await;
        println!(
            "run {run}: prompt {} tok, ttft {:.0} ms ({prefill_tps:.0} tok/s prefill), gen {} tok at {gen_tps:.1} tok/s | follow-up prompt {} tok ({} cached), ttft {:.0} ms | forced call {} tok in {:.0} ms ({:.1} tok/s)",
            a.outcome.prompt_tokens,
            a.first.as_secs_f64() * 1000.0,
            a.outcome.output_tokens,
            b.outcome.prompt_tokens,
            b.outcome.cached_tokens,
            b.first.as_secs_f64() * 1000.0,
            forced.outcome.output_tokens,
            forced.total.as_secs_f64() * 1000.0,
            forced.outcome.output_tokens as f64 / forced.total.as_secs_f64(),
        );
        if run == 0 {
            println!("forced call arguments: {}", forced.text);
        }
    }
}
