//! Task type of a turn, from cheap markers in its text (no model call), and the model it is
//! routed to (`[routing]`). The trace records both and why.

use echo_core::config::TaskType;

/// Markers of each task type, matched case-insensitively; a marker that starts or ends with a
/// letter or digit must do so at a word boundary ("plan" does not match "planet"), which CJK
/// text, written without spaces, is exempt from.
const CODE: &[&str] = &[
    "```",
    "code",
    "function",
    "bug",
    "compile",
    "compiler",
    "stack trace",
    "traceback",
    "exception",
    "refactor",
    "regex",
    "sql",
    "rust",
    "debug",
    "python",
    "javascript",
    "typescript",
    "cargo",
    "npm",
    "git",
    ".rs",
    ".py",
    ".ts",
    ".js",
    "fn",
    "def",
    "代码",
    "函数",
    "报错",
    "编译",
    "调试",
];
const RESEARCH: &[&str] = &[
    "research",
    "compare",
    "comparison",
    "versus",
    "vs",
    "find out",
    "look up",
    "investigate",
    "sources",
    "pros and cons",
    "what is the difference",
    "differences between",
    "调研",
    "研究",
    "比较",
    "对比",
    "查一下",
    "区别",
];
const PLANNING: &[&str] = &[
    "plan",
    "plans",
    "schedule",
    "roadmap",
    "itinerary",
    "step by step",
    "step-by-step",
    "milestone",
    "agenda",
    "organize my",
    "计划",
    "规划",
    "安排",
    "日程",
    "步骤",
];

/// A turn's task type and the marker that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Classified {
    pub task: TaskType,
    /// The first marker found, or `None` for plain chat.
    pub marker: Option<&'static str>,
}

/// Classifies `input`: the type with the most markers wins; ties go to code, then planning,
/// then research (the more specific need); no marker means chat.
pub(crate) fn classify(input: &str) -> Classified {
    let text = input.to_lowercase();
    let mut best = Classified {
        task: TaskType::Chat,
        marker: None,
    };
    let mut best_hits = 0usize;
    for (task, markers) in [
        (TaskType::Code, CODE),
        (TaskType::Planning, PLANNING),
        (TaskType::Research, RESEARCH),
    ] {
        let found: Vec<&'static str> = markers
            .iter()
            .copied()
            .filter(|m| contains_marker(&text, m))
            .collect();
        if found.len() > best_hits {
            best_hits = found.len();
            best = Classified {
                task,
                marker: found.first().copied(),
            };
        }
    }
    best
}

/// Whether `marker` occurs in `text`, at word boundaries where it begins or ends with a
/// letter or digit of a spaced script.
pub(crate) fn contains_marker(text: &str, marker: &str) -> bool {
    let spaced = |c: char| c.is_alphanumeric() && c.is_ascii();
    let check_start = marker.chars().next().is_some_and(spaced);
    let check_end = marker.chars().last().is_some_and(spaced);
    text.match_indices(marker).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + marker.len()..].chars().next();
        (!check_start || !before.is_some_and(spaced)) && (!check_end || !after.is_some_and(spaced))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_decide_and_plain_talk_is_chat() {
        let cases = [
            ("How are you today?", TaskType::Chat),
            ("Why does this Rust function not compile?", TaskType::Code),
            ("```\nfn main() {}\n```", TaskType::Code),
            (
                "Compare Postgres and SQLite for a desktop app",
                TaskType::Research,
            ),
            (
                "Plan my week: gym, dentist, the tax return",
                TaskType::Planning,
            ),
            ("帮我安排下周的日程", TaskType::Planning),
            ("这段代码为什么报错", TaskType::Code),
            ("对比一下这两款相机的区别", TaskType::Research),
            ("Tell me about the planet Mars", TaskType::Chat),
        ];
        for (input, want) in cases {
            assert_eq!(classify(input).task, want, "{input}");
        }
        assert_eq!(classify("read this traceback").marker, Some("traceback"));
        assert!(contains_marker("fix main.rs now", ".rs"));
        assert!(!contains_marker("a digit here", "git"));
    }
}
