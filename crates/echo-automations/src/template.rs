//! The prompt template of an automation: Jinja syntax (minijinja, as `prompts/` uses) over a
//! fixed set of variables. A template that uses any other variable, or does not parse, is
//! refused when the automation is saved; a run renders it with strict undefined values.

use crate::AutomationError;
use serde::Serialize;

/// The variables a template may use.
pub const VARIABLES: &[&str] = &["path", "name", "ext", "event", "old_path", "time"];

/// A checked prompt template.
#[derive(Debug, Clone)]
pub struct Template {
    source: String,
}

/// What one run fills in. Schedules and manual runs leave the file fields empty.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Vars {
    /// The file's absolute path.
    pub path: String,
    /// Its file name.
    pub name: String,
    /// Its extension, without the dot.
    pub ext: String,
    /// `created`, `modified`, `deleted`, `renamed`; `schedule` or `manual` otherwise.
    pub event: String,
    /// Where a renamed file was before.
    pub old_path: String,
    /// When the event happened or the schedule fired (local time, RFC 3339).
    pub time: String,
}

impl Template {
    /// Parses `source` and checks that it uses only [`VARIABLES`].
    pub fn compile(source: &str) -> Result<Template, AutomationError> {
        let env = environment();
        let template = env
            .template_from_str(source)
            .map_err(|e| AutomationError::Invalid {
                what: "prompt",
                message: e.to_string(),
            })?;
        let mut unknown: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|v| !VARIABLES.contains(&v.as_str()))
            .collect();
        if !unknown.is_empty() {
            unknown.sort();
            return Err(AutomationError::Invalid {
                what: "prompt",
                message: format!(
                    "it uses {} ; the variables are {}",
                    unknown.join(", "),
                    VARIABLES.join(", ")
                ),
            });
        }
        Ok(Template {
            source: source.to_string(),
        })
    }

    /// The message a run sends.
    pub fn render(&self, vars: &Vars) -> Result<String, AutomationError> {
        environment()
            .render_str(&self.source, vars)
            .map_err(|e| AutomationError::Invalid {
                what: "prompt",
                message: e.to_string(),
            })
    }
}

fn environment() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // A prompt is plain text: no HTML escaping of paths.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_variables_verbatim() {
        let t =
            Template::compile("Summarise {{ path }} ({{ext}}, {{event}}) into notes/{{ name }}.md")
                .expect("valid");
        let text = t
            .render(&Vars {
                path: "/home/a/Inbox/R&D <draft>.pdf".into(),
                name: "R&D <draft>.pdf".into(),
                ext: "pdf".into(),
                event: "created".into(),
                ..Vars::default()
            })
            .expect("renders");
        assert_eq!(
            text,
            "Summarise /home/a/Inbox/R&D <draft>.pdf (pdf, created) into notes/R&D <draft>.pdf.md"
        );
    }

    #[test]
    fn unknown_variables_and_syntax_errors_are_refused() {
        let e = Template::compile("{{ pth }}")
            .expect_err("unknown")
            .to_string();
        assert!(e.contains("pth") && e.contains("old_path"), "{e}");
        assert!(Template::compile("{% if %}").is_err());
        Template::compile("{% if old_path %}moved from {{ old_path }}{% endif %}")
            .expect("conditionals over known variables are fine");
    }
}
