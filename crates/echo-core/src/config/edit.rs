//! Editing `config.toml` from the settings pages: the model provider as a settings page edits
//! it ([`ProviderSettings`]), and the writers that save it, the desktop shortcut and the MCP
//! servers back into the file. Only the keys a writer owns change; the rest of the file,
//! comments included, stays as the person wrote it. The API key is not part of this: it lives
//! in the OS keychain. Front ends reach these writers through echo-agent's `Api`, never
//! directly.
use super::{
    CONFIG_FILE, Config, ConfigError, LlmConfig, McpServerConfig, ProviderKind, SearchConfig,
    check_url,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Longest model name accepted (real ones are far shorter).
const MAX_MODEL_NAME: usize = 200;

/// Which server and models the assistant talks to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Server base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Main model.
    pub model: String,
    /// Models tried in order on the same server when the main one keeps failing.
    pub fallback_models: Vec<String>,
}

impl ProviderSettings {
    /// The settings in force in `llm` (the base URL made explicit).
    pub fn of(llm: &LlmConfig) -> ProviderSettings {
        ProviderSettings {
            kind: llm.kind,
            base_url: llm.effective_base_url(),
            model: llm.model.clone(),
            fallback_models: llm.fallback_models.clone(),
        }
    }

    /// Trimmed and checked: an http(s) base URL, a model name, fallback names without
    /// blanks or repeats. The error names the field.
    pub fn normalized(&self) -> Result<ProviderSettings, ConfigError> {
        let bad = |field: &str, message: String| ConfigError::Override {
            source_name: field.to_string(),
            message,
        };
        if self.kind.is_local() {
            // The built-in model: no server, and the model is a GGUF file's path or a
            // catalog name; fallbacks do not apply.
            let model = self.model.trim();
            if model.is_empty() || model.len() > 4096 || model.chars().any(char::is_control) {
                return Err(bad(
                    "model",
                    "the built-in model needs a GGUF file path or a catalog name".into(),
                ));
            }
            return Ok(ProviderSettings {
                kind: self.kind,
                base_url: String::new(),
                model: model.to_string(),
                fallback_models: Vec::new(),
            });
        }
        let base_url = check_url(&self.base_url, "base_url")?
            .trim_end_matches('/')
            .to_string();
        let model = check_model(&self.model).map_err(|m| bad("model", m))?;
        let mut fallback_models: Vec<String> = Vec::new();
        for name in &self.fallback_models {
            let name = check_model(name).map_err(|m| bad("fallback_models", m))?;
            if name != model && !fallback_models.contains(&name) {
                fallback_models.push(name);
            }
        }
        Ok(ProviderSettings {
            kind: self.kind,
            base_url,
            model,
            fallback_models,
        })
    }

    /// `llm` with these settings applied (limits, retries and the key stay as they were).
    pub fn apply(&self, llm: &LlmConfig) -> LlmConfig {
        LlmConfig {
            kind: self.kind,
            base_url: Some(self.base_url.clone()),
            model: self.model.clone(),
            fallback_models: self.fallback_models.clone(),
            ..llm.clone()
        }
    }
}

fn check_model(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("a model name is needed".into());
    }
    if name.len() > MAX_MODEL_NAME || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{name:?} is not a model name (no spaces, at most {MAX_MODEL_NAME} characters)"
        ));
    }
    Ok(name.to_string())
}

/// Writes `settings` into `<home>/config.toml` under `[llm]`, keeping everything else in the
/// file (see [`save_keys`]).
pub fn save_provider(home: &Path, settings: &ProviderSettings) -> Result<(), ConfigError> {
    let settings = settings.normalized()?;
    let fallbacks: toml_edit::Array = settings
        .fallback_models
        .iter()
        .map(String::as_str)
        .collect();
    save_keys(
        home,
        "llm",
        vec![
            ("kind", toml_edit::value(settings.kind.as_str())),
            ("base_url", toml_edit::value(settings.base_url.as_str())),
            ("model", toml_edit::value(settings.model.as_str())),
            ("fallback_models", toml_edit::value(fallbacks)),
        ],
    )
}

