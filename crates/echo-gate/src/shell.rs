//! Reading a shell command line the way the gate needs it: split into simple commands at
//! control operators, words unquoted, wrappers (`sudo`, `env X=1`, `sh -c '…'`) looked
//! through. Deliberately conservative: anything that might start a new command starts one.

use crate::patterns::{self, PatternError, SafetyPatterns};

/// One simple command: program and arguments, with wrappers removed.
pub(crate) type Segment = Vec<String>;

/// Splits `command` into simple commands. Operators inside single or double quotes do not
/// split, except that `$(…)` and backticks inside double quotes do (they run commands).
pub(crate) fn segments(command: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for raw in split_operators(command) {
        push_segment(&raw, &mut out, 0);
    }
    out
}

fn push_segment(raw: &str, out: &mut Vec<Segment>, depth: usize) {
    let words = shlex::split(raw).unwrap_or_else(|| {
        raw.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    });
    let words = unwrap_wrappers(words);
    if words.is_empty() {
        return;
    }
    // `sh -c 'rm -rf ~'` runs its argument as a command line.
    let program = basename(&words[0]);
    if depth < 4
        && matches!(program, "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish")
        && let Some(pos) = words
            .iter()
            .position(|w| w == "-c" || w == "-lc" || w == "-ic")
        && let Some(inner) = words.get(pos + 1)
    {
        for piece in split_operators(inner) {
            push_segment(&piece, out, depth + 1);
        }
    }
    out.push(words);
}

/// Removes leading environment assignments and command wrappers.
fn unwrap_wrappers(mut words: Vec<String>) -> Vec<String> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        let is_assignment = first.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let program = basename(first);
        if is_assignment {
            words.remove(0);
        } else if matches!(
            program,
            "sudo"
                | "doas"
                | "env"
                | "nohup"
                | "time"
                | "exec"
                | "command"
                | "builtin"
                | "nice"
                | "ionice"
                | "stdbuf"
                | "xargs"
        ) {
            words.remove(0);
            // Options of the wrapper (`sudo -u x`, `nice -n 5`, `env -i`) are skipped; a
            // wrapper option that takes a value swallows the next word as well.
            while let Some(w) = words.first() {
                if !w.starts_with('-') {
                    break;
                }
                let takes_value = matches!(
                    w.as_str(),
                    "-u" | "-g" | "-n" | "-C" | "-I" | "-L" | "-P" | "-c" | "-p"
                );
                words.remove(0);
                if takes_value && !words.is_empty() {
                    words.remove(0);
                }
            }
        } else if program == "timeout" {
            words.remove(0);
            while words.first().is_some_and(|w| w.starts_with('-')) {
                words.remove(0);
            }
            if !words.is_empty() {
                words.remove(0); // the duration
            }
        } else {
            return words;
        }
    }
}

/// The program name without its directory (`/bin/rm` → `rm`).
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Splits at `;`, `&`, `|`, newlines, parentheses and braces outside quotes, and pulls out
/// `$(…)` and backtick bodies (also inside double quotes) as pieces of their own.
fn split_operators(command: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut single = false;
    let mut double = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '\\' if !single => {
                current.push(c);
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            '`' if !single => pieces.push(std::mem::take(&mut current)),
            '$' if !single && chars.peek() == Some(&'(') => {
                chars.next();
                pieces.push(std::mem::take(&mut current));
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' if !single && !double => {
                pieces.push(std::mem::take(&mut current))
            }
            ')' if double => pieces.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    pieces.push(current);
    pieces
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Targets whose recursive removal or permission change wrecks the system or the home.
fn critical_target(word: &str) -> bool {
    let w = word.trim();
    let w = if w.len() > 1 {
        w.trim_end_matches('/')
    } else {
        w
    };
    let w = w.strip_suffix("/*").unwrap_or(w);
    let w = if w.is_empty() { "/" } else { w };
    matches!(
        w,
        "/" | "*"
            | "~"
            | "$HOME"
            | "${HOME}"
            | "\"$HOME\""
            | "/home"
            | "/root"
            | "/etc"
            | "/usr"
            | "/bin"
            | "/sbin"
            | "/boot"
            | "/dev"
            | "/lib"
            | "/lib32"
            | "/lib64"
            | "/opt"
            | "/srv"
            | "/sys"
            | "/proc"
            | "/var"
            | "/Users"
            | "/System"
            | "/Library"
            | "/Applications"
    ) || w.starts_with("/home/") && w.matches('/').count() == 2
        || w.starts_with("/Users/") && w.matches('/').count() == 2
}

fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter().any(|a| {
        a == long
            || (a.starts_with('-') && !a.starts_with("--") && a.chars().skip(1).any(|c| c == short))
    })
}

/// The hard-deny pattern `command` matches, if any, as a short description. These are
/// refused whatever the rules say. `Err` when the hard-deny patterns could not be compiled:
/// the caller must then refuse the command (fail closed), never run it unchecked.
pub(crate) fn hard_deny(command: &str) -> Result<Option<String>, &'static PatternError> {
    Ok(hard_deny_with(patterns::safety()?, command))
}

