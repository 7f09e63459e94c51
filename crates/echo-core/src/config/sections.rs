//! Small sections of the configuration: `[trace]` and `[automations]`.

use serde::Deserialize;

/// Traces (`[trace]`): whether each model call's exact request and response are kept beside
/// its span, and for how long the sweep keeps them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Keep what was sent to and received from the model (on by default; spans are always kept).
    pub capture: bool,
    /// Days a captured request/response is kept; the sweep removes older ones (0 = keep none).
    pub retention_days: u32,
    /// The share of the last day's turns that fell back (0–1) from which the app says so;
    /// 0: never.
    pub notice_rate: f64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            capture: true,
            retention_days: 30,
            notice_rate: 0.3,
        }
    }
}

/// Automations (`[automations]`): whether this process runs them, how many runs at once, and
/// how long an unattended run's approval question waits.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutomationsConfig {
    /// Long-running processes (the app, `echod serve`) watch and schedule automations.
    pub enabled: bool,
    /// Runs at a time in one process, over all automations (each also has its own limit).
    pub concurrency: u8,
    /// Hours a queued approval question waits before the call is denied.
    pub approval_expiry_hours: f64,
}

impl Default for AutomationsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            concurrency: 2,
            approval_expiry_hours: 24.0,
        }
    }
}
