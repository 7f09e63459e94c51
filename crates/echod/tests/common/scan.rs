//! What a deletion must leave in no file of the data directory, looked for the ways it could
//! survive there: each word of a text as the search indexes store it (lower-cased and
//! stemmed, apart from the rest of the text), and the bytes of the vector its memory was
//! embedded as.

use std::path::Path;

/// The Snowball English stem (rust-stemmers 1.2, which echo-memory's BM25 index runs) of each
/// word the deletion tests' canaries use. The conversation archive's full-text index (SQLite's,
/// with the `porter` tokenizer) stems each of them the same way. Each stem is its own stem (so
/// a search for it finds exactly the memories holding the word, which the tests check) and
/// starts the word (so the scan finds it in the stored text before a deletion).
const STEMS: &[(&str, &str)] = &[
    ("axolotls", "axolotl"),
    ("jackalopes", "jackalop"),
    ("kumquats", "kumquat"),
    ("marmosets", "marmoset"),
    ("narwhals", "narwhal"),
    ("ocelots", "ocelot"),
    ("pangolins", "pangolin"),
    ("quokkas", "quokka"),
    ("wombats", "wombat"),
    ("xylophones", "xylophon"),
    ("zebroids", "zebroid"),
];

/// The terms echo-memory's BM25 index makes of `text` (`bm25.rs`, `tokens`): the text as
/// `echo_core::text::fts_terms` gives it (CJK runs as bigrams), split at every character
/// that is neither alphanumeric nor a combining mark, lower-cased, and each word of three or
/// more ASCII letters stemmed (Snowball English, from [`STEMS`]). Only ASCII text: folding
/// diacritics away is not reproduced here.
pub fn index_terms(text: &str) -> Vec<String> {
    assert!(
        text.is_ascii(),
        "index_terms reproduces ASCII only: {text:?}"
    );
    echo_core::text::fts_terms(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let lower = w.to_lowercase();
            if lower.len() > 2 && lower.bytes().all(|b| b.is_ascii_lowercase()) {
                STEMS
                    .iter()
                    .find(|(word, stem)| *word == lower || *stem == lower)
                    .map(|(_, stem)| stem.to_string())
                    .unwrap_or_else(|| {
                        panic!("{lower:?} is not in STEMS: add it with its Snowball English stem")
                    })
            } else {
                lower
            }
        })
        .collect()
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
