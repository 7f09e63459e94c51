//! The nodes of the research graph (see `research.rs`): plan, recall (`recall.rs`), files
//! (`files.rs`), search, read, write; each a span of the turn, each checkpointed when it
//! finishes, each retried, served from the cache or skipped as `research.rs` says.

use super::Run;
use super::files;
use super::recall::{self, words};
use super::report;
use super::state::{Found, Note, Read, SubQuestion};
use crate::approval::CallScope;
use crate::model_calls::{ModelCall, call_tool, fit_to_window, structured_call_until};
use crate::think::strip_think;
use echo_core::ToolCall;
use echo_core::trace::{Span, SpanKind, SpanLevel, SpanStatus};
use echo_core::vocab::Degradation;
use echo_core::vocab::ResearchPhase;
use echo_tools::ToolContext;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::time::Duration;

/// The first wait before a node is tried again; doubled each time.
const BACKOFF: Duration = Duration::from_millis(250);
/// Most notes asked for and kept from one page.
const NOTES_PER_PAGE: usize = 4;

/// The `research_plan` call's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PlanAnswer {
    /// The sub-questions, in the order to research them.
    sub_questions: Vec<SubQuestion>,
}

/// One note of the `research_notes` call.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct NoteAnswer {
    /// The evidence, copied word for word from the page.
    quote: String,
    /// What it supports, in a few words.
    supports: String,
}

/// The `research_notes` call's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct NotesAnswer {
    /// The notes; none when the page has nothing relevant.
    #[serde(default)]
    notes: Vec<NoteAnswer>,
}

/// A note as the report's writer reads it.
#[derive(Debug, Serialize)]
struct ReportNote<'a> {
    number: usize,
    sub_question: &'a str,
    quote: &'a str,
    supports: &'a str,
    url: &'a str,
}

/// Runs the graph from wherever the state is; the report (or a partial one).
pub(super) async fn graph(run: &Run<'_>) -> String {
    run.progress(ResearchPhase::Planning);
    let planned = run.lock().plan.is_some();
    if !planned {
        plan(run).await;
    }
    let count = {
        // One state per sub-question, whatever a stored state says.
        let mut state = run.lock();
        let count = state.plan.as_ref().map_or(0, Vec::len);
        state.subs.resize(count, Default::default());
        count
    };
    futures::future::join_all((0..count).map(|i| sub_question(run, i))).await;
    if let Some(why) = run.stopped() {
        return report::partial(run, &why).await;
    }
    let written = run.lock().report.clone();
    let report = match written {
        Some(report) => report,
        None => match write(run).await {
            Ok(report) => report,
            Err(why) => return report::partial(run, &why).await,
        },
    };
    report::check(run, report).await
}

/// Tries `attempt` up to `1 + retries` times, each within the node time limit, waiting
/// longer before each new try; gives up at once when the run stops. The result and how
/// many tries it took.
async fn with_retries<T, F, Fut>(run: &Run<'_>, mut attempt: F) -> (Result<T, String>, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let config = &run.engine.config.research;
    let per_try = Duration::from_secs_f64(config.node_timeout_secs);
    let mut last = String::from("stopped");
    let mut tries = 0;
    for n in 0..=config.retries {
        if n > 0 {
            tokio::select! {
                () = tokio::time::sleep(BACKOFF * 2u32.pow(n - 1)) => {}
                () = run.stop.cancelled() => break,
            }
        }
        if run.stop.is_cancelled() {
            break;
        }
        tries += 1;
        let result = tokio::select! {
            r = tokio::time::timeout(per_try, attempt()) => r.unwrap_or_else(|_| {
                Err(format!("no answer within {}s", per_try.as_secs_f64()))
            }),
            () = run.stop.cancelled() => Err("stopped".into()),
        };
        match result {
            Ok(value) => return (Ok(value), tries),
            Err(e) => last = e,
        }
    }
    (Err(last), tries)
}