/// Writes `[search]`'s service, URL (removed when there is none) and result count; the key
/// is never written (the keychain keeps it).
pub fn save_search(home: &Path, search: &SearchConfig) -> Result<(), ConfigError> {
    let mut search = search.clone();
    search.check()?;
    save_keys(
        home,
        "search",
        vec![
            ("kind", toml_edit::value(search.kind.as_str())),
            (
                "url",
                search
                    .url
                    .as_deref()
                    .map_or(toml_edit::Item::None, toml_edit::value),
            ),
            (
                "max_results",
                toml_edit::value(i64::from(search.max_results)),
            ),
        ],
    )
}

/// Saves the quick-ask shortcut under `[desktop]`.
pub fn save_quick_ask_shortcut(home: &Path, shortcut: &str) -> Result<(), ConfigError> {
    save_keys(
        home,
        "desktop",
        vec![("quick_ask_shortcut", toml_edit::value(shortcut.trim()))],
    )
}

/// Saves `[trace] capture` and `retention_days`.
pub fn save_trace_settings(
    home: &Path,
    capture: bool,
    retention_days: u32,
    notice_rate: f64,
) -> Result<(), ConfigError> {
    save_keys(
        home,
        "trace",
        vec![
            ("capture", toml_edit::value(capture)),
            (
                "retention_days",
                toml_edit::value(i64::from(retention_days)),
            ),
            ("notice_rate", toml_edit::value(notice_rate)),
        ],
    )
}

/// Saves `[memory] ask_before_remembering`, keeping the rest of the file.
pub fn save_memory_settings(home: &Path, ask_before_remembering: bool) -> Result<(), ConfigError> {
    save_keys(
        home,
        "memory",
        vec![(
            "ask_before_remembering",
            toml_edit::value(ask_before_remembering),
        )],
    )
}

/// Replaces the `[[tools.mcp]]` servers with `servers` (unset fields left out), keeping the
/// rest of the file.
pub fn save_mcp_servers(home: &Path, servers: &[McpServerConfig]) -> Result<(), ConfigError> {
    fn strings(list: &[String]) -> toml_edit::Item {
        toml_edit::value(
            list.iter()
                .map(String::as_str)
                .collect::<toml_edit::Array>(),
        )
    }
    fn map(pairs: &std::collections::BTreeMap<String, String>) -> toml_edit::Item {
        let mut table = toml_edit::InlineTable::new();
        for (k, v) in pairs {
            table.insert(k, v.as_str().into());
        }
        toml_edit::value(table)
    }
    let mut list = toml_edit::ArrayOfTables::new();
    for server in servers {
        let mut t = toml_edit::Table::new();
        t.insert("name", toml_edit::value(server.name.as_str()));
        if let Some(command) = &server.command {
            t.insert("command", toml_edit::value(command.as_str()));
        }
        if !server.args.is_empty() {
            t.insert("args", strings(&server.args));
        }
        if !server.env.is_empty() {
            t.insert("env", map(&server.env));
        }
        if let Some(url) = &server.url {
            t.insert("url", toml_edit::value(url.as_str()));
        }
        if !server.headers.is_empty() {
            t.insert("headers", map(&server.headers));
        }
        if !server.enabled {
            t.insert("enabled", toml_edit::value(false));
        }
        list.push(t);
    }
    save_keys(
        home,
        "tools",
        vec![("mcp", toml_edit::Item::ArrayOfTables(list))],
    )
}

