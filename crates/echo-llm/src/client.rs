//! [`LlmClient`]: one configured model server, its primary and fallback models, and the policy
//! around each call: retries with exponential backoff per model (backon), then the fallback
//! models in order, with every HTTP attempt recorded and cancellation honoured throughout.

use crate::anthropic::Anthropic;
use crate::assemble::{Assembled, Assembler};
use crate::error::{LlmError, ServerRef};
use crate::openai::OpenAi;
use crate::provider::Provider;
use crate::transport::{Exchange, Limits};
use crate::types::{Attempt, AttemptKind, ChatEvent, ChatFailure, ChatRequest, ChatResponse};
use backon::{ExponentialBuilder, Retryable};
use echo_core::config::{LlmConfig, ProviderKind, RetryConfig};
use echo_core::{Message, ToolSpec};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// A client for one model server: the configured primary model and its fallbacks.
pub struct LlmClient {
    backend: Backend,
    kind: ProviderKind,
    base_url: String,
    host: String,
    models: Vec<String>,
    limits: Limits,
    retry: RetryConfig,
    max_tokens: u32,
    temperature: Option<f32>,
    input_budget: usize,
    tokenizer: crate::tokens::Tokenizer,
}

/// Where requests go.
enum Backend {
    /// A model server, over HTTP in the provider's protocol.
    Http {
        http: reqwest::Client,
        provider: Box<dyn Provider>,
    },
    /// The built-in model, in this process; or why its file cannot be used (reported by
    /// each call, so a missing model does not stop the engine from starting).
    Local(Result<Arc<echo_local::LocalModel>, String>),
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the API key.
        f.debug_struct("LlmClient")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("models", &self.models)
            .field("limits", &self.limits)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// Builds a client from the `[llm]` configuration. Fails on an empty model name, a base
    /// URL that is not http(s), or time limits that are not positive numbers.
    pub fn from_config(cfg: &LlmConfig) -> Result<Self, LlmError> {
        if cfg.kind.is_local() {
            return Self::local(cfg);
        }
        let config = |detail: String| LlmError::Config { detail };
        let base_url = cfg.effective_base_url();
        let url = reqwest::Url::parse(&base_url)
            .map_err(|e| config(format!("base URL {base_url:?} is not a URL ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(config(format!(
                "base URL {base_url:?} is not an http(s) URL"
            )));
        }
        let Some(host_name) = url.host_str() else {
            return Err(config(format!("base URL {base_url:?} has no host")));
        };
        let host = match url.port_or_known_default() {
            Some(port) => format!("{host_name}:{port}"),
            None => host_name.to_string(),
        };

        let mut models: Vec<String> = Vec::new();
        for name in std::iter::once(&cfg.model).chain(&cfg.fallback_models) {
            let name = name.trim();
            if !name.is_empty() && !models.iter().any(|m| m == name) {
                models.push(name.to_string());
            }
        }
        if cfg.model.trim().is_empty() {
            return Err(config("no model name configured (llm.model)".into()));
        }