/// Asks the approval gate about a `tool` call with `arguments`, as the loop would; the
/// denial's text when it is not allowed.
async fn approve(run: &Run<'_>, span: &Span, tool: &str, arguments: String) -> Result<(), String> {
    let call = ToolCall {
        id: format!("research_{}", uuid::Uuid::now_v7().simple()),
        name: tool.to_string(),
        arguments,
    };
    let engine = run.engine;
    let ctx = ToolContext {
        workdir: engine.workdir.clone(),
        cancel: run.stop.clone(),
        session_id: run.session.to_string(),
        turn_id: run.turn.to_string(),
        temporary: run.asked.temporary.is_some(),
        project_id: run.asked.project_id().map(str::to_string),
    };
    let prepared = engine
        .tools
        .prepare(&call, &ctx)
        .await
        .map_err(|outcome| outcome.content)?;
    let scope = CallScope {
        session_id: run.session.as_str(),
        turn_id: run.turn.as_str(),
        workdir: &engine.workdir,
        roots: &[],
        mode: run.asked.approvals,
        events: run.events,
        cancel: &run.stop,
        span,
        context: &run.context,
        automation: run.asked.automation,
    };
    engine.gate.decide(&scope, &prepared).await
}

/// The plan node: the sub-questions. A plan that cannot be had is the question itself.
async fn plan(run: &Run<'_>) {
    let mut span = run.root.child(SpanLevel::Node, "research:plan").await;
    span.attr("research_run", run.store.id.clone());
    let config = &run.engine.config.research;
    let question = run.lock().question.clone();
    let made = match run.context.research_plan(
        &question,
        config.max_sub_questions,
        run.asked.project,
        call_tool::<PlanAnswer>("research_plan"),
    ) {
        Err(e) => Err(e.to_string()),
        Ok(_) if !run.take_call() => Err("the model call budget is spent".into()),
        Ok((messages, tool)) => {
            let (result, tries) = with_retries(run, || {
                let call = (messages.clone(), tool.clone(), 1024);
                structured_call_until::<PlanAnswer>(&run.llm, &span, call, &run.stop)
            })
            .await;
            note_retries(run, &mut span, tries);
            result
        }
    };
    let mut plan: Vec<SubQuestion> = match made {
        Ok((answer, usage)) => {
            run.used(usage);
            answer.sub_questions
        }
        Err(_) if run.stopped().is_some() => {
            span.finish(SpanStatus::Cancelled).await;
            return;
        }
        Err(e) => {
            span.set_error(&e);
            let detail = format!("the research plan failed ({e}); researching the question whole");
            run.degraded(&mut span, Degradation::ResearchNodeSkipped, detail);
            Vec::new()
        }
    };
    plan.retain(|q| !q.question.trim().is_empty());
    plan.truncate(config.max_sub_questions as usize);
    if plan.is_empty() {
        plan.push(SubQuestion {
            question: question.clone(),
            look_for: String::new(),
        });
    }
    span.attr(
        "sub_questions",
        plan.iter().map(|q| q.question.clone()).collect::<Vec<_>>(),
    );
    {
        let mut state = run.lock();
        state.subs = vec![Default::default(); plan.len()];
        state.plan = Some(plan);
    }
    run.checkpoint("plan").await;
    span.finish(SpanStatus::Ok).await;
}

fn note_retries(run: &Run<'_>, span: &mut Span, tries: u32) {
    span.attr("tries", tries);
    if tries > 1 {
        run.degraded(
            span,
            Degradation::ResearchRetry,
            format!("a research step needed {tries} tries"),
        );
    }
}

/// Recalls, searches and reads for sub-question `i`, skipping what is done.
async fn sub_question(run: &Run<'_>, i: usize) {
    let recalled = run.lock().subs[i].recalled.is_some();
    if !recalled && run.engine.config.memory.enabled {
        recall(run, i).await;
    }
    let folders = run.asked.project.map_or(&[][..], |p| p.folders.as_slice());
    let looked = run.lock().subs[i].files.is_some();
    if !looked && !folders.is_empty() && run.stopped().is_none() {
        look_in_files(run, i, folders).await;
    }
    if run.stopped().is_some() {
        return;
    }
    let searched = {
        let state = run.lock();
        state.subs[i].found.is_some() || state.subs[i].gap.is_some()
    };
    if !searched {
        search(run, i).await;
    }
    let pages = run.engine.config.research.pages_per_question as usize;
    loop {
        let next = {
            let state = run.lock();
            let sub = &state.subs[i];
            let found = sub.found.as_deref().unwrap_or_default();
            let j = sub.reads.len();
            (j < found.len().min(pages)).then(|| (j, found[j].clone()))
        };
        let Some((j, page)) = next else { break };
        if run.stopped().is_some() || !read(run, i, j, page).await {
            break;
        }
    }
}

/// Sub-question `i` of the plan, as asked of memory and the search service.
fn sub_question_text(run: &Run<'_>, i: usize) -> String {
    let state = run.lock();
    state
        .plan
        .as_ref()
        .map(|p| p[i].question.clone())
        .unwrap_or_default()
}

