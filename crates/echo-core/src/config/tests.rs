//! Tests of loading `config.toml`: defaults, precedence, validation and the errors that name
//! the file, line, column and key.

use super::*;
use std::collections::HashMap;

struct MapEnv(HashMap<&'static str, &'static str>);
impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|s| s.to_string())
    }
}

fn check_err(text: &str, expect: &str) {
    let err = Config::parse(text, Path::new("/h/config.toml"))
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.starts_with(expect),
        "got {err:?}, want prefix {expect:?}"
    );
}

#[test]
fn bad_files_name_file_line_and_key() {
    check_err(
        "[agent]\nmax_iterations = \"ten\"\n",
        "/h/config.toml:2:18: agent.max_iterations: invalid type",
    );
    check_err(
        "[llm]\nmodle = \"x\"\n",
        "/h/config.toml:2:1: llm.modle: unknown field `modle`",
    );
    check_err(
        "[llm]\nkind = \"gpt\"\n",
        "/h/config.toml:2:8: llm.kind: unknown variant `gpt`",
    );
    // A misspelt embedder is an error, not quietly the local one.
    check_err(
        "[memory]\nembedder = \"lokal\"\n",
        "/h/config.toml:2:12: memory.embedder: unknown variant `lokal`",
    );
    check_err("[llm\nmodel = 1\n", "/h/config.toml:1:5: ");
    check_err(
        "[llm]\napi_key = \"sk-1\"\n",
        "/h/config.toml:2:1: llm.api_key: unknown field",
    );
    check_err(
        "[context]\ncompress_at = 1.5\n",
        "/h/config.toml:2:15: context.compress_at: 1.5 is not a share",
    );
    check_err(
        "[routing]\ncoding = [\"m\"]\n",
        "/h/config.toml:2:1: routing.coding: unknown field `coding`",
    );
    check_err(
        "[planner]\ntask_types = [\"chatting\"]\n",
        "/h/config.toml:2:15: planner.task_types: unknown variant `chatting`",
    );
}

#[test]
fn precedence_is_flag_then_env_then_file_then_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "[llm]\nkind = \"anthropic\"\nmodel = \"file-model\"\nfallback_models = [\"f1\"]\n",
    )
    .expect("write");
    let home = dir.path().to_str().expect("utf8").to_string();
    let home: &'static str = Box::leak(home.into_boxed_str());

    let env = MapEnv(HashMap::from([(HOME_ENV, home)]));
    let c = Config::load(&Overrides::default(), &env).expect("load");
    assert_eq!(c.llm.kind, ProviderKind::Anthropic);
    assert_eq!(c.llm.model, "file-model");
    assert_eq!(c.llm.fallback_models, vec!["f1"]);
    assert_eq!(c.agent.max_iterations, 10, "default");

    let env = MapEnv(HashMap::from([
        (HOME_ENV, home),
        ("ECHO_LLM_MODEL", "env-model"),
        ("ECHO_LLM_KIND", "openai"),
        ("ECHO_LLM_FALLBACK_MODELS", "a, b,,c"),
        ("ECHO_LLM_API_KEY", "sk-env"),
    ]));
    let c = Config::load(&Overrides::default(), &env).expect("load");
    assert_eq!(c.llm.model, "env-model");
    assert_eq!(c.llm.kind, ProviderKind::Openai);
    assert_eq!(c.llm.fallback_models, vec!["a", "b", "c"]);
    assert_eq!(c.llm.api_key.as_deref(), Some("sk-env"));

    let flags = Overrides {
        model: Some("flag-model".into()),
        ..Default::default()
    };
    let c = Config::load(&flags, &env).expect("load");
    assert_eq!(c.llm.model, "flag-model");
}

#[test]
fn bad_env_values_name_the_variable() {
    let env = MapEnv(HashMap::from([
        (HOME_ENV, "/nonexistent-echo"),
        ("ECHO_LLM_KIND", "gpt"),
    ]));
    let err = Config::load(&Overrides::default(), &env)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with("ECHO_LLM_KIND: unknown provider kind \"gpt\""),
        "{err}"
    );
}

