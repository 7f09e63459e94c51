//! The text files under a folder that hold the most of some words, for a caller that reads
//! them as sources (research's files node) rather than showing matching lines as
//! `search_files` does. The walk is the same: ignore files honoured, binary and large files
//! skipped.

use super::blocking;
use super::paths::shown_path;
use crate::registry::ToolError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Files larger than this are not read as sources.
const SOURCE_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most files a walk looks at.
const MOST_FILES: usize = 5_000;

/// A text file and how many of the words it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct FileHit {
    /// Where it is.
    pub path: PathBuf,
    /// The path as shown to the person: relative to the folder searched.
    pub shown: String,
    /// Its text (as UTF-8, any invalid bytes replaced).
    pub text: String,
    /// How many of the words (each counted once) it holds.
    pub words: usize,
    /// How many times they occur in all.
    pub occurrences: usize,
}

/// The text files under `root` that hold at least `least` of `words` (whole words, any
/// case; a word with letters outside ASCII, such as a CJK pair, anywhere), most words first,
/// then most occurrences, then path; at most `most`. Each file is read once and scanned for
/// all words in one pass; occurrences are counted only in files that hold enough of them,
/// and only the best `most` files' texts are kept while walking.
pub async fn files_with_words(
    root: PathBuf,
    words: Vec<String>,
    least: usize,
    most: usize,
) -> Result<Vec<FileHit>, ToolError> {
    let patterns: Vec<String> = words
        .iter()
        .map(|w| {
            let bound = if w.is_ascii() { r"\b" } else { "" };
            format!("{bound}{}{bound}", regex::escape(w))
        })
        .collect();
    if patterns.is_empty() {
        return Ok(Vec::new());
    }
    let invalid =
        |e: regex::Error| ToolError::InvalidArguments(format!("the words {words:?}: {e}"));
    let any = regex::RegexSetBuilder::new(&patterns)
        .case_insensitive(true)
        .build()
        .map_err(invalid)?;
    let each: Vec<regex::Regex> = patterns
        .iter()
        .map(|p| regex::RegexBuilder::new(p).case_insensitive(true).build())
        .collect::<Result<_, _>>()
        .map_err(invalid)?;
    let words = Words { any, each };
    blocking(move |stop| Ok(walk(&root, &words, least.max(1), most, stop))).await
}

/// The words looked for: all at once (which of them a text holds), and each alone (to count
/// its occurrences).
struct Words {
    any: regex::RegexSet,
    each: Vec<regex::Regex>,
}

fn walk(root: &Path, words: &Words, least: usize, most: usize, stop: &AtomicBool) -> Vec<FileHit> {
    let mut hits: Vec<FileHit> = Vec::new();
    let files = ignore::WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .take(MOST_FILES);
    for entry in files {
        if stop.load(Ordering::Relaxed) || most == 0 {
            break;
        }
        if entry
            .metadata()
            .is_ok_and(|m| m.len() > SOURCE_MAX_FILE_BYTES)
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let held = words.any.matches(&text).iter().count();
        if held < least {
            continue;
        }
        let occurrences = words.each.iter().map(|p| p.find_iter(&text).count()).sum();
        let worse_than_all = hits.len() == most
            && hits
                .last()
                .is_some_and(|last| (held, occurrences) <= (last.words, last.occurrences));
        if worse_than_all {
            continue;
        }
        hits.push(FileHit {
            path: entry.path().to_path_buf(),
            shown: shown_path(root, entry.path()),
            text: text.into_owned(),
            words: held,
            occurrences,
        });
        hits.sort_by(|a, b| {
            (b.words, b.occurrences)
                .cmp(&(a.words, a.occurrences))
                .then_with(|| a.path.cmp(&b.path))
        });
        hits.truncate(most);
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_files_holding_most_of_the_words_come_first_and_others_stay_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, text: &[u8]| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, text).expect("write");
        };
        write(
            "trip/kyoto.md",
            b"Kyoto hotels for a family: the ryokan in Gion.",
        );
        write(
            "trip/budget.txt",
            b"A family budget; Kyoto once, kyoto twice.",
        );
        write(
            "other.txt",
            b"Nothing about it; familyhood is not a word here.",
        );
        write("binary.bin", b"Kyoto\0family hotels");
        write(".gitignore", b"ignored.md\n");
        write("ignored.md", b"Kyoto family hotels");
        let words = ["kyoto", "family", "hotels"].map(String::from).to_vec();
        let hits = files_with_words(dir.path().to_path_buf(), words, 2, 10)
            .await
            .expect("search");
        let shown: Vec<(&str, usize, usize)> = hits
            .iter()
            .map(|h| (h.shown.as_str(), h.words, h.occurrences))
            .collect();
        assert_eq!(shown, [("trip/kyoto.md", 3, 3), ("trip/budget.txt", 2, 3)]);
        assert!(hits[0].text.contains("ryokan in Gion"));
    }

    #[tokio::test]
    async fn only_the_best_files_are_kept_whatever_order_the_walk_meets_them_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files: [(&str, &str); 5] = [
            ("a.txt", "kyoto family"),
            ("b.txt", "kyoto family hotels"),
            ("c.txt", "kyoto kyoto family family"),
            ("d.txt", "kyoto only"),
            ("e.txt", "Hotels, hotels: family in Kyoto"),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        let words = ["kyoto", "family", "hotels"].map(String::from).to_vec();
        let best = |most| {
            let (dir, words) = (dir.path().to_path_buf(), words.clone());
            async move {
                let hits = files_with_words(dir, words, 2, most).await.expect("search");
                hits.iter()
                    .map(|h| (h.shown.clone(), h.words, h.occurrences))
                    .collect::<Vec<_>>()
            }
        };
        let owned = |v: &[(&str, usize, usize)]| {
            v.iter()
                .map(|(s, w, o)| (s.to_string(), *w, *o))
                .collect::<Vec<_>>()
        };
        assert_eq!(best(2).await, owned(&[("e.txt", 3, 4), ("b.txt", 3, 3)]));
        assert_eq!(
            best(10).await,
            owned(&[
                ("e.txt", 3, 4),
                ("b.txt", 3, 3),
                ("c.txt", 2, 4),
                ("a.txt", 2, 2)
            ])
        );
        assert!(best(0).await.is_empty());
    }
}
