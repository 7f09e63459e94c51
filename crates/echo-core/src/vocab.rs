//! Closed vocabularies that cross the wire. Each is an enum, serialised (and stored in
//! SQLite) as its snake_case name, and exported to TypeScript (ts-rs) and OpenAPI (utoipa)
//! as a union of those names, so no front end compares against a free-form string. They live
//! here, at the bottom of the crate graph, because every crate that produces one (tools,
//! gate, memory, agent) sits above; with the id newtypes they are the only wire types
//! declared outside echo-agent's `wire` module.

use serde::{Deserialize, Serialize};

/// Declares a closed vocabulary: `Name as WireName = "WireName" { Variant = "text", … }`.
/// The TypeScript/OpenAPI name is `WireName` (so two crates' `Status` never clash).
macro_rules! closed_enum {
    ($(#[$doc:meta])* $name:ident as $wire:ident = $wire_name:literal { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            ts_rs::TS, utoipa::ToSchema, sqlx::Type,
        )]
        #[serde(rename_all = "snake_case")]
        #[sqlx(rename_all = "snake_case")]
        #[ts(rename = $wire_name)]
        #[schema(as = $wire)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// The stored and wire spelling (the same as its serde form).
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
            /// Parses a stored or user-given spelling.
            pub fn parse(s: &str) -> Option<Self> {
                match s.trim() { $($text => Some(Self::$variant),)+ _ => None }
            }
            /// Every accepted spelling.
            pub const fn names() -> &'static [&'static str] {
                &[$($text),+]
            }
            /// The accepted spellings for an error message: `allow, ask or deny`.
            pub fn expected() -> String {
                match Self::names() {
                    [one] => one.to_string(),
                    [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
                    [] => String::new(),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

closed_enum!(
    /// How much harm a tool can do; drives the approval gate and concurrency.
    Risk as Risk = "Risk" {
        /// Reads only; safe to run concurrently with other read-only calls.
        ReadOnly = "read_only",
        /// Changes files.
        Write = "write",
        /// Runs programs.
        Exec = "exec",
        /// Talks to the network.
        Network = "network",
        /// Could do lasting harm.
        Dangerous = "dangerous",
    }
);

closed_enum!(
    /// What the gate (a rule, a default, or the person) decided about a tool call.
    RuleDecision as RuleDecision = "RuleDecision" {
        /// Run the call.
        Allow = "allow",
        /// Ask the person first.
        Ask = "ask",
        /// Refuse the call; the model gets the reason as the tool result.
        Deny = "deny",
    }
);

closed_enum!(
    /// Which step of the gate (or who) made a decision; stored in the audit log.
    DecidedBy as DecidedBy = "DecidedBy" {
        /// The tool is switched off in settings.
        Disabled = "disabled",
        /// A hard-deny pattern.
        HardDeny = "hard_deny",
        /// The path policy (secrets, workspace roots, the assistant's own data).
        PathPolicy = "path_policy",
        /// One of the person's rules.
        Rule = "rule",
        /// The risk level's default.
        Risk = "risk",
        /// The person, answering a question.
        User = "user",
        /// Nobody answered in time.
        Timeout = "timeout",
        /// Nobody could be asked (no terminal, no window).
        NonInteractive = "non_interactive",
    }
);

closed_enum!(
    /// Which front end started a turn.
    EntryPoint as EntryPoint = "EntryPoint" {
        /// `echod ask` / `echod chat`.
        Cli = "cli",
        /// The desktop app's main window.
        Desktop = "desktop",
        /// The desktop app's quick-ask window.
        QuickAsk = "quick_ask",
        /// `echod serve`'s HTTP gateway (the web UI).
        Gateway = "gateway",
        /// A local automation.
        Automation = "automation",
        /// `echod bench`.
        Bench = "bench",
    }
);

closed_enum!(
    /// What becomes of the memories learned in a conversation that is deleted.
    LearnedMemories as LearnedMemories = "LearnedMemories" {
        /// They stay (they are about the person, not the conversation).
        Keep = "keep",
        /// They are forgotten: out of every prompt and search, restorable.
        Forget = "forget",
        /// They are deleted for good, with their history and vectors.
        Delete = "delete",
    }
);

closed_enum!(
    /// What becomes of a project's memories when the project is removed.
    ProjectMemories as ProjectMemories = "ProjectMemories" {
        /// They become global memories, recalled in every conversation.
        Global = "global",
        /// They are deleted for good, with their history and vectors.
        Delete = "delete",
    }
);

closed_enum!(
    /// What happened to a file in a watched folder.
    FileEvent as FileEvent = "FileEvent" {
        /// It appeared.
        Created = "created",
        /// Its content changed.
        Modified = "modified",
        /// It went away.
        Deleted = "deleted",
        /// It moved or was renamed (`old_path` says from where).
        Renamed = "renamed",
    }
);

closed_enum!(
    /// Where one run of an automation is.
    RunStatus as RunStatus = "RunStatus" {
        /// Waiting for a free slot.
        Queued = "queued",
        /// Its turn is running.
        Running = "running",
        /// Its turn is paused on a question in the approval queue.
        WaitingForApproval = "waiting_for_approval",
        /// Its turn completed.
        Done = "done",
        /// Its turn failed or was stopped (the reason says why).
        Failed = "failed",
        /// It never ran (the reason says why: a loop, the rate limit, a missed schedule).
        Skipped = "skipped",
    }
);

closed_enum!(
    /// What set a run off.
    RunCause as RunCause = "RunCause" {
        /// A file event in a watched folder.
        File = "file",
        /// A schedule's fire time.
        Schedule = "schedule",
        /// The person (`run now`).
        Manual = "manual",
    }
);

closed_enum!(
    /// What a schedule does about fire times that passed while no process was running it.
    MissedRuns as MissedRuns = "MissedRuns" {
        /// Run once when it starts again (for the latest missed time).
        RunOnce = "run_once",
        /// Record them as skipped and wait for the next fire time.
        Skip = "skip",
    }
);

closed_enum!(
    /// An automation's state as its watcher/scheduler sees it.
    AutomationState as AutomationState = "AutomationState" {
        /// Watching its folders (or waiting for its next fire time).
        Active = "active",
        /// Switched off by the person.
        Paused = "paused",
        /// Cannot watch or schedule (the reason says why); retried until it can.
        Error = "error",
        /// Too many runs in the last hour; events are skipped until it calms down.
        RateLimited = "rate_limited",
        /// No running process has taken it up yet (the app and `echod serve` are closed).
        Idle = "idle",
    }
);

closed_enum!(
    /// Where a queued approval question (from an unattended run) is.
    QueuedApprovalStatus as QueuedApprovalStatus = "QueuedApprovalStatus" {
        /// Waiting for the person.
        Pending = "pending",
        /// Allowed; the run went on.
        Allowed = "allowed",
        /// Denied; the run got "denied" as the tool result.
        Denied = "denied",
        /// Nobody answered in time (or the run ended first).
        Expired = "expired",
    }
);

closed_enum!(
    /// Why a turn failed or was interrupted (`TurnEvent::Error`, the turn record).
    TurnErrorCode as TurnErrorCode = "TurnErrorCode" {
        /// Stopped by the person (or a quit) before it finished.
        Interrupted = "interrupted",
        /// Its process ended while it ran; found on the next start.
        ProcessEnded = "process_ended",
        /// The local database failed.
        Store = "store",
        /// A prompt template failed to render.
        Prompt = "prompt",
        /// The request does not fit the model's context window even after compression.
        ContextOverflow = "context_overflow",
        /// Research was asked for, but no web search service is configured.
        ResearchUnavailable = "research_unavailable",
        /// The model server could not be reached.
        LlmConnect = "llm_connect",
        /// The model server did not answer in time.
        LlmTimeout = "llm_timeout",
        /// The model server asked to slow down (HTTP 429).
        LlmRateLimited = "llm_rate_limited",
        /// The model server does not know the model (HTTP 404).
        LlmModelNotFound = "llm_model_not_found",
        /// Another HTTP error status.
        LlmStatus = "llm_status",
        /// The API key was refused.
        LlmAuth = "llm_auth",
        /// The answer's stream broke off.
        LlmStreamCut = "llm_stream_cut",
        /// The model server reported an error inside its answer.
        LlmServerError = "llm_server_error",
        /// The model server's answer did not follow its protocol.
        LlmProtocol = "llm_protocol",
        /// The model call was cancelled.
        LlmCancelled = "llm_cancelled",
        /// The model settings are unusable.
        LlmConfig = "llm_config",
        /// The built-in model failed: its file cannot be used, or a generation failed.
        LlmLocal = "llm_local",
    }
);

closed_enum!(
    /// Where a memory lives.
    MemoryTier as MemoryTier = "MemoryTier" {
        /// Notes, constraints and open items of one session.
        Working = "working",
        /// What happened: episode summaries with a time range.
        Episodic = "episodic",
        /// Facts and preferences as cards.
        Semantic = "semantic",
        /// Faded or expired: never injected, still searchable and restorable.
        Archival = "archival",
    }
);

closed_enum!(
    /// Lifecycle of a memory.
    MemoryStatus as MemoryStatus = "MemoryStatus" {
        /// In use.
        Active = "active",
        /// Replaced by a newer or stronger memory (kept, with `superseded_by`).
        Superseded = "superseded",
        /// Moved to the archive by decay or expiry.
        Archived = "archived",
        /// Deleted by the person.
        Deleted = "deleted",
    }
);

closed_enum!(
    /// Provenance of a memory; a lower source never overrides a higher one.
    MemorySource as MemorySource = "MemorySource" {
        /// The person said it.
        UserStated = "user_stated",
        /// Distilled from several turns.
        Consolidated = "consolidated",
        /// The model inferred it.
        Inferred = "inferred",
        /// The person typed it in the memory UI or CLI (counts as `user_stated`).
        Manual = "manual",
        /// Brought from another assistant's memory and kept by the person in the import's
        /// review (counts as `user_stated`; `created_at` is the import date).
        Imported = "imported",
    }
);

closed_enum!(
    /// What keeping an imported memory card would do to a memory already there.
    ImportClashKind as ImportClashKind = "ImportClashKind" {
        /// It says the same: that memory is reinforced and the card adds nothing.
        Duplicate = "duplicate",
        /// The card wins: that memory is superseded.
        Replaces = "replaces",
        /// That memory wins: the card is stored as superseded by it.
        LosesTo = "loses_to",
        /// Neither wins: both wait in the review queue.
        Review = "review",
    }
);

impl MemorySource {
    /// Authority for conflict resolution: higher wins.
    pub fn rank(self) -> u8 {
        match self {
            MemorySource::UserStated | MemorySource::Manual | MemorySource::Imported => 3,
            MemorySource::Consolidated => 2,
            MemorySource::Inferred => 1,
        }
    }
}

closed_enum!(
    /// Whether a stored message is whole.
    MessageStatus as MessageStatus = "MessageStatus" {
        /// Written in full.
        Complete = "complete",
        /// An answer cut short (stopped, failed or interrupted mid-stream).
        Partial = "partial",
    }
);

closed_enum!(
    /// Status of a turn.
    TurnStatus as TurnStatus = "TurnStatus" {
        /// Recorded, waiting for the session.
        Accepted = "accepted",
        /// Running.
        Running = "running",
        /// Answered.
        Completed = "completed",
        /// Ended by an error.
        Failed = "failed",
        /// Cut short: cancelled, or its process ended.
        Interrupted = "interrupted",
    }
);

closed_enum!(
    /// How a trace span ended, or `running` while it is open (only ever read back, never
    /// passed to `Span::finish`).
    SpanStatus as SpanStatus = "SpanStatus" {
        /// Still open.
        Running = "running",
        /// Succeeded.
        Ok = "ok",
        /// Failed.
        Error = "error",
        /// Cut short.
        Cancelled = "cancelled",
    }
);

closed_enum!(
    /// Whether a conflict between two memories still waits for the person.
    ConflictStatus as ConflictStatus = "ConflictStatus" {
        /// In the review queue; neither side is injected.
        Open = "open",
        /// Settled (kept one, kept both, or one side was deleted).
        Resolved = "resolved",
    }
);

closed_enum!(
    /// What a recorded change did to a memory (its history).
    MemoryAction as MemoryAction = "MemoryAction" {
        /// Written for the first time.
        Created = "created",
        /// Confirmed by a new memory saying the same (confidence and evidence updated).
        Confirmed = "confirmed",
        /// Changed by hand.
        Edited = "edited",
        /// Replaced by a newer or stronger memory.
        Superseded = "superseded",
        /// Moved between a project and the global memories (its scope changed).
        Moved = "moved",
        /// Pinned: it no longer decays.
        Pinned = "pinned",
        /// Unpinned.
        Unpinned = "unpinned",
        /// Moved to the archive (expired or faded).
        Archived = "archived",
        /// Brought back from the archive or from deletion.
        Restored = "restored",
        /// Deleted by the person.
        Deleted = "deleted",
        /// An earlier change reverted.
        Undo = "undo",
    }
);

closed_enum!(
    /// Who changed a memory (recorded in its history).
    MemoryActor as MemoryActor = "MemoryActor" {
        /// The person, through the UI or CLI.
        User = "user",
        /// Extraction after a turn.
        Extraction = "extraction",
        /// Consolidation of a session.
        Consolidation = "consolidation",
        /// A memory tool called by the model.
        Tool = "tool",
        /// An import file.
        Import = "import",
        /// The forgetting sweep.
        Sweep = "sweep",
    }
);

closed_enum!(
    /// The level of a trace span.
    SpanLevel as SpanLevel = "SpanLevel" {
        /// The whole turn (one per trace).
        Turn = "turn",
        /// A stage or step: context, each inference iteration, a tool batch, response, a
        /// background job.
        Node = "node",
        /// One model request, tool execution or embedding batch.
        Call = "call",
    }
);

closed_enum!(
    /// What a trace span covers, for the trace viewer's colours and links.
    SpanKind as SpanKind = "SpanKind" {
        /// A stage of the turn: the turn itself, context, an inference iteration, a tool
        /// batch, the response.
        Stage = "stage",
        /// One model request (HTTP attempt).
        Model = "model",
        /// One tool execution.
        Tool = "tool",
        /// Waiting for an approval answer.
        Approval = "approval",
        /// Reading memories for the turn (recall and the snapshot).
        MemoryRead = "memory_read",
        /// Writing memories (extraction, consolidation).
        MemoryWrite = "memory_write",
        /// Other work after the turn ended (e.g. the session title).
        Background = "background",
    }
);

closed_enum!(
    /// How a memory came to be in the request a model answered from (the read log).
    MemoryReadKind as MemoryReadKind = "MemoryReadKind" {
        /// The session's snapshot of the person's most important memories.
        Snapshot = "snapshot",
        /// Recalled for the message.
        Recalled = "recalled",
        /// Cited by a research run.
        Research = "research",
        /// Found by the model with the `memory_recall` tool.
        Tool = "tool",
    }
);

closed_enum!(
    /// The conflict judge's reading of two memories.
    MemoryVerdict as MemoryVerdict = "MemoryVerdict" {
        /// Same information.
        Duplicate = "duplicate",
        /// The new one updates the old one (the world changed).
        Update = "update",
        /// They cannot both be true.
        Contradiction = "contradiction",
        /// About different things.
        Unrelated = "unrelated",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_spelling_is_the_serde_spelling_and_parses_back() {
        fn check<T: Serialize + Copy + std::fmt::Display + PartialEq + std::fmt::Debug>(
            all: &[T],
            parse: fn(&str) -> Option<T>,
        ) {
            for &v in all {
                let json = serde_json::to_string(&v).expect("a unit variant serialises");
                assert_eq!(json, format!("\"{v}\""));
                assert_eq!(parse(&v.to_string()), Some(v));
            }
        }
        check(&[Risk::ReadOnly, Risk::Dangerous], Risk::parse);
        check(
            &[DecidedBy::NonInteractive, DecidedBy::HardDeny],
            DecidedBy::parse,
        );
        check(&[EntryPoint::QuickAsk], EntryPoint::parse);
        check(
            &[TurnErrorCode::LlmModelNotFound, TurnErrorCode::ProcessEnded],
            TurnErrorCode::parse,
        );
        check(&[MemorySource::UserStated], MemorySource::parse);
        assert_eq!(Risk::parse("root"), None);
        assert_eq!(RuleDecision::expected(), "allow, ask or deny");
    }
}

closed_enum!(
    /// Which embedder memory search uses (`memory.embedder`).
    EmbedderKind as EmbedderKind = "EmbedderKind" {
        /// all-MiniLM-L6-v2, run in-process with candle.
        Local = "local",
        /// The `/embeddings` endpoint of the LLM server.
        Openai = "openai",
        /// None: keyword (BM25) search only.
        None = "none",
    }
);

closed_enum!(
    /// Who said a message.
    Role as Role = "Role" {
        /// Instructions from the system (only ContextStage writes these).
        System = "system",
        /// The person.
        User = "user",
        /// The model.
        Assistant = "assistant",
        /// The result of a tool call.
        Tool = "tool",
    }
);

closed_enum!(
    /// Which wire protocol a model server speaks (`[llm] kind`).
    ProviderKind as ProviderKind = "ProviderKind" {
        /// Any OpenAI-compatible chat-completions server.
        Openai = "openai",
        /// Anthropic's messages API.
        Anthropic = "anthropic",
        /// Ollama, through its OpenAI-compatible endpoint.
        Ollama = "ollama",
        /// The built-in model: a GGUF file run in-process (`model` is its path).
        Local = "local",
    }
);

closed_enum!(
    /// What a turn is mostly about, judged from cheap markers in its text (no model call).
    TaskType as TaskType = "TaskType" {
        /// Conversation, questions, everyday help.
        Chat = "chat",
        /// Writing, reading or fixing code.
        Code = "code",
        /// Finding out, comparing, investigating.
        Research = "research",
        /// Plans, schedules, step-by-step approaches.
        Planning = "planning",
    }
);

closed_enum!(
    /// How long an approval rule holds. ("Once" is an answer, not a rule: it is never stored.)
    RuleScope as RuleScope = "RuleScope" {
        /// Only in the session it was made in.
        Session = "session",
        /// In every session, until removed.
        Always = "always",
    }
);

closed_enum!(
    /// How a listing of memories is ordered; each puts the largest or newest first.
    MemorySort as MemorySort = "MemorySort" {
        /// Newest first.
        Created = "created",
        /// Most recently changed first.
        Updated = "updated",
        /// Most recently injected first; never-used ones last.
        LastUsed = "last_used",
        /// Highest stored importance first.
        Importance = "importance",
        /// Highest effective importance (after decay, as of now) first: what fades next is last.
        Effective = "effective",
    }
);

// Written out: `closed_enum!` derives the same traits for every vocabulary, and only this
// one has a default.
#[allow(clippy::derivable_impls)]
impl Default for MemorySort {
    fn default() -> Self {
        Self::Created
    }
}

closed_enum!(
    /// Which web search service the `web_search` tool asks (`[search] kind`).
    SearchKind as SearchKind = "SearchKind" {
        /// None: the tool is not offered.
        None = "none",
        /// A SearXNG instance (`GET /search?q=…&format=json`); `url` is required.
        Searxng = "searxng",
        /// Brave Search's web search API; needs an API key.
        Brave = "brave",
        /// Tavily's search API; needs an API key.
        Tavily = "tavily",
    }
);

closed_enum!(
    /// Whether a turn may take the research path (`[research] mode`).
    ResearchMode as ResearchMode = "ResearchMode" {
        /// The router decides per turn; the person can force either way.
        Auto = "auto",
        /// Never, unless the person asks for it on the turn (`--research`, the toggle).
        Never = "never",
    }
);

closed_enum!(
    /// Where a research run is in its graph.
    ResearchPhase as ResearchPhase = "ResearchPhase" {
        /// Splitting the question into sub-questions.
        Planning = "planning",
        /// Searching and reading sources for the sub-questions.
        Gathering = "gathering",
        /// Writing the report from the notes.
        Writing = "writing",
        /// Checking that every citation points to a note.
        Checking = "checking",
        /// The report is done.
        Done = "done",
    }
);

closed_enum!(
    /// Where one sub-question of a research run is.
    SubQuestionState as SubQuestionState = "SubQuestionState" {
        /// Not started.
        Pending = "pending",
        /// Its search is running.
        Searching = "searching",
        /// Its pages are being read.
        Reading = "reading",
        /// Its notes are taken.
        Done = "done",
        /// Nothing usable was found or it could not be reached; the report says so.
        Gap = "gap",
    }
);

closed_enum!(
    /// A fallback the engine took to keep a turn alive. Each is a counter of its own
    /// (`echod trace stats`); a span can carry several.
    Degradation as Degradation = "Degradation" {
        /// A model request was sent again after a failure.
        Retry = "retry",
        /// The built-in model was answering another request; the turn waited.
        ModelBusy = "model_busy",
        /// A fallback model answered instead of the configured one.
        FallbackModel = "fallback_model",
        /// The loop reached its iteration limit and was asked to answer without tools.
        MaxIterations = "max_iterations",
        /// A tool failed too often in a row and is paused.
        CircuitOpen = "circuit_open",
        /// The request was cut to fit the window (old outputs, old turns, memories).
        ContextTrimmed = "context_trimmed",
        /// Only some tools were offered, to fit the window.
        ToolsTrimmed = "tools_trimmed",
        /// Compressing the history into a summary failed.
        SummaryFailed = "summary_failed",
        /// The planner call failed; the turn went on without a plan.
        PlannerFailed = "planner_failed",
        /// Embedding failed; search used keywords only.
        EmbeddingFailed = "embedding_failed",
        /// Memory could not be read for the turn.
        MemoryUnavailable = "memory_unavailable",
        /// The conflict judge failed; a rule decided instead.
        JudgeFallback = "judge_fallback",
        /// The history was not a valid message sequence and was repaired.
        InvalidSequence = "invalid_sequence",
        /// A bootstrap file was cut to its budget.
        BootstrapCut = "bootstrap_cut",
        /// A research node needed more than one try.
        ResearchRetry = "research_retry",
        /// A research node was served from the cache of an earlier fetch.
        ResearchCache = "research_cache",
        /// A research node failed and was skipped; the report names the gap.
        ResearchNodeSkipped = "research_node_skipped",
        /// A research run ended in a partial report (Stop, time limit, budget).
        PartialReport = "partial_report",
        /// A report cited notes that do not exist; those citations were taken out.
        CitationUnresolved = "citation_unresolved",
        /// A report cited a note that does not support the sentence; the citation was taken
        /// out.
        CitationUnsupported = "citation_unsupported",
        /// The check of a report's citations against their notes could not be made; the
        /// report says so.
        CitationCheckFailed = "citation_check_failed",
        /// A side job (a title, follow-ups) failed; the answer is untouched.
        SideModelFailed = "side_model_failed",
    }
);

closed_enum!(
    /// A temporary chat: nothing of it is kept once it is left, and it teaches memory nothing.
    TemporaryChat as TemporaryChat = "TemporaryChat" {
        /// Memory is neither read nor written.
        Sealed = "sealed",
        /// What memory knows is recalled into it; nothing is written.
        Recall = "recall",
    }
);

closed_enum!(
    /// Where a device paired with `echod serve` stands.
    DeviceState as DeviceState = "DeviceState" {
        /// Its one-time pairing code has not been used yet (and has not expired).
        Waiting = "waiting",
        /// It holds a token of its own that works.
        Paired = "paired",
        /// Its token (or its pairing) was revoked: it opens nothing.
        Revoked = "revoked",
    }
);

closed_enum!(
    /// What happened at `echod serve`'s door: the sign-in log's entries.
    AccessEventKind as AccessEventKind = "AccessEventKind" {
        /// A device's pairing code was made.
        PairingStarted = "pairing_started",
        /// A device traded its code for a token of its own.
        Paired = "paired",
        /// A browser page traded the code of the address `echod serve` printed.
        PagePaired = "page_paired",
        /// A pairing code was wrong, used, expired or withdrawn.
        WrongCode = "wrong_code",
        /// Too many wrong codes: every code is refused for a minute.
        CodesLocked = "codes_locked",
        /// A device's token (or its pairing) was revoked.
        Revoked = "revoked",
    }
);