#[test]
fn the_answer_reserve_adapts_to_a_small_window_and_a_window_with_no_room_is_refused() {
    let load = |text: &str, window: Option<&'static str>| {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::write(home.path().join(CONFIG_FILE), text).expect("config");
        let mut vars = HashMap::new();
        if let Some(w) = window {
            vars.insert("ECHO_LLM_CONTEXT_WINDOW", w);
        }
        let flags = Overrides {
            home: Some(home.path().to_path_buf()),
            ..Overrides::default()
        };
        Config::load(&flags, &MapEnv(vars)).map_err(|e| e.to_string())
    };
    // A 4k model with the default max_tokens (4096): a quarter is kept for the answer.
    let c = load("", Some("4096")).expect("loads");
    assert_eq!(
        (
            c.llm.answer_reserve(),
            c.llm.input_budget(),
            c.llm.answer_limit()
        ),
        (1024, 3072, 1024)
    );
    // A big window keeps max_tokens, as before.
    let c = load("", None).expect("loads");
    assert_eq!((c.llm.answer_reserve(), c.llm.answer_limit()), (4096, 4096));
    // An explicit reserve is kept, and answers never ask for more than it.
    let c = load("[llm]\nreserve_output = 2000\n", Some("4096")).expect("loads");
    assert_eq!((c.llm.input_budget(), c.llm.answer_limit()), (2096, 2000));
    // No room for a request: one line naming both settings.
    let err = load("[llm]\nreserve_output = 4000\n", Some("4096")).expect_err("refused");
    assert!(
        err.contains("llm.context_window")
            && err.contains("llm.reserve_output (4000)")
            && err.contains("leaves 96 tokens")
            && !err.contains('\n'),
        "{err}"
    );
    let err = load("", Some("600")).expect_err("refused");
    assert!(
        err.contains("600 minus the answer's reserve (150)"),
        "{err}"
    );
}

#[test]
fn web_search_comes_from_the_file_and_the_environment_and_is_checked() {
    let load = |text: &str, vars: &[(&'static str, &'static str)]| {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::write(home.path().join(CONFIG_FILE), text).expect("config");
        let flags = Overrides {
            home: Some(home.path().to_path_buf()),
            ..Overrides::default()
        };
        Config::load(&flags, &MapEnv(vars.iter().copied().collect())).map_err(|e| e.to_string())
    };
    let c = load("", &[]).expect("default");
    assert_eq!(c.search.kind, SearchKind::None);

    let c = load(
        "[search]\nkind = \"searxng\"\nurl = \"http://127.0.0.1:8888/\"\n",
        &[],
    )
    .expect("searxng from the file");
    assert_eq!(c.search.kind, SearchKind::Searxng);
    assert_eq!(c.search.url.as_deref(), Some("http://127.0.0.1:8888/"));

    let c = load(
        "[search]\nkind = \"searxng\"\nurl = \"http://127.0.0.1:8888/\"\n",
        &[("ECHO_SEARCH_KIND", "Brave"), ("ECHO_SEARCH_API_KEY", "bk")],
    )
    .expect("the environment wins");
    assert_eq!(c.search.kind, SearchKind::Brave);
    assert_eq!(c.search.api_key.as_deref(), Some("bk"));
    assert!(
        !format!("{c:?}").contains("\"bk\""),
        "the key is not in Debug"
    );

    let e = load("[search]\nkind = \"searxng\"\n", &[]).expect_err("no URL");
    assert!(e.contains("needs the instance's URL"), "{e}");
    // The key may be in the keychain, which the engine reads.
    let c = load("", &[("ECHO_SEARCH_KIND", "tavily")]).expect("no key in the environment");
    assert_eq!(c.search.api_key, None);
    assert_eq!(c.search.env_overrides, ["ECHO_SEARCH_KIND"]);
    let e = load("", &[("ECHO_SEARCH_KIND", "bing")]).expect_err("unknown");
    assert!(
        e.starts_with("ECHO_SEARCH_KIND: unknown search kind \"bing\""),
        "{e}"
    );
    let e = load(
        "",
        &[
            ("ECHO_SEARCH_KIND", "searxng"),
            ("ECHO_SEARCH_URL", "ftp://x"),
        ],
    )
    .expect_err("not http");
    assert!(e.starts_with("ECHO_SEARCH_URL:"), "{e}");
}