/// The recall node of sub-question `i`: the person's memories as a source (`recall.rs`),
/// asked through the gate as `memory_recall`; records what it kept (none is an answer too).
async fn recall(run: &Run<'_>, i: usize) {
    let mut span = run
        .root
        .child(SpanLevel::Node, &format!("research:recall#{}", i + 1))
        .await;
    let query = sub_question_text(run, i);
    span.attr("query", query.clone());
    let arguments = serde_json::json!({ "query": query }).to_string();
    let kept = match approve(run, &span, "memory_recall", arguments).await {
        Err(denied) => {
            span.attr("denied", denied);
            Vec::new()
        }
        Ok(()) => match recall::found(run, &query).await {
            Ok(memories) if memories.is_empty() => Vec::new(),
            Ok(memories) => {
                span.attr("recalled", memories.len());
                let source = recall::as_source(&memories);
                match notes(run, &mut span, i, &source).await {
                    Ok(pairs) => recall::cite(&memories, pairs),
                    Err(e) => {
                        span.set_error(&e);
                        Vec::new()
                    }
                }
            }
            Err(e) => {
                span.set_error(&e);
                Vec::new()
            }
        },
    };
    if run.stopped().is_some() {
        span.finish(SpanStatus::Cancelled).await;
        return;
    }
    span.attr("notes", kept.len());
    recall::reinforce(run, &kept).await;
    run.lock().subs[i].recalled = Some(kept);
    run.checkpoint(&format!("recall:{}", i + 1)).await;
    span.finish(SpanStatus::Ok).await;
}

/// The files node of sub-question `i`: the project's `folders` as a source (`files.rs`),
/// each asked through the gate as `search_files`; records what it kept (none is an answer
/// too).
async fn look_in_files(run: &Run<'_>, i: usize, folders: &[String]) {
    let mut span = run
        .root
        .child(SpanLevel::Node, &format!("research:files#{}", i + 1))
        .await;
    let query = sub_question_text(run, i);
    let words = files::words(&query);
    span.attr("words", words.join(" "));
    let mut allowed = Vec::new();
    for folder in folders {
        let arguments = serde_json::json!({
            "pattern": files::pattern(&words), "path": folder, "case_insensitive": true,
        });
        match approve(run, &span, "search_files", arguments.to_string()).await {
            Ok(()) => allowed.push(std::path::PathBuf::from(folder)),
            Err(denied) => span.attr("denied", denied),
        }
    }
    let hits = match files::found(&allowed, &words).await {
        Ok(hits) => hits,
        Err(e) => {
            span.set_error(&e);
            Vec::new()
        }
    };
    span.attr("files", hits.len());
    let mut kept = Vec::new();
    for hit in &hits {
        if run.stopped().is_some() {
            span.finish(SpanStatus::Cancelled).await;
            return;
        }
        match notes(run, &mut span, i, &files::as_source(hit, &words)).await {
            Ok(pairs) => kept.extend(files::cite(hit, pairs)),
            Err(e) => span.set_error(&e),
        }
    }
    span.attr("notes", kept.len());
    run.lock().subs[i].files = Some(kept);
    run.checkpoint(&format!("files:{}", i + 1)).await;
    span.finish(SpanStatus::Ok).await;
}

