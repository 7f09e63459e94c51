//! The dates a query names — "on 3 June, 2023", "October 13th, 2023", "2023-06-03", "in August
//! 2023", "in June", "yesterday", "last week", "on Monday" — as periods of calendar days, so
//! that recall can prefer the memories from those days (a memory is from the local day of its
//! `valid_from`, which the write path sets to when it was said unless the writer knows better).
//!
//! English only, and only what a date is unambiguous about: a number alone ("the 5 books") or a
//! lower-case "may" is not a date. A query that names none gets no period, and recall is what
//! it would have been without this.

use chrono::{DateTime, Datelike, Days, Local, Months, NaiveDate, Utc, Weekday};

/// A run of calendar days, both ends included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// The first day.
    pub first: NaiveDate,
    /// The last day.
    pub last: NaiveDate,
}

impl Period {
    fn day(d: NaiveDate) -> Period {
        Period { first: d, last: d }
    }

    fn month(year: i32, month: u32) -> Option<Period> {
        let first = NaiveDate::from_ymd_opt(year, month, 1)?;
        let last = first.checked_add_months(Months::new(1))?.pred_opt()?;
        Some(Period { first, last })
    }

    fn year(year: i32) -> Option<Period> {
        Some(Period {
            first: NaiveDate::from_ymd_opt(year, 1, 1)?,
            last: NaiveDate::from_ymd_opt(year, 12, 31)?,
        })
    }

    /// The instants the period starts and ends at (end excluded), local midnight to local
    /// midnight, in UTC: what `valid_from` is compared with.
    pub fn bounds(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let midnight = |d: NaiveDate| {
            d.and_hms_opt(0, 0, 0)?
                .and_local_timezone(Local)
                .earliest()
                .map(|t| t.with_timezone(&Utc))
        };
        Some((midnight(self.first)?, midnight(self.last.succ_opt()?)?))
    }
}

/// One word of a query, as far as dates go.
#[derive(Clone, Debug, PartialEq)]
enum Word {
    /// 1–31, with or without "st", "nd", "rd", "th".
    Day(u32),
    /// Four digits.
    Year(i32),
    Month(u32),
    /// `YYYY-MM-DD`.
    Date(NaiveDate),
    Weekday(Weekday),
    Other(String),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn month(word: &str, original: &str) -> Option<u32> {
    // "may" is a month only as "May" (it is far more often the verb).
    if word == "may" && !original.starts_with('M') {
        return None;
    }
    let n = MONTHS.iter().position(|m| {
        *m == word
            || (word.len() >= 3 && m.starts_with(word) && (word.len() == 3 || word == "sept"))
    })?;
    Some(n as u32 + 1)
}

fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" => Weekday::Mon,
        "tuesday" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    })
}

fn word(original: &str) -> Word {
    let lower = original.to_lowercase();
    if let Ok(d) = NaiveDate::parse_from_str(&lower, "%Y-%m-%d") {
        return Word::Date(d);
    }
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &lower[digits.len()..];
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let n: u32 = digits.parse().unwrap_or(0);
        if digits.len() == 4 && suffix.is_empty() {
            return Word::Year(n as i32);
        }
        if (1..=31).contains(&n)
            && digits.len() <= 2
            && matches!(suffix, "" | "st" | "nd" | "rd" | "th")
        {
            return Word::Day(n);
        }
    }
    if let Some(m) = month(&lower, original) {
        return Word::Month(m);
    }
    if let Some(d) = weekday(&lower) {
        return Word::Weekday(d);
    }
    Word::Other(lower)
}

fn words(query: &str) -> Vec<Word> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .flat_map(|token| {
            if NaiveDate::parse_from_str(token, "%Y-%m-%d").is_ok() {
                vec![token]
            } else {
                token.split('-').collect()
            }
        })
        .filter(|w| !w.is_empty())
        .map(word)
        .collect()
}

/// The most recent `month`/`day` on or before `today` (this year's, else last year's).
fn latest(month: u32, day: u32, today: NaiveDate) -> Option<NaiveDate> {
    let this = NaiveDate::from_ymd_opt(today.year(), month, day);
    match this {
        Some(d) if d <= today => Some(d),
        _ => NaiveDate::from_ymd_opt(today.year() - 1, month, day),
    }
}

/// The Monday of `d`'s week.
fn monday(d: NaiveDate) -> NaiveDate {
    d - Days::new(u64::from(d.weekday().num_days_from_monday()))
}

/// The periods `query` names, read on `today`, without repeats.
pub fn periods(query: &str, today: NaiveDate) -> Vec<Period> {
    let w = words(query);
    let other = |i: usize| match w.get(i) {
        Some(Word::Other(s)) => s.as_str(),
        _ => "",
    };
    let mut out: Vec<Period> = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let (found, used) = match (&w[i], w.get(i + 1), w.get(i + 2)) {
            (Word::Date(d), _, _) => (Some(Period::day(*d)), 1),
            (Word::Day(d), Some(Word::Month(m)), Some(Word::Year(y)))
            | (Word::Month(m), Some(Word::Day(d)), Some(Word::Year(y))) => {
                (NaiveDate::from_ymd_opt(*y, *m, *d).map(Period::day), 3)
            }
            (Word::Day(d), Some(Word::Month(m)), _) | (Word::Month(m), Some(Word::Day(d)), _) => {
                (latest(*m, *d, today).map(Period::day), 2)
            }
            (Word::Month(m), Some(Word::Year(y)), _) => (Period::month(*y, *m), 2),
            (Word::Month(m), _, _) if matches!(other(i.wrapping_sub(1)), "in" | "during") => {
                let year = if *m <= today.month() {
                    today.year()
                } else {
                    today.year() - 1
                };
                (Period::month(year, *m), 1)
            }
            (Word::Year(y), _, _) if matches!(other(i.wrapping_sub(1)), "in" | "during") => {
                (Period::year(*y), 1)
            }
            (Word::Weekday(d), _, _) if matches!(other(i.wrapping_sub(1)), "on" | "last") => {
                let back =
                    (7 + today.weekday().num_days_from_monday() - d.num_days_from_monday()) % 7;
                // "last Monday" said on a Monday is a week ago; "on Monday" is today.
                let back = if back == 0 && other(i - 1) == "last" {
                    7
                } else {
                    back
                };
                (
                    today
                        .checked_sub_days(Days::new(u64::from(back)))
                        .map(Period::day),
                    1,
                )
            }
            (Word::Other(s), next, _) => match relative(s, next, today) {
                Some((p, used)) => (Some(p), used),
                None => (None, 1),
            },
            _ => (None, 1),
        };
        if let Some(p) = found
            && !out.contains(&p)
        {
            out.push(p);
        }
        i += used;
    }
    out
}

