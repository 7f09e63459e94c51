//! Finding a local Ollama server: its native `GET /api/tags` lists the models it has pulled.
//! Used by settings pages to offer Ollama when it runs on its default port.

use std::time::Duration;

/// Ollama's default address.
pub const OLLAMA_DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// The server root for an `OLLAMA_HOST`-style value (`host:port`, `http://host:port`, or
/// nothing for the default). A wildcard bind address means "this machine".
pub fn ollama_root(host: Option<&str>) -> String {
    let host = host.map(str::trim).filter(|h| !h.is_empty());
    let Some(host) = host else {
        return OLLAMA_DEFAULT_HOST.to_string();
    };
    let with_scheme = if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    with_scheme
        .replace("://0.0.0.0", "://127.0.0.1")
        .trim_end_matches('/')
        .to_string()
}

/// The models an Ollama server at `root` has, or why it could not be asked.
pub async fn ollama_models(root: &str, limit: Duration) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Tags {
        models: Vec<Tag>,
    }
    #[derive(serde::Deserialize)]
    struct Tag {
        name: String,
    }
    let http = reqwest::Client::builder()
        .timeout(limit)
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("{}/api/tags", root.trim_end_matches('/'));
    let response = http.get(&url).send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("{url} answered HTTP {}", response.status()));
    }
    let tags: Tags = response
        .json()
        .await
        .map_err(|e| format!("{url} is not an Ollama tag list: {e}"))?;
    Ok(tags.models.into_iter().map(|t| t.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_values_become_roots() {
        assert_eq!(ollama_root(None), OLLAMA_DEFAULT_HOST);
        assert_eq!(ollama_root(Some(" ")), OLLAMA_DEFAULT_HOST);
        assert_eq!(ollama_root(Some("0.0.0.0:11434")), "http://127.0.0.1:11434");
        assert_eq!(ollama_root(Some("https://box:1/")), "https://box:1");
    }
}