fn hard_deny_with(patterns: &SafetyPatterns, command: &str) -> Option<String> {
    if let Some((_, what)) = patterns
        .hard_deny
        .iter()
        .find(|(re, _)| re.is_match(command))
    {
        return Some((*what).to_string());
    }
    for seg in segments(command) {
        let program = basename(&seg[0]);
        let args = &seg[1..];
        let targets = || args.iter().filter(|a| !a.starts_with('-'));
        match program {
            "rm" => {
                if args.iter().any(|a| a == "--no-preserve-root") {
                    return Some("`rm --no-preserve-root`".into());
                }
                let recursive =
                    has_flag(args, 'r', "--recursive") || has_flag(args, 'R', "--recursive");
                if let Some(t) = targets().find(|t| critical_target(t)).filter(|_| recursive) {
                    return Some(format!("recursive removal of `{t}`"));
                }
            }
            "chmod" | "chown" | "chgrp" => {
                if has_flag(args, 'R', "--recursive")
                    && let Some(t) = targets().skip(1).find(|t| critical_target(t))
                {
                    return Some(format!("recursive `{program}` of `{t}`"));
                }
            }
            p if p.starts_with("mkfs") || matches!(p, "mke2fs" | "wipefs" | "mkswap") => {
                return Some(format!("formatting a file system (`{p}`)"));
            }
            "dd" => {
                if let Some(dev) = args.iter().find_map(|a| a.strip_prefix("of=/dev/"))
                    && !matches!(dev, "null" | "zero" | "stdout" | "stderr")
                {
                    return Some(format!("`dd` onto the device /dev/{dev}"));
                }
            }
            "shred" => {
                if let Some(t) = targets().find(|t| t.starts_with("/dev/")) {
                    return Some(format!("`shred` of the device {t}"));
                }
            }
            _ => {}
        }
    }
    None
}

/// Words of `command` that look like file paths (contain `/`, start with `~` or `.`), for
/// the path policy's secret check.
pub(crate) fn path_words(command: &str) -> Vec<String> {
    segments(command)
        .into_iter()
        .flat_map(|seg| seg.into_iter().skip(1))
        .flat_map(|w| {
            // `--file=~/.ssh/id_rsa`, `of=/x`, `>~/.aws/credentials`
            let value = w.rsplit(['=', '>', '<']).next().unwrap_or(&w).to_string();
            [w, value]
        })
        .filter(|w| {
            w.contains('/') || w.starts_with('~') || w.starts_with(".env") || w.starts_with('.')
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_split_at_operators_and_look_through_wrappers() {
        let segs = segments("cd /tmp && FOO=1 sudo -u root rm -rf x; echo \"a;b\" | sh -c 'ls -l'");
        let firsts: Vec<&str> = segs.iter().map(|s| s[0].as_str()).collect();
        assert_eq!(firsts, ["cd", "rm", "echo", "ls", "sh"]);
        assert_eq!(segs[2], ["echo", "a;b"]);
        let segs = segments("echo \"$(rm -rf ~)\"");
        assert!(segs.iter().any(|s| s[0] == "rm"), "{segs:?}");
    }

    /// The checks that rest on the pattern table, through the compiled table the gate uses.
    #[test]
    fn the_pattern_hard_deny_checks_still_deny() {
        let check = |command: &str, expect: Option<&str>| {
            let got = hard_deny(command).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got.as_deref(), expect, "{command}");
        };
        check(":(){ :|:& };:", Some("a fork bomb"));
        check("echo hi; : ( ) { : | : & } ; :", Some("a fork bomb"));
        check("cat disk.img > /dev/sda", Some("writing to a block device"));
        check("echo x >/dev/nvme0n1", Some("writing to a block device"));
        check("echo x > /dev/null", None);
        check("ls -l /dev/sda", None);
    }

    #[test]
    fn unbalanced_quotes_still_split_into_words() {
        let segs = segments("rm -rf '~");
        assert_eq!(segs[0][0], "rm");
    }
}
