//! Which tools a request offers when their definitions would crowd a small window.
//!
//! Tool definitions go whole with every request and are never cut (a cut schema is a broken
//! one), so on a small model they can leave no room for the conversation: a 4k window holds
//! little more than the built-in tools' definitions. When the definitions would take more
//! than `context.tools_share` of the input budget, the request offers the tools most related
//! to the turn: those called in the history the model sees first, then by how many of the
//! message's words their name and description share, until the share is used. The trace
//! names the tools left out.
//!
//! A session's next turn offers the same tools again while they still serve it (they fit,
//! and nothing left out was called or is clearly asked for): the tool list is part of the
//! prompt's stable start, and a model with a prefix cache (the built-in one) only
//! processes what follows the first change.

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

/// What a session's last turn was offered, when it had to choose, and what it left out.
#[derive(Clone, Debug)]
pub(crate) struct LastChoice {
    pub offered: Vec<String>,
    pub left_out: Vec<String>,
}

/// Chooses from `tools` (in their usual order) what fits `limit` tokens for a turn whose
/// message is `input`; `called` are tools called in the visible history, `last` the tools
/// the session's previous turn was offered when it had to choose.
pub(crate) fn choose(
    tools: Vec<ToolSpec>,
    input: &str,
    called: &HashSet<String>,
    limit: usize,
    tokenizer: &Tokenizer,
    last: Option<&LastChoice>,
) -> Choice {
    let costs: Vec<usize> = tools.iter().map(|t| tokenizer.count_tool(t)).collect();
    if costs.iter().sum::<usize>() <= limit {
        return Choice {
            tools,
            left_out: Vec::new(),
        };
    }
    let words = fts_query_terms(input);
    let mentions: Vec<Mentions> = tools.iter().map(|t| mentions(&words, t)).collect();
    let mut order: Vec<(usize, usize)> = mentions
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let score = if called.contains(&tools[i].name) {
                usize::MAX
            } else {
                m.words
            };
            (i, score)
        })
        .collect();
    // Most related first; the usual order among equals.
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep = vec![false; tools.len()];
    if let Some(last) = last.filter(|last| serves(last, &tools, &costs, &mentions, called, limit)) {
        for (k, tool) in keep.iter_mut().zip(&tools) {
            *k = last.offered.contains(&tool.name);
        }
    } else {
        let mut used = 0;
        for (i, _) in order {
            if used + costs[i] <= limit {
                used += costs[i];
                keep[i] = true;
            }
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

/// How many of a message's words a tool mentions: in its name and description, and in its
/// name alone.
struct Mentions {
    words: usize,
    in_name: usize,
}

/// Whether the list `last` still serves this turn: it fits, no tool is new since (as
/// `history_search` is once something was compressed), and no tool left out of it was
/// called in the visible history or is clearly asked for, by a word of the message in its
/// name ("fetch" for `web_fetch`) or by two in its description. One word shared with a
/// description is too weak a sign to process the whole conversation again for ("another
/// one?" and a description that says "another host").
fn serves(
    last: &LastChoice,
    tools: &[ToolSpec],
    costs: &[usize],
    mentions: &[Mentions],
    called: &HashSet<String>,
    limit: usize,
) -> bool {
    if tools
        .iter()
        .any(|t| !last.offered.contains(&t.name) && !last.left_out.contains(&t.name))
    {
        return false;
    }
    let offered: Vec<bool> = tools
        .iter()
        .map(|t| last.offered.contains(&t.name))
        .collect();
    let cost: usize = costs
        .iter()
        .zip(&offered)
        .filter(|(_, o)| **o)
        .map(|(c, _)| c)
        .sum();
    cost > 0
        && cost <= limit
        && tools
            .iter()
            .zip(mentions)
            .zip(&offered)
            .all(|((t, m), o)| *o || !(called.contains(&t.name) || m.in_name > 0 || m.words > 1))
}

/// Which of `words` the tool's name and description mention (a word matches one that
/// starts with it or that it starts with, from three letters: "reading" finds "read").
fn mentions(words: &[String], tool: &ToolSpec) -> Mentions {
    let matches = |own: &[String], w: &String| {
        own.iter().any(|o| {
            let (short, long) = if o.len() < w.len() { (o, w) } else { (w, o) };
            short.chars().count() >= 3 && long.starts_with(short.as_str())
        })
    };
    let name = fts_query_terms(&tool.name.replace(['_', '-', '.'], " "));
    let described = fts_query_terms(&tool.description);
    Mentions {
        words: words
            .iter()
            .filter(|w| matches(&name, w) || matches(&described, w))
            .count(),
        in_name: words.iter().filter(|w| matches(&name, w)).count(),
    }
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
        let choice = choose(all, "hello", &HashSet::new(), cost, &t, None);
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
            None,
        );
        let names: Vec<&str> = choice.tools.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["read_file", "web_fetch", "run_command"]);
        assert_eq!(choice.left_out, ["current_time", "memory_recall"]);
    }

    fn names(choice: &Choice) -> Vec<&str> {
        choice.tools.iter().map(|x| x.name.as_str()).collect()
    }

    fn remembered(choice: &Choice) -> LastChoice {
        LastChoice {
            offered: choice.tools.iter().map(|x| x.name.clone()).collect(),
            left_out: choice.left_out.clone(),
        }
    }

    #[test]
    fn the_next_turn_keeps_the_last_list_while_it_serves_and_chooses_again_when_not() {
        let t = Tokenizer::Estimate;
        let one = t.count_tool(&tools()[0]);
        let limit = one * 2 + one / 2;
        let none = HashSet::new();
        let first = choose(tools(), "fetch that page", &none, limit, &t, None);
        assert_eq!(names(&first), ["current_time", "web_fetch"]);
        let last = remembered(&first);
        // A message that relates to no tool: a fresh choice takes the first tools in their
        // usual order; the next turn of the session keeps the list it had.
        let follow_up = "thanks, and the other one?";
        let fresh = choose(tools(), follow_up, &none, limit, &t, None);
        assert_eq!(names(&fresh), ["current_time", "read_file"]);
        let kept = choose(tools(), follow_up, &none, limit, &t, Some(&last));
        assert_eq!(names(&kept), ["current_time", "web_fetch"]);
        assert_eq!(kept.left_out, ["read_file", "memory_recall", "run_command"]);
        // One word that a left-out tool's description shares is too weak to choose again.
        let first_read = choose(tools(), "read the notes file", &none, limit, &t, None);
        let read_list = remembered(&first_read);
        let workspace = "anything else in the workspace?";
        assert_eq!(
            names(&choose(tools(), workspace, &none, limit, &t, None)),
            ["read_file", "run_command"]
        );
        let kept = choose(tools(), workspace, &none, limit, &t, Some(&read_list));
        assert_eq!(names(&kept), ["current_time", "read_file"]);
        // A message that needs a tool the list lacks gets a fresh choice.
        let other = choose(
            tools(),
            "read the notes file",
            &none,
            limit,
            &t,
            Some(&last),
        );
        assert_eq!(names(&other), ["current_time", "read_file"]);
        // So does one whose history called a tool the list lacks.
        let called: HashSet<String> = ["memory_recall".to_string()].into();
        let recalled = choose(tools(), "ok", &called, limit, &t, Some(&last));
        assert_eq!(names(&recalled), ["current_time", "memory_recall"]);
        // And a list that no longer fits.
        let small = choose(tools(), follow_up, &none, one + one / 2, &t, Some(&last));
        assert_eq!(names(&small), ["current_time"]);
        // And a tool that is new since (`history_search` once something was compressed).
        let mut more = tools();
        more.insert(
            0,
            tool("history_search", "Search earlier messages of this chat."),
        );
        let renewed = choose(more, follow_up, &none, limit, &t, Some(&last));
        assert_eq!(names(&renewed), ["history_search", "current_time"]);
    }
}
