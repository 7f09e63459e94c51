//! What a deletion must leave in no file of the data directory, looked for the ways it could
//! survive there: each word of a text as the search indexes store it (lower-cased and
//! stemmed, apart from the rest of the text), and the bytes of the vector its memory was
//! embedded as.

use std::path::Path;

/// The terms echo-memory's BM25 index makes of `text` (its own tokenizer: lower-cased,
/// diacritics folded, English words Snowball-stemmed). The conversation archive's full-text
/// index (SQLite's `porter` tokenizer) stems the deletion tests' canary words the same way;
/// the tests check that each term is found on disk before a deletion.
pub fn index_terms(text: &str) -> Vec<String> {
    echo_memory::index_terms(text)
}

/// Every file under `dir` that holds one of `text`'s index terms, as `file: term`.
pub fn terms_on_disk(dir: &Path, text: &str) -> Vec<String> {
    index_terms(text)
        .iter()
        .flat_map(|term| {
            super::files_containing(dir, term.as_bytes())
                .into_iter()
                .map(move |file| format!("{file}: {term:?}"))
        })
        .collect()
}

/// The index terms of `text` that no file under `dir` holds: empty when a scan for them
/// after a deletion would find each one that was left.
pub fn terms_missing(dir: &Path, text: &str) -> Vec<String> {
    index_terms(text)
        .into_iter()
        .filter(|term| super::files_containing(dir, term.as_bytes()).is_empty())
        .collect()
}

/// The first 16 bytes (four f32, little-endian, as the vector table stores them) of the vector
/// the local embedder (all-MiniLM-L6-v2 from [`super::embed_model_dir`], loaded the way the
/// engine loads it) gives `text`: what a memory of that text is stored as.
pub fn embedding_prefix(text: &str) -> Vec<u8> {
    let dir = super::embed_model_dir();
    let config = echo_core::config::Config::parse(
        &format!("[memory]\nembedder = \"local\"\nembed_model_dir = {dir:?}\n"),
        Path::new("config.toml"),
    )
    .expect("config");
    let embedder = echo_bench::local_embedder(&config).expect("the local embedder");
    let vectors = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(embedder.embed(&[text.to_string()]))
        .expect("embed");
    vectors[0][..4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}