/// The search node of sub-question `i`.
async fn search(run: &Run<'_>, i: usize) {
    let mut span = run
        .root
        .child(SpanLevel::Node, &format!("research:search#{}", i + 1))
        .await;
    let query = sub_question_text(run, i);
    span.attr("query", query.clone());
    let arguments = serde_json::json!({ "query": query }).to_string();
    let key = format!("search:{query}");
    let outcome = match approve(run, &span, "web_search", arguments).await {
        Err(denied) => Err((denied, false)),
        Ok(()) => {
            let limit = run.search.max_results();
            let (result, tries) = with_retries(run, || async {
                let mut call = span
                    .child_of(SpanKind::Tool, SpanLevel::Call, "tool:web_search")
                    .await;
                let result = run.search.results(&query, limit).await;
                let status = if result.is_ok() {
                    SpanStatus::Ok
                } else {
                    SpanStatus::Error
                };
                if let Err(e) = &result {
                    call.set_error(&e.to_string());
                }
                call.finish(status).await;
                result.map_err(|e| e.to_string())
            })
            .await;
            note_retries(run, &mut span, tries);
            result.map_err(|e| (e, true))
        }
    };
    let found = match outcome {
        Ok(results) => {
            let found: Vec<Found> = results
                .into_iter()
                .map(|r| Found {
                    title: r.title,
                    url: r.url,
                    snippet: r.snippet,
                    date: r.date,
                })
                .collect();
            let body = serde_json::to_string(&found).unwrap_or_default();
            run.store
                .cache(&key, &body, &echo_core::time::now_rfc3339())
                .await;
            Ok(found)
        }
        Err(_) if run.stopped().is_some() => {
            span.finish(SpanStatus::Cancelled).await;
            return;
        }
        Err((e, may_cache)) => match run.store.cached(&key).await.filter(|_| may_cache) {
            Some((body, at)) => {
                let detail = format!("the search failed ({e}); using its results from {at}");
                run.degraded(&mut span, Degradation::ResearchCache, detail);
                Ok(serde_json::from_str(&body).unwrap_or_default())
            }
            None => Err(e),
        },
    };
    let status = match found {
        Ok(found) => {
            span.attr("results", found.len());
            run.lock().subs[i].found = Some(found);
            SpanStatus::Ok
        }
        Err(e) => {
            span.set_error(&e);
            let detail = format!("a search was skipped: {e}");
            run.degraded(&mut span, Degradation::ResearchNodeSkipped, detail);
            run.lock().subs[i].gap = Some(format!("the search failed: {e}"));
            SpanStatus::Error
        }
    };
    run.checkpoint(&format!("search:{}", i + 1)).await;
    span.finish(status).await;
}

/// The read node of page `j` of sub-question `i`: fetch, then notes. `false` when the run
/// stopped before it finished (nothing is recorded, so a resumed run reads it).
async fn read(run: &Run<'_>, i: usize, j: usize, page: Found) -> bool {
    let mut span = run
        .root
        .child(
            SpanLevel::Node,
            &format!("research:read#{}.{}", i + 1, j + 1),
        )
        .await;
    span.attr("url", page.url.clone());
    let fetched = fetch(run, &mut span, &page.url).await;
    let result = match fetched {
        Ok((text, at, from_cache)) => notes(run, &mut span, i, &text).await.map(|notes| Read {
            url: page.url.clone(),
            notes: notes
                .into_iter()
                .map(|(quote, supports)| Note {
                    quote,
                    supports,
                    url: page.url.clone(),
                    title: page.title.clone(),
                    retrieved_at: at.clone(),
                })
                .collect(),
            gap: None,
            from_cache,
        }),
        Err(e) => Err(e),
    };
    if run.stopped().is_some() && result.is_err() {
        span.finish(SpanStatus::Cancelled).await;
        return false;
    }
    let read = result.unwrap_or_else(|e| {
        span.set_error(&e);
        run.degraded(
            &mut span,
            Degradation::ResearchNodeSkipped,
            format!("a page was skipped: {e}"),
        );
        Read {
            url: page.url.clone(),
            notes: Vec::new(),
            gap: Some(e),
            from_cache: false,
        }
    });
    span.attr("notes", read.notes.len());
    let status = if read.gap.is_some() {
        SpanStatus::Error
    } else {
        SpanStatus::Ok
    };
    run.lock().subs[i].reads.push(read);
    run.checkpoint(&format!("read:{}:{}", i + 1, j + 1)).await;
    span.finish(status).await;
    true
}

/// The page's text (framed as `web_fetch` frames it), when it was fetched and whether it
/// came from the cache.
async fn fetch(
    run: &Run<'_>,
    span: &mut Span,
    url: &str,
) -> Result<(String, String, bool), String> {
    let arguments = serde_json::json!({ "url": url }).to_string();
    approve(run, span, "web_fetch", arguments).await?;
    let key = format!("page:{url}");
    let (result, tries) = with_retries(run, || async {
        let mut call = span
            .child_of(SpanKind::Tool, SpanLevel::Call, "tool:web_fetch")
            .await;
        let result = echo_tools::fetch_page(url).await;
        if let Err(e) = &result {
            call.set_error(&e.to_string());
        }
        call.finish(if result.is_ok() {
            SpanStatus::Ok
        } else {
            SpanStatus::Error
        })
        .await;
        result.map_err(|e| e.to_string())
    })
    .await;
    note_retries(run, span, tries);
    match result {
        Ok(text) => {
            let at = echo_core::time::now_rfc3339();
            run.store.cache(&key, &text, &at).await;
            Ok((text, at, false))
        }
        Err(e) if run.stopped().is_some() => Err(e),
        Err(e) => match run.store.cached(&key).await {
            Some((text, at)) => {
                let detail = format!("{url} could not be fetched ({e}); using the copy from {at}");
                run.degraded(span, Degradation::ResearchCache, detail);
                Ok((text, at, true))
            }
            None => Err(format!("{url} could not be read: {e}")),
        },
    }
}

