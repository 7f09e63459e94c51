//! Which tools a request offers when their definitions would crowd a small window.
//!
//! Tool definitions go whole with every request and are never cut (a cut schema is a broken
//! one), so on a small model they can leave no room for the conversation: a 4k window holds
//! little more than the built-in tools' definitions. When the definitions would take more
//! than `context.tools_share` of the input budget, the request offers the tools most related
//! to the turn: those called in the history the model sees first, then by how many of the
//! message's words their name and description share, until the share is used. The trace
//! names the tools left out.

use echo_core::ToolSpec;
use echo_core::text::fts_query_terms;
use echo_llm::tokens::Tokenizer;
use std::collections::HashSet;

/// The tools offered, and the names of those left out.
#[derive(Debug)]
pub(crate) struct Choice {
    pub tools: Vec<ToolSpec>,
    pub left_out: Vec<String>,
}

/// Chooses from `tools` (in their usual order) what fits `limit` tokens for a turn whose
/// message is `input`; `called` are tools called in the visible history.
pub(crate) fn choose(
    tools: Vec<ToolSpec>,
    input: &str,
    called: &HashSet<String>,
    limit: usize,
    tokenizer: &Tokenizer,
) -> Choice {
    let costs: Vec<usize> = tools.iter().map(|t| tokenizer.count_tool(t)).collect();
    if costs.iter().sum::<usize>() <= limit {
        return Choice {
            tools,
            left_out: Vec::new(),
        };
    }
    let words = fts_query_terms(input);
    let mut order: Vec<(usize, usize)> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let score = if called.contains(&t.name) {
                usize::MAX
            } else {
                relevance(&words, t)
            };
            (i, score)
        })
        .collect();
    // Most related first; the usual order among equals.
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep = vec![false; tools.len()];
    let mut used = 0;
    for (i, _) in order {
        if used + costs[i] <= limit {
            used += costs[i];
            keep[i] = true;
        }
    }
    let (mut offered, mut left_out) = (Vec::new(), Vec::new());
    for (tool, keep) in tools.into_iter().zip(keep) {
        if keep {
            offered.push(tool);
        } else {
            left_out.push(tool.name);
        }
    }
    Choice {
        tools: offered,
        left_out,
    }
}

/// How many of `words` the tool's name and description mention (a word matches one that
/// starts with it or that it starts with, from three letters: "reading" finds "read").
fn relevance(words: &[String], tool: &ToolSpec) -> usize {
    let own: Vec<String> = fts_query_terms(&format!(
        "{} {}",
        tool.name.replace(['_', '-', '.'], " "),
        tool.description
    ));
    words
        .iter()
        .filter(|w| {
            own.iter().any(|o| {
                let (short, long) = if o.len() < w.len() { (o, *w) } else { (*w, o) };
                short.chars().count() >= 3 && long.starts_with(short.as_str())
            })
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string", "description": "an argument with a fairly long description"}}}),
        }
    }

    fn tools() -> Vec<ToolSpec> {
        vec![
            tool("current_time", "The current date and time."),
            tool("read_file", "Read a text file from the workspace."),
            tool("web_fetch", "Fetch a web page and return its text."),
            tool("memory_recall", "Search long-term memory about the user."),
            tool("run_command", "Run a shell command in the workspace."),
        ]
    }

    #[test]
    fn everything_is_offered_when_it_fits() {
        let t = Tokenizer::Estimate;
        let all = tools();
        let cost: usize = all.iter().map(|x| t.count_tool(x)).sum();
        let choice = choose(all, "hello", &HashSet::new(), cost, &t);
        assert_eq!(choice.tools.len(), 5);
        assert!(choice.left_out.is_empty());
    }

    #[test]
    fn a_small_share_keeps_the_related_and_already_called_tools_in_their_order() {
        let t = Tokenizer::Estimate;
        let one = t.count_tool(&tools()[0]);
        let called: HashSet<String> = ["run_command".to_string()].into();
        let choice = choose(
            tools(),
            "please read the notes file and fetch that page",
            &called,
            one * 3 + one / 2,
            &t,
        );
        let names: Vec<&str> = choice.tools.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["read_file", "web_fetch", "run_command"]);
        assert_eq!(choice.left_out, ["current_time", "memory_recall"]);
    }
}