/// "today", "yesterday", and "last"/"this" followed by "week", "month" or "year"; with the
/// number of words it took.
fn relative(word: &str, next: Option<&Word>, today: NaiveDate) -> Option<(Period, usize)> {
    let unit = match next {
        Some(Word::Other(n)) => n.as_str(),
        _ => "",
    };
    let period = match (word, unit) {
        ("today", _) => return Some((Period::day(today), 1)),
        ("yesterday", _) => return Some((Period::day(today.pred_opt()?), 1)),
        ("this", "week") => Some(Period {
            first: monday(today),
            last: today,
        }),
        ("last", "week") => {
            let last = monday(today).pred_opt()?;
            Some(Period {
                first: monday(last),
                last,
            })
        }
        ("this", "month") => Some(Period {
            first: today.with_day(1)?,
            last: today,
        }),
        ("last", "month") => {
            let d = today.with_day(1)?.pred_opt()?;
            Period::month(d.year(), d.month())
        }
        ("this", "year") => Some(Period {
            first: NaiveDate::from_ymd_opt(today.year(), 1, 1)?,
            last: today,
        }),
        ("last", "year") => Period::year(today.year() - 1),
        _ => None,
    }?;
    Some((period, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("a date")
    }

    fn read(query: &str) -> Vec<(String, String)> {
        // A Thursday.
        periods(query, day("2026-12-03"))
            .into_iter()
            .map(|p| (p.first.to_string(), p.last.to_string()))
            .collect()
    }

    fn one(first: &str, last: &str) -> Vec<(String, String)> {
        vec![(first.to_string(), last.to_string())]
    }

    #[test]
    fn named_days_months_and_years() {
        let table = [
            (
                "What did Nate make on 9 November, 2022?",
                one("2022-11-09", "2022-11-09"),
            ),
            (
                "the painting shown on October 13th, 2023",
                one("2023-10-13", "2023-10-13"),
            ),
            (
                "notes from 2023-06-03 please",
                one("2023-06-03", "2023-06-03"),
            ),
            (
                "What did Joanna do in January 2022?",
                one("2022-01-01", "2022-01-31"),
            ),
            ("in Feb 2024", one("2024-02-01", "2024-02-29")),
            ("in Sept 2025", one("2025-09-01", "2025-09-30")),
            ("what happened in 2021", one("2021-01-01", "2021-12-31")),
            // Without a year: the latest such day or month up to today.
            ("on 3 June", one("2026-06-03", "2026-06-03")),
            ("on December 24", one("2025-12-24", "2025-12-24")),
            ("during March", one("2026-03-01", "2026-03-31")),
            ("in December", one("2026-12-01", "2026-12-31")),
        ];
        for (query, want) in table {
            assert_eq!(read(query), want, "{query}");
        }
    }

    #[test]
    fn relative_dates_are_read_from_today() {
        let table = [
            ("what did I say yesterday", one("2026-12-02", "2026-12-02")),
            ("today's plan", one("2026-12-03", "2026-12-03")),
            (
                "what did we decide last week",
                one("2026-11-23", "2026-11-29"),
            ),
            ("this week", one("2026-11-30", "2026-12-03")),
            ("last month", one("2026-11-01", "2026-11-30")),
            ("this month", one("2026-12-01", "2026-12-03")),
            ("last year", one("2025-01-01", "2025-12-31")),
            ("on Monday", one("2026-11-30", "2026-11-30")),
            ("on Thursday", one("2026-12-03", "2026-12-03")),
            ("last Thursday", one("2026-11-26", "2026-11-26")),
        ];
        for (query, want) in table {
            assert_eq!(read(query), want, "{query}");
        }
    }

    #[test]
    fn words_that_only_look_like_dates_are_not_dates() {
        for query in [
            "may I ask about the 5 books",
            "what is my favourite month",
            "March forward",
            "Monday",
            "1 of 2023 items",
            "call 0800 now",
            "31 flavours",
            "on 31 February, 2023",
        ] {
            assert_eq!(read(query), Vec::<(String, String)>::new(), "{query}");
        }
    }

    #[test]
    fn several_dates_are_each_a_period_once() {
        assert_eq!(
            read("between 1 May, 2023 and May 1, 2023 or in June 2023"),
            vec![
                ("2023-05-01".to_string(), "2023-05-01".to_string()),
                ("2023-06-01".to_string(), "2023-06-30".to_string()),
            ]
        );
    }

    #[test]
    fn bounds_are_local_midnights() {
        let p = Period::day(day("2023-06-03"));
        let (from, to) = p.bounds().expect("local midnights");
        assert_eq!(to - from, chrono::Duration::days(1));
        assert_eq!(from.with_timezone(&Local).date_naive(), day("2023-06-03"));
    }
}