        let secs = |value: f64, key: &str| -> Result<Duration, LlmError> {
            Duration::try_from_secs_f64(value)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    config(format!(
                        "llm.timeouts.{key} must be a positive number of seconds, not {value}"
                    ))
                })
        };
        let limits = Limits {
            connect: secs(cfg.timeouts.connect_secs, "connect_secs")?,
            first_byte: secs(cfg.timeouts.first_byte_secs, "first_byte_secs")?,
            idle: secs(cfg.timeouts.idle_secs, "idle_secs")?,
        };

        let mut builder = reqwest::Client::builder()
            .connect_timeout(limits.connect)
            .user_agent(concat!("echo-desk/", env!("CARGO_PKG_VERSION")));
        if is_loopback(host_name) {
            // A local server is never reached through a proxy from the environment.
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| config(format!("cannot set up the HTTP client: {e}")))?;

        let api_key = cfg.api_key.clone().filter(|k| !k.trim().is_empty());
        let provider: Box<dyn Provider> = match cfg.kind {
            ProviderKind::Openai | ProviderKind::Ollama | ProviderKind::Local => {
                Box::new(OpenAi::new(&base_url, api_key))
            }
            ProviderKind::Anthropic => Box::new(Anthropic::new(&base_url, api_key)),
        };
        Ok(Self {
            backend: Backend::Http { http, provider },
            kind: cfg.kind,
            base_url,
            host,
            limits,
            retry: cfg.retry.clone(),
            max_tokens: cfg.answer_limit(),
            temperature: cfg.temperature,
            input_budget: cfg.input_budget(),
            tokenizer: crate::tokens::Tokenizer::for_models(cfg.kind, &models),
            models,
        })
    }

    /// A client of the built-in model whose GGUF file is `cfg.model`. Its window is the
    /// smaller of `llm.context_window` and the model's own; fallback models and network
    /// limits do not apply.
    fn local(cfg: &LlmConfig) -> Result<Self, LlmError> {
        let release_after = (cfg.release_after_secs > 0)
            .then(|| std::time::Duration::from_secs(cfg.release_after_secs));
        let model = crate::local::open(&cfg.model, release_after);
        let model_window = match &model {
            Ok(m) => m.info().window,
            Err(_) => echo_local::MAX_WINDOW,
        };
        let window = (model_window as u32).min(cfg.context_window);
        let cfg = LlmConfig {
            context_window: window,
            ..cfg.clone()
        };
        Ok(Self {
            kind: ProviderKind::Local,
            base_url: String::new(),
            host: crate::local::HOST.to_string(),
            limits: Limits {
                connect: Duration::MAX,
                first_byte: Duration::MAX,
                idle: Duration::MAX,
            },
            retry: RetryConfig {
                max_retries: 0,
                ..cfg.retry.clone()
            },
            max_tokens: cfg.answer_limit(),
            temperature: cfg.temperature,
            input_budget: cfg.input_budget(),
            tokenizer: crate::tokens::Tokenizer::Estimate,
            models: vec![cfg.model.trim().to_string()],
            backend: Backend::Local(model),
        })
    }

    /// Tokens a request may take (`llm.context_window` minus the answer's reserve), as
    /// counted by [`Self::tokenizer`].
    pub fn input_budget(&self) -> usize {
        self.input_budget
    }

    /// How this client's requests are counted against [`Self::input_budget`].
    pub fn tokenizer(&self) -> &crate::tokens::Tokenizer {
        &self.tokenizer
    }

    /// The configured model.
    pub fn primary_model(&self) -> &str {
        self.models.first().map_or("", String::as_str)
    }

    /// The primary model, then the fallback models, in the order they are tried (duplicates
    /// removed).
    pub fn models(&self) -> Vec<String> {
        self.models.clone()
    }

    /// The wire protocol.
    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    /// The server's base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// A request with the configured `max_tokens` and `temperature`.
    pub fn request(&self, messages: Vec<Message>, tools: Vec<ToolSpec>) -> ChatRequest {
        ChatRequest {
            messages,
            tools,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            tool_choice: Default::default(),
        }
    }

    /// Streams one answer. Events go to `on_event` as they arrive. Each model is retried on
    /// retryable errors that happened before any output reached `on_event`; then the fallback
    /// models are tried in order. `cancel` stops the call (also during a backoff wait).
    pub async fn chat(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ChatEvent) + Send),
    ) -> Result<ChatResponse, ChatFailure> {
        // No request asks for more answer than the window keeps free for it.
        let clamped;
        let req = if self.max_tokens > 0 && req.max_tokens > self.max_tokens {
            clamped = ChatRequest {
                max_tokens: self.max_tokens,
                ..req.clone()
            };
            &clamped
        } else {
            req
        };
        let span = tracing::info_span!(
            "llm.call",
            kind = ?self.kind,
            server = %self.host,
            model = %self.primary_model(),
            messages = req.messages.len(),
            tools = req.tools.len(),
        );
        let call = Call {
            sink: Mutex::new(on_event),
            attempts: Mutex::new(Vec::new()),
            req,
            cancel,
        };
        self.chat_models(&call).instrument(span).await
    }

    async fn chat_models(&self, call: &Call<'_>) -> Result<ChatResponse, ChatFailure> {
        let mut previous: Option<(&str, LlmError)> = None;
        for (i, model) in self.models.iter().enumerate() {
            let kind = if i == 0 {
                AttemptKind::First
            } else {
                AttemptKind::Fallback
            };
            if let Some((from, error)) = &previous {
                tracing::warn!(from = %from, to = %model, error = %error, "falling back to the next model");
                call.emit(ChatEvent::FallingBack {
                    from: from.to_string(),
                    to: model.clone(),
                    error: error.to_string(),
                });
            }
            match self.run_model(call, model, kind).await {
                Ok(out) => {
                    return Ok(ChatResponse {
                        text: out.text,
                        reasoning: out.reasoning,
                        tool_calls: out.tool_calls,
                        usage: out.usage,
                        finish_reason: out.finish_reason,
                        model: model.clone(),
                        attempts: call.take_attempts(),
                    });
                }
                Err(mut failure) => {
                    if call.cancel.is_cancelled()
                        && !matches!(failure.error, LlmError::Cancelled { .. })
                    {
                        // Cancelled just as an attempt failed: the caller asked to stop, say so.
                        let server = ServerRef {
                            host: self.host.clone(),
                            model: model.clone(),
                        };
                        failure.error = LlmError::Cancelled { server };
                    }
                    let last = i + 1 == self.models.len();
                    if last || failure.delivered || !failure.error.warrants_fallback() {
                        return Err(ChatFailure {
                            error: failure.error,
                            attempts: call.take_attempts(),
                            partial_text: failure.partial_text,
                        });
                    }
                    previous = Some((model.as_str(), failure.error));
                }
            }
        }
        Err(ChatFailure {
            error: LlmError::Config {
                detail: "no model configured".into(),
            },
            attempts: call.take_attempts(),
            partial_text: String::new(),
        })
    }

    /// All attempts on one model: the first, then retries with exponential backoff.
    async fn run_model(
        &self,
        call: &Call<'_>,
        model: &str,
        first_kind: AttemptKind,
    ) -> Result<Assembled, Failure> {
        let cap = Duration::from_millis(self.retry.max_backoff_ms);
        let backoff = ExponentialBuilder::new()
            .with_min_delay(Duration::from_millis(self.retry.initial_backoff_ms).min(cap))
            .with_factor(2.0)
            .with_max_delay(cap)
            .with_max_times(usize::try_from(self.retry.max_retries).unwrap_or(usize::MAX));
        let mut number = 0u32;
        let mut upcoming = 1u32;
        let token = call.cancel.clone();
        let attempt = || {
            number += 1;
            let kind = if number == 1 {
                first_kind
            } else {
                AttemptKind::Retry
            };
            self.attempt(call, model, number, kind)
        };
        attempt
            .retry(backoff)
            .sleep(move |delay| {
                // The wait ends early on cancellation; the next attempt then sees the token.
                let token = token.clone();
                async move {
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = token.cancelled_owned() => {}
                    }
                }
            })
            .when(Failure::retryable)
            .adjust(move |failure: &Failure, delay| delay.map(|d| honour_retry_after(d, failure.error.retry_after(), cap)))
            .notify(|failure: &Failure, delay| {
                upcoming += 1;
                tracing::warn!(model, attempt = upcoming, delay_ms = delay.as_millis() as u64, error = %failure.error, "retrying");
                call.emit(ChatEvent::Retrying {
                    model: model.to_string(),
                    attempt: upcoming,
                    delay,
                    error: failure.error.to_string(),
                });
            })
            .await
    }

    /// One HTTP attempt, recorded in `call` whatever its outcome.
    async fn attempt(
        &self,
        call: &Call<'_>,
        model: &str,
        number: u32,
        kind: AttemptKind,
    ) -> Result<Assembled, Failure> {
        let span =
            tracing::info_span!("llm.attempt", model = %model, attempt = number, kind = ?kind);
        self.attempt_inner(call, model, kind).instrument(span).await
    }

    async fn attempt_inner(
        &self,
        call: &Call<'_>,
        model: &str,
        kind: AttemptKind,
    ) -> Result<Assembled, Failure> {
        let server = ServerRef {
            host: self.host.clone(),
            model: model.to_string(),
        };
        if call.cancel.is_cancelled() {
            return Err(Failure {
                error: LlmError::Cancelled { server },
                delivered: false,
                partial_text: String::new(),
            });
        }
        let started_at = chrono::Utc::now();
        let clock = std::time::Instant::now();
        let mut sink = |event: ChatEvent| call.emit(event);
        let mut asm = Assembler::new(&mut sink);
        let result = match &self.backend {
            Backend::Http { http, provider } => {
                let exchange = Exchange {
                    http,
                    provider: provider.as_ref(),
                    limits: self.limits,
                    server: &server,
                };
                tokio::select! {
                    biased;
                    () = call.cancel.cancelled() => Err(LlmError::Cancelled { server: server.clone() }),
                    r = exchange.run(call.req, &mut asm) => r,
                }
            }
            Backend::Local(Ok(model)) => {
                crate::local::run(model, &server, call.req, call.cancel, &mut asm).await
            }
            Backend::Local(Err(detail)) => Err(LlmError::Local {
                server: server.clone(),
                detail: detail.clone(),
            }),
        };
        let duration = clock.elapsed();
        call.record(Attempt {
            model: model.to_string(),
            started_at,
            duration,
            usage: asm.usage(),
            model_load: asm.model_load(),
            error: result.as_ref().err().map(ToString::to_string),
            kind,
        });
        match result {
            Ok(()) => {
                tracing::debug!(
                    duration_ms = duration.as_millis() as u64,
                    "attempt succeeded"
                );
                Ok(asm.finish())
            }
            Err(error) => {
                tracing::info!(code = error.code().as_str(), error = %error, "attempt failed");
                Err(Failure {
                    error,
                    delivered: asm.delivered(),
                    partial_text: asm.text().to_string(),
                })
            }
        }
    }
}

