//! Schedules: a cron expression (croner, with `L`, `#`, `W` and `@daily`-style aliases) read
//! in an IANA time zone (chrono-tz), so "8:00" stays 8:00 local time across daylight-saving
//! changes. Simple phrases ("every weekday at 8:00") are turned into cron first.

use crate::AutomationError;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use std::str::FromStr;

/// Most missed fire times counted when a schedule starts again (the rest are only "more").
const MAX_MISSED_COUNTED: usize = 10_000;

/// A compiled schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    /// The cron expression in force (a phrase's translation).
    pub expression: String,
    /// The zone it is read in.
    pub zone: Tz,
}

/// Fire times that passed while nothing ran the schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    /// How many (at most `MAX_MISSED_COUNTED`).
    pub count: usize,
    /// The latest one.
    pub latest: DateTime<Utc>,
}

impl Schedule {
    /// Parses `expression` (cron or a phrase) in `zone` (the computer's zone when absent).
    pub fn new(expression: &str, zone: Option<&str>) -> Result<Schedule, AutomationError> {
        let expression = preset(expression).unwrap_or_else(|| expression.trim().to_string());
        let cron = Cron::from_str(&expression).map_err(|e| AutomationError::Invalid {
            what: "cron",
            message: format!("{expression:?}: {e}"),
        })?;
        let zone = match zone {
            Some(name) => name.parse::<Tz>().map_err(|_| AutomationError::Invalid {
                what: "time_zone",
                message: format!("{name:?} is not an IANA time zone (such as Europe/Berlin)"),
            })?,
            None => local_zone(),
        };
        Ok(Schedule {
            cron,
            expression,
            zone,
        })
    }

    /// The first fire time strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&after.with_timezone(&self.zone), false)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// The next `n` fire times after `after`.
    pub fn upcoming(&self, after: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
        let mut out = Vec::with_capacity(n);
        let mut t = after;
        while out.len() < n {
            match self.next_after(t) {
                Some(next) if next > t => {
                    out.push(next);
                    t = next;
                }
                _ => break,
            }
        }
        out
    }

    /// Fire times in `(since, now]`.
    pub fn missed(&self, since: DateTime<Utc>, now: DateTime<Utc>) -> Option<Missed> {
        let mut count = 0;
        let mut latest = None;
        let mut t = since;
        while count < MAX_MISSED_COUNTED {
            match self.next_after(t) {
                Some(next) if next <= now && next > t => {
                    count += 1;
                    latest = Some(next);
                    t = next;
                }
                _ => break,
            }
        }
        latest.map(|latest| Missed { count, latest })
    }
}

/// The computer's time zone, UTC when it cannot be told (logged).
pub fn local_zone() -> Tz {
    match iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
    {
        Some(tz) => tz,
        None => {
            tracing::warn!("cannot tell the computer's time zone; schedules use UTC");
            Tz::UTC
        }
    }
}

/// Turns a phrase into cron: `every day at 8:00`, `every weekday at 7:30`, `every monday at
/// 9:00`, `every hour`. `None` when `text` is not one of them.
pub fn preset(text: &str) -> Option<String> {
    let text = text.trim().to_ascii_lowercase();
    let rest = text.strip_prefix("every ")?;
    if rest == "hour" {
        return Some("0 * * * *".into());
    }
    let (days, at) = match rest.split_once(" at ") {
        Some((d, t)) => (d.trim(), t.trim()),
        None => (rest.trim(), "0:00"),
    };
    let (h, m) = at.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let dow = match days {
        "day" => "*",
        "weekday" => "1-5",
        "weekend day" => "0,6",
        day => match day.trim_end_matches('s') {
            "monday" => "1",
            "tuesday" => "2",
            "wednesday" => "3",
            "thursday" => "4",
            "friday" => "5",
            "saturday" => "6",
            "sunday" => "0",
            _ => return None,
        },
    };
    Some(format!("{m} {h} * * {dow}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("a test time")
            .with_timezone(&Utc)
    }

    #[test]
    fn phrases_become_cron() {
        assert_eq!(preset("every day at 8:00").as_deref(), Some("0 8 * * *"));
        assert_eq!(
            preset("Every weekday at 7:30").as_deref(),
            Some("30 7 * * 1-5")
        );
        assert_eq!(preset("every monday at 9:05").as_deref(), Some("5 9 * * 1"));
        assert_eq!(preset("every Monday").as_deref(), Some("0 0 * * 1"));
        assert_eq!(preset("every hour").as_deref(), Some("0 * * * *"));
        assert_eq!(preset("every day at 25:00"), None);
        assert_eq!(preset("0 8 * * *"), None);
    }

    #[test]
    fn next_fire_times_follow_local_time_across_dst_in_two_zones() {
        // Berlin springs forward on 2026-03-29 (02:00 → 03:00, UTC+1 → UTC+2).
        let berlin = Schedule::new("every day at 8:00", Some("Europe/Berlin")).expect("valid");
        let got = berlin.upcoming(utc("2026-03-27T12:00:00Z"), 4);
        assert_eq!(
            got,
            vec![
                utc("2026-03-28T07:00:00Z"),
                utc("2026-03-29T06:00:00Z"),
                utc("2026-03-30T06:00:00Z"),
                utc("2026-03-31T06:00:00Z"),
            ]
        );
        // New York falls back on 2026-11-01 (02:00 → 01:00, UTC-4 → UTC-5).
        let ny = Schedule::new("0 8 * * *", Some("America/New_York")).expect("valid");
        let got = ny.upcoming(utc("2026-10-30T20:00:00Z"), 3);
        assert_eq!(
            got,
            vec![
                utc("2026-10-31T12:00:00Z"),
                utc("2026-11-01T13:00:00Z"),
                utc("2026-11-02T13:00:00Z"),
            ]
        );
    }

    #[test]
    fn a_time_that_happens_twice_fires_once_and_one_that_never_happens_is_not_lost() {
        // 01:30 happens twice in New York on 2026-11-01.
        let ny = Schedule::new("30 1 * * *", Some("America/New_York")).expect("valid");
        let got = ny.upcoming(utc("2026-10-31T12:00:00Z"), 3);
        assert_eq!(got.len(), 3);
        let on_the_day: Vec<_> = got
            .iter()
            .filter(|t| t.with_timezone(&ny.zone).format("%F").to_string() == "2026-11-01")
            .collect();
        assert_eq!(on_the_day.len(), 1, "{got:?}");
        // 02:30 never happens in Berlin on 2026-03-29; that day still gets one run.
        let berlin = Schedule::new("30 2 * * *", Some("Europe/Berlin")).expect("valid");
        let got = berlin.upcoming(utc("2026-03-28T12:00:00Z"), 2);
        assert_eq!(got.len(), 2);
        let day = got[0].with_timezone(&berlin.zone).format("%F").to_string();
        assert_eq!(day, "2026-03-29", "{got:?}");
        assert!(got[0] < got[1]);
    }

    #[test]
    fn missed_times_are_counted_up_to_now() {
        let s = Schedule::new("0 * * * *", Some("UTC")).expect("valid");
        let m = s
            .missed(utc("2026-12-01T09:30:00Z"), utc("2026-12-01T12:10:00Z"))
            .expect("three missed");
        assert_eq!(m.count, 3);
        assert_eq!(m.latest, utc("2026-12-01T12:00:00Z"));
        assert_eq!(
            s.missed(utc("2026-12-01T12:00:00Z"), utc("2026-12-01T12:59:00Z")),
            None
        );
    }
}
