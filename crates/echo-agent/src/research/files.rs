//! The person's files as a source of the research graph: when the conversation's project has
//! folders, the files node (in `nodes.rs`) asks the gate about a `search_files` call for a
//! sub-question's words in each folder, takes the files that hold the most of them, shows
//! each to the notes call like a page, and cites the notes as from the person's file
//! (`file://<path>`, shown by its path in the folder).

use super::state::Note;
use echo_tools::FileHit;
use std::path::PathBuf;

/// Most files read per sub-question, over all the project's folders.
const FILES_PER_QUESTION: usize = 2;
/// Most characters of a file shown to the notes call: a longer file is shown by the
/// paragraphs that hold the words.
const SOURCE_CHARS: usize = 12_000;

/// The words of `query` a file is looked for by: its search terms, stop words left out.
pub(super) fn words(query: &str) -> Vec<String> {
    echo_core::text::fts_query_terms(query)
}

/// The `search_files` pattern the gate is asked about: any of `words` (letters and digits
/// only, so none is read as regex syntax).
pub(super) fn pattern(words: &[String]) -> String {
    format!("({})", words.join("|"))
}

/// The files under `folders` that hold at least two of `words` (all of them when there are
/// fewer), best first.
pub(super) async fn found(folders: &[PathBuf], words: &[String]) -> Result<Vec<FileHit>, String> {
    let least = words.len().min(2);
    let mut hits = Vec::new();
    for folder in folders {
        let found =
            echo_tools::files_with_words(folder.clone(), words.to_vec(), least, FILES_PER_QUESTION)
                .await
                .map_err(|e| e.to_string())?;
        hits.extend(found);
    }
    hits.sort_by_key(|h| std::cmp::Reverse((h.words, h.occurrences)));
    hits.truncate(FILES_PER_QUESTION);
    Ok(hits)
}

/// A file as the notes call reads it: whole when it is short, else the paragraphs that hold
/// one of `words`, in order, up to [`SOURCE_CHARS`].
pub(super) fn as_source(hit: &FileHit, words: &[String]) -> String {
    let text = if hit.text.chars().count() <= SOURCE_CHARS {
        hit.text.clone()
    } else {
        let mut shown = String::new();
        for paragraph in hit.text.split("\n\n") {
            let lower = paragraph.to_lowercase();
            if !words.iter().any(|w| lower.contains(w.as_str())) {
                continue;
            }
            if shown.chars().count() + paragraph.chars().count() > SOURCE_CHARS {
                break;
            }
            if !shown.is_empty() {
                shown.push_str("\n\n[…]\n\n");
            }
            shown.push_str(paragraph);
        }
        shown
    };
    format!(
        "File {} (the person's own, in their project's folder):\n{text}",
        hit.shown
    )
}

/// Notes from the quotes kept from `hit`, each citing the file.
pub(super) fn cite(hit: &FileHit, pairs: Vec<(String, String)>) -> Vec<Note> {
    let read_at = echo_core::time::now_rfc3339();
    pairs
        .into_iter()
        .map(|(quote, supports)| Note {
            quote,
            supports,
            url: format!("file://{}", hit.path.display()),
            title: hit.shown.clone(),
            retrieved_at: read_at.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(text: &str) -> FileHit {
        FileHit {
            path: PathBuf::from("/home/a/trip/kyoto.md"),
            shown: "kyoto.md".into(),
            text: text.into(),
            words: 1,
            occurrences: 1,
        }
    }

    #[test]
    fn a_long_file_is_shown_by_the_paragraphs_that_hold_the_words() {
        let filler = "Nothing here. ".repeat(1_000);
        let text = format!(
            "{filler}\n\nThe ryokan in Kyoto costs 30,000 yen.\n\n{filler}\n\nKyoto trains run late."
        );
        let words = words("kyoto ryokan prices");
        assert_eq!(words, ["kyoto", "ryokan", "prices"]);
        let source = as_source(&hit(&text), &words);
        assert_eq!(
            source,
            "File kyoto.md (the person's own, in their project's folder):\nThe ryokan in Kyoto costs \
             30,000 yen.\n\n[…]\n\nKyoto trains run late."
        );
        assert_eq!(pattern(&words), "(kyoto|ryokan|prices)");
        let notes = cite(
            &hit(&text),
            vec![("Kyoto trains run late.".into(), "trains".into())],
        );
        assert_eq!(notes[0].url, "file:///home/a/trip/kyoto.md");
        assert_eq!(notes[0].title, "kyoto.md");
    }
}