/// The state shared by all attempts of one call.
struct Call<'a> {
    sink: Mutex<&'a mut (dyn FnMut(ChatEvent) + Send)>,
    attempts: Mutex<Vec<Attempt>>,
    req: &'a ChatRequest,
    cancel: &'a CancellationToken,
}

impl Call<'_> {
    fn emit(&self, event: ChatEvent) {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        (*sink)(event);
    }

    fn record(&self, attempt: Attempt) {
        self.attempts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(attempt);
    }

    fn take_attempts(&self) -> Vec<Attempt> {
        std::mem::take(&mut *self.attempts.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A failed attempt.
struct Failure {
    error: LlmError,
    /// Whether output had reached the caller (then the attempt is never repeated).
    delivered: bool,
    /// Text passed to the caller before the failure.
    partial_text: String,
}

impl Failure {
    fn retryable(&self) -> bool {
        !self.delivered && self.error.is_retryable()
    }
}

/// The backoff delay, lengthened to the server's `Retry-After` but never beyond `cap`.
fn honour_retry_after(delay: Duration, retry_after: Option<Duration>, cap: Duration) -> Duration {
    match retry_after {
        Some(wait) => delay.max(wait).min(cap),
        None => delay,
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let ms = Duration::from_millis;
        assert_eq!(honour_retry_after(ms(10), None, ms(100)), ms(10));
        assert_eq!(honour_retry_after(ms(10), Some(ms(50)), ms(100)), ms(50));
        assert_eq!(honour_retry_after(ms(10), Some(ms(5000)), ms(100)), ms(100));
        assert_eq!(honour_retry_after(ms(80), Some(ms(20)), ms(100)), ms(80));
    }

    fn config(f: impl FnOnce(&mut LlmConfig)) -> Result<LlmClient, LlmError> {
        let mut cfg = LlmConfig {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..LlmConfig::default()
        };
        f(&mut cfg);
        LlmClient::from_config(&cfg)
    }

    #[test]
    fn config_is_checked() {
        let c = config(|c| {
            c.model = "a".into();
            c.fallback_models = vec!["b".into(), "a".into(), " ".into(), "c".into()];
        });
        let c = c.map_err(|e| e.to_string());
        assert_eq!(
            c.as_ref().map(|c| c.models()),
            Ok(vec!["a".to_string(), "b".into(), "c".into()])
        );
        assert_eq!(
            c.as_ref().map(|c| c.primary_model().to_string()),
            Ok("a".into())
        );
        assert_eq!(c.as_ref().map(|c| c.host.clone()), Ok("127.0.0.1:9".into()));

        let err = |f: fn(&mut LlmConfig)| config(f).err().map(|e| e.code().as_str());
        assert_eq!(err(|c| c.model = " ".into()), Some("llm_config"));
        assert_eq!(
            err(|c| c.base_url = Some("ftp://x".into())),
            Some("llm_config")
        );
        assert_eq!(
            err(|c| c.base_url = Some("not a url".into())),
            Some("llm_config")
        );
        assert_eq!(err(|c| c.timeouts.idle_secs = 0.0), Some("llm_config"));
        assert_eq!(
            err(|c| c.timeouts.connect_secs = f64::NAN),
            Some("llm_config")
        );
        assert_eq!(
            err(|c| c.timeouts.first_byte_secs = -1.0),
            Some("llm_config")
        );
    }

    #[test]
    fn debug_output_has_no_api_key() {
        let c = config(|c| c.api_key = Some("sk-secret-123".into()));
        let text = format!("{c:?}");
        assert!(!text.contains("sk-secret-123"), "{text}");
        assert!(text.contains("LlmClient"), "{text}");
    }

    #[test]
    fn chat_future_is_send() {
        fn send<T: Send>(_: T) {}
        let Ok(c) = config(|_| {}) else {
            panic!("client")
        };
        let req = c.request(vec![Message::user("hi")], Vec::new());
        let cancel = CancellationToken::new();
        let mut sink = |_: ChatEvent| {};
        // Compiles only if the future can move to another thread (e.g. `tokio::spawn`).
        send(c.chat(&req, &cancel, &mut sink));
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("localhost"));
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("[::1]"));
        assert!(!is_loopback("api.openai.com"));
        assert!(!is_loopback("10.0.0.1"));
    }
}