/// The notes call on a fetched page (or recalled memories): the quotes found in it word for
/// word, with what each supports.
async fn notes(
    run: &Run<'_>,
    span: &mut Span,
    i: usize,
    text: &str,
) -> Result<Vec<(String, String)>, String> {
    let (question, sub) = {
        let state = run.lock();
        let plan = state.plan.as_deref().unwrap_or_default();
        (state.question.clone(), plan[i].clone())
    };
    let (messages, tool) = run
        .context
        .research_notes(
            &question,
            (&sub.question, &sub.look_for),
            (text, NOTES_PER_PAGE),
            call_tool::<NotesAnswer>("research_notes"),
        )
        .map_err(|e| e.to_string())?;
    if !run.take_call() {
        return Err("the model call budget is spent".into());
    }
    let node: &Span = span;
    let (result, tries) = with_retries(run, || {
        let call = (messages.clone(), tool.clone(), 1024);
        structured_call_until::<NotesAnswer>(&run.llm, node, call, &run.stop)
    })
    .await;
    note_retries(run, span, tries);
    let (answer, usage) = result?;
    run.used(usage);
    let page_words = words(text);
    let offered = answer.notes.len();
    let kept: Vec<(String, String)> = answer
        .notes
        .into_iter()
        .filter(|n| {
            let quote = words(&n.quote);
            !quote.is_empty() && page_words.contains(&quote)
        })
        .take(NOTES_PER_PAGE)
        .map(|n| (n.quote.trim().to_string(), n.supports.trim().to_string()))
        .collect();
    span.attr("notes_offered", offered);
    if kept.len() < offered.min(NOTES_PER_PAGE) {
        span.attr(
            "notes_not_in_page",
            offered.min(NOTES_PER_PAGE) - kept.len(),
        );
    }
    Ok(kept)
}

/// The write node: the report from the notes.
async fn write(run: &Run<'_>) -> Result<String, String> {
    run.progress(ResearchPhase::Writing);
    let mut span = run.root.child(SpanLevel::Node, "research:write").await;
    let (question, plan, notes, gaps) = {
        let state = run.lock();
        let plan = state.plan.clone().unwrap_or_default();
        let notes: Vec<(usize, Note)> = state
            .notes()
            .into_iter()
            .map(|(i, n)| (i, n.clone()))
            .collect();
        (state.question.clone(), plan, notes, state.gaps())
    };
    span.attr("notes", notes.len());
    if notes.is_empty() {
        span.finish(SpanStatus::Ok).await;
        return Err("no source read had evidence for the question".into());
    }
    let shown: Vec<ReportNote> = notes
        .iter()
        .enumerate()
        .map(|(k, (i, n))| ReportNote {
            number: k + 1,
            sub_question: &plan[*i].question,
            quote: &n.quote,
            supports: &n.supports,
            url: &n.url,
        })
        .collect();
    let messages = match run
        .context
        .research_report(&question, &shown, &gaps, run.asked.project)
    {
        Ok(messages) => messages,
        Err(e) => {
            span.set_error(&e.to_string());
            span.finish(SpanStatus::Error).await;
            return Err(e.to_string());
        }
    };
    if !run.take_call() {
        span.finish(SpanStatus::Cancelled).await;
        return Err("the model call budget is spent".into());
    }
    let messages = fit_to_window(&run.llm, messages, &[]);
    let node: &Span = &span;
    let (result, tries) = with_retries(run, || async {
        let call = ModelCall::exact(&run.llm, messages.clone(), Vec::new(), 4096);
        call.send(node, "research_report", &run.stop, &mut |_| {})
            .await
            .map_err(|f| f.error.to_string())
    })
    .await;
    note_retries(run, &mut span, tries);
    match result {
        Ok(response) => {
            run.used(response.usage);
            let (visible, _) = strip_think(&response.text);
            run.lock().report = Some(visible.clone());
            run.checkpoint("write").await;
            span.finish(SpanStatus::Ok).await;
            Ok(visible)
        }
        Err(e) => {
            span.set_error(&e);
            span.finish(if run.stopped().is_some() {
                SpanStatus::Cancelled
            } else {
                SpanStatus::Error
            })
            .await;
            Err(run
                .stopped()
                .unwrap_or(format!("the report could not be written: {e}")))
        }
    }
}
