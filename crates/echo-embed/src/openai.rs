//! The remote embedder: any server with an OpenAI-compatible `POST {base_url}/embeddings`
//! (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, …). Inputs go in batches; answers are put back
//! in input order by their `index`, checked against the promised dimension and L2-normalised.

use crate::Embedder;
use crate::error::{EmbedError, one_line};
use serde::Deserialize;
use std::time::Duration;
use tracing::Instrument;

/// Inputs sent in one request (OpenAI accepts up to 2048; smaller servers choke earlier).
pub const MAX_INPUTS_PER_REQUEST: usize = 256;

/// Time allowed to open a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time allowed for one whole request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest server message kept in an error.
const MAX_MESSAGE_CHARS: usize = 300;

/// An embedder backed by an OpenAI-compatible embeddings endpoint.
#[derive(Clone)]
pub struct OpenAiEmbedder {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    dim: usize,
    /// `embedding server HOST:PORT (model NAME)`, for error messages.
    server: String,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The API key stays out of debug output.
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    /// An embedder that posts to `{base_url}/embeddings` (e.g. `https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1`) asking for `model`, with `Authorization: Bearer {api_key}`
    /// when a key is given; `dim` is the model's embedding length, checked on every answer.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        dim: usize,
    ) -> Result<Self, EmbedError> {
        let invalid = |detail: String| EmbedError::InvalidUrl {
            url: base_url.into(),
            detail,
        };
        let parsed = reqwest::Url::parse(base_url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "scheme {} is not http or https",
                parsed.scheme()
            )));
        }
        let host = match (parsed.host_str(), parsed.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => return Err(invalid("no host".into())),
        };
        if dim == 0 {
            return Err(invalid("the embedding dimension must be positive".into()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| invalid(one_line(&e.to_string(), MAX_MESSAGE_CHARS)))?;
        Ok(Self {
            http,
            url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            model: model.to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            dim,
            server: format!("embedding server {host} (model {model})"),
        })
    }

    /// One request for at most [`MAX_INPUTS_PER_REQUEST`] inputs.
    async fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({ "model": self.model, "input": texts });
        let mut req = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| EmbedError::Unreachable {
            server: self.server.clone(),
            detail: one_line(&error_chain(&e), MAX_MESSAGE_CHARS),
        };
        let response = req.send().await.map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(EmbedError::Status {
                server: self.server.clone(),
                status: status.as_u16(),
                message: error_message(&bytes, status),
            });
        }
        let bad = |detail: String| EmbedError::BadResponse {
            server: self.server.clone(),
            detail,
        };
        let parsed: EmbeddingsResponse = serde_json::from_slice(&bytes)
            .map_err(|e| bad(one_line(&e.to_string(), MAX_MESSAGE_CHARS)))?;
        if parsed.data.len() != texts.len() {
            return Err(bad(format!(
                "{} embeddings for {} inputs",
                parsed.data.len(),
                texts.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in parsed.data.into_iter().enumerate() {
            let i = item.index.unwrap_or(position);
            let slot = out
                .get_mut(i)
                .ok_or_else(|| bad(format!("index {i} out of range")))?;
            if slot.is_some() {
                return Err(bad(format!("index {i} appears twice")));
            }
            if item.embedding.len() != self.dim {
                return Err(EmbedError::DimensionMismatch {
                    source_name: self.server.clone(),
                    expected: self.dim,
                    got: item.embedding.len(),
                });
            }
            let mut v = item.embedding;
            if !normalize(&mut v) {
                return Err(bad(format!("embedding {i} is zero or not finite")));
            }
            *slot = Some(v);
        }
        // Every slot is filled: as many items as inputs, no index twice.
        Ok(out.into_iter().flatten().collect())
    }
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn dim(&self) -> usize {
        self.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let span = tracing::debug_span!("embed", model = %self.model, inputs = texts.len());
        async {
            let mut out = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(MAX_INPUTS_PER_REQUEST) {
                out.extend(self.request(chunk).await?);
            }
            Ok(out)
        }
        .instrument(span)
        .await
    }
}

/// Divides `v` by its L2 norm; `false` when the norm is zero or not finite.
fn normalize(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return false;
    }
    for x in v.iter_mut() {
        *x = (f64::from(*x) / norm) as f32;
    }
    true
}

/// The server's error message: `error.message` (OpenAI), `error` as a string (Ollama) or the
/// body as text, one line and shortened; the status text when the body is empty.
fn error_message(body: &[u8], status: reqwest::StatusCode) -> String {
    let from_json = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| match v.get("error") {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(e) => e.get("message").and_then(|m| m.as_str()).map(String::from),
            None => v.get("message").and_then(|m| m.as_str()).map(String::from),
        });
    let text = from_json.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let text = one_line(&text, MAX_MESSAGE_CHARS);
    if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no message")
            .to_string()
    } else {
        text
    }
}

/// A reqwest error with its causes (`error sending request: connection refused`).
fn error_chain(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        format!("no answer within {} s", REQUEST_TIMEOUT.as_secs())
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_finds_the_server_text() {
        let check = |body: &str, expect: &str| {
            assert_eq!(
                error_message(body.as_bytes(), reqwest::StatusCode::BAD_REQUEST),
                expect,
                "body {body:?}"
            );
        };
        check(r#"{"error":{"message":"bad key","type":"x"}}"#, "bad key");
        check(r#"{"error":"model not found"}"#, "model not found");
        check("upstream\nexploded", "upstream exploded");
        check("", "Bad Request");
    }

    #[test]
    fn normalize_refuses_zero_and_nan() {
        let mut v = vec![3.0, 4.0];
        assert!(normalize(&mut v));
        assert_eq!(v, vec![0.6, 0.8]);
        assert!(!normalize(&mut [0.0, 0.0]));
        assert!(!normalize(&mut [f32::NAN, 1.0]));
    }
}