/// Sets `entries` in `[table]` of `<home>/config.toml` (an entry of `Item::None` removes its
/// key), keeping everything else in the file, comments included. The result is parsed as a whole before it replaces the file
/// (atomically, by rename), so a save never leaves a config that fails to load.
fn save_keys(
    home: &Path,
    table: &str,
    entries: Vec<(&str, toml_edit::Item)>,
) -> Result<(), ConfigError> {
    let path = home.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    // A file that does not parse is reported the way loading it would.
    Config::parse(&text, &path)?;
    let not_editable = |message: String| ConfigError::File {
        path: path.clone(),
        line: 1,
        column: 1,
        key: table.to_string(),
        message,
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| not_editable(e.message().to_string()))?;
    let section = doc
        .entry(table)
        .or_insert_with(toml_edit::table)
        .as_table_like_mut()
        .ok_or_else(|| not_editable(format!("`{table}` is not a table")))?;
    for (key, item) in entries {
        if item.is_none() {
            section.remove(key);
            continue;
        }
        match section.get_mut(key) {
            // Replace the value only: the key's comments and the value's trailing comment stay.
            Some(slot) => {
                let decor = slot.as_value().map(|v| v.decor().clone());
                *slot = item;
                if let (Some(decor), Some(value)) = (decor, slot.as_value_mut()) {
                    *value.decor_mut() = decor;
                }
            }
            None => {
                section.insert(key, item);
            }
        }
    }
    let new_text = doc.to_string();
    Config::parse(&new_text, &path)?;
    let io = |e: std::io::Error| ConfigError::Read {
        path: path.clone(),
        source: e,
    };
    std::fs::create_dir_all(home).map_err(io)?;
    let tmp = home.join(format!(".{CONFIG_FILE}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, new_text).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ProviderSettings {
        ProviderSettings {
            kind: ProviderKind::Openai,
            base_url: " https://api.example.com/v1/ ".into(),
            model: " gpt-x ".into(),
            fallback_models: vec!["gpt-y".into(), "gpt-x".into(), " gpt-y".into()],
        }
    }

    #[test]
    fn normalizing_trims_and_drops_repeats() {
        let s = settings().normalized().expect("valid");
        assert_eq!(s.base_url, "https://api.example.com/v1");
        assert_eq!(s.model, "gpt-x");
        assert_eq!(s.fallback_models, ["gpt-y"]);
    }

    #[test]
    fn bad_settings_name_the_field() {
        let mut s = settings();
        s.base_url = "ftp://x".into();
        let e = s.normalized().expect_err("bad url").to_string();
        assert!(e.starts_with("base_url:"), "{e}");
        let mut s = settings();
        s.model = "two words".into();
        let e = s.normalized().expect_err("bad model").to_string();
        assert!(e.starts_with("model:"), "{e}");
        let mut s = settings();
        s.fallback_models = vec![String::new()];
        let e = s.normalized().expect_err("blank fallback").to_string();
        assert!(e.starts_with("fallback_models:"), "{e}");
    }

    #[test]
    fn saving_keeps_the_rest_of_the_file_and_loads_back() {
        let home = tempfile::tempdir().expect("tempdir");
        let original = "# my settings\n[llm]\n# the server I use\nkind = \"ollama\"\nmax_tokens = 1234 # long answers\n\n[memory]\nextraction = false\n";
        std::fs::write(home.path().join(CONFIG_FILE), original).expect("write");
        save_provider(home.path(), &settings()).expect("save");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        for kept in [
            "# my settings",
            "# the server I use",
            "max_tokens = 1234 # long answers",
            "extraction = false",
        ] {
            assert!(text.contains(kept), "lost {kept:?}:\n{text}");
        }
        let c = Config::parse(&text, Path::new("config.toml")).expect("loads");
        assert_eq!(c.llm.kind, ProviderKind::Openai);
        assert_eq!(
            c.llm.base_url.as_deref(),
            Some("https://api.example.com/v1")
        );
        assert_eq!(c.llm.model, "gpt-x");
        assert_eq!(c.llm.fallback_models, ["gpt-y"]);
        assert_eq!(c.llm.max_tokens, 1234);
        assert!(!c.memory.extraction);
    }

    #[test]
    fn saving_creates_a_missing_file() {
        let home = tempfile::tempdir().expect("tempdir");
        save_provider(home.path(), &settings()).expect("save");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        let c = Config::parse(&text, Path::new("config.toml")).expect("loads");
        assert_eq!(
            ProviderSettings::of(&c.llm),
            settings().normalized().expect("valid")
        );
    }

    #[test]
    fn search_settings_save_without_a_key_and_an_unset_url_is_removed() {
        use crate::vocab::SearchKind;
        let home = tempfile::tempdir().expect("tempdir");
        let path = home.path().join(CONFIG_FILE);
        std::fs::write(&path, "[search]\n# mine\nkind = \"none\"\n").expect("write");
        let mut search = SearchConfig {
            kind: SearchKind::Searxng,
            url: Some("http://127.0.0.1:8888/".into()),
            max_results: 5,
            api_key: Some("sk-never-in-the-file".into()),
            env_overrides: Vec::new(),
        };
        save_search(home.path(), &search).expect("save");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.contains("# mine") && !text.contains("sk-never"),
            "{text}"
        );
        let loaded = Config::parse(&text, &path).expect("loads").search;
        assert_eq!(loaded.kind, SearchKind::Searxng);
        assert_eq!(loaded.url.as_deref(), Some("http://127.0.0.1:8888/"));
        assert_eq!(loaded.max_results, 5);

        search.kind = SearchKind::Brave;
        search.url = None;
        save_search(home.path(), &search).expect("save");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains("url"), "{text}");

        search.kind = SearchKind::Searxng;
        let e = save_search(home.path(), &search).expect_err("SearXNG needs its URL");
        assert!(e.to_string().contains("URL"), "{e}");
    }

    #[test]
    fn the_shortcut_lands_under_desktop() {
        let home = tempfile::tempdir().expect("tempdir");
        save_quick_ask_shortcut(home.path(), " Alt+Space ").expect("save");
        save_provider(home.path(), &settings()).expect("save");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        let c = Config::parse(&text, Path::new("config.toml")).expect("loads");
        assert_eq!(c.desktop.quick_ask_shortcut, "Alt+Space");
        assert_eq!(c.llm.model, "gpt-x");
    }

    #[test]
    fn mcp_servers_are_replaced_as_a_list_and_load_back() {
        let home = tempfile::tempdir().expect("tempdir");
        let original = "[tools]\noutput_cap_chars = 999\n\n[[tools.mcp]]\nname = \"old\"\ncommand = \"old-server\"\n";
        std::fs::write(home.path().join(CONFIG_FILE), original).expect("write");
        let servers = vec![
            McpServerConfig {
                name: "files".into(),
                command: Some("npx".into()),
                args: vec!["-y".into(), "server-filesystem".into()],
                env: [("TOKEN".to_string(), "t-1".to_string())].into(),
                url: None,
                headers: Default::default(),
                enabled: true,
            },
            McpServerConfig {
                name: "tracker".into(),
                command: None,
                args: vec![],
                env: Default::default(),
                url: Some("http://127.0.0.1:8931/mcp".into()),
                headers: [("Authorization".to_string(), "Bearer x".to_string())].into(),
                enabled: false,
            },
        ];
        save_mcp_servers(home.path(), &servers).expect("save");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        let c = Config::parse(&text, Path::new("config.toml")).expect("loads");
        assert_eq!(c.tools.mcp, servers, "{text}");
        assert_eq!(c.tools.output_cap_chars, 999);
        save_mcp_servers(home.path(), &[]).expect("save none");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        let c = Config::parse(&text, Path::new("config.toml")).expect("loads");
        assert!(c.tools.mcp.is_empty(), "{text}");
    }

    #[test]
    fn a_broken_file_is_reported_and_left_alone() {
        let home = tempfile::tempdir().expect("tempdir");
        let broken = "[llm]\nkind = \n";
        std::fs::write(home.path().join(CONFIG_FILE), broken).expect("write");
        let e = save_provider(home.path(), &settings()).expect_err("broken file");
        assert!(e.to_string().contains("config.toml:2"), "{e}");
        let text = std::fs::read_to_string(home.path().join(CONFIG_FILE)).expect("read");
        assert_eq!(text, broken);
    }
}
