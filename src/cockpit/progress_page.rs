//! The plan's progress over time, drawn on the server as SVG with a table of the same figures
//! as its text alternative: the issues done each day, and the issues open at the end of each
//! day by where they stood. Derived from the stamps `plan.issues` answers (created, started,
//! verified, completed); nothing is recorded for the drawing.

use minijinja::context;
use serde_json::{json, Value};

use super::{run, Rendered};
use crate::context::Context;

/// The days drawn, today last.
const DAYS: u64 = 14;
/// The issues read a page at a time, and the most pages read.
const PAGE: i64 = 1000;
const MAX_PAGES: i64 = 20;

/// The drawings' geometry, in SVG user units.
const WIDTH: i64 = 720;
const HEIGHT: i64 = 160;
const LEFT: i64 = 40;
const BOTTOM: i64 = 22;
const TOP: i64 = 10;

/// The open statuses, in the order they are stacked.
const OPEN: [&str; 3] = ["ready", "active", "verify"];

pub(super) fn progress(ctx: &Context) -> Rendered {
    let mut issues = Vec::new();
    let mut offset = 0;
    let mut total = 0;
    for _ in 0..MAX_PAGES {
        let answer = run(
            ctx,
            "plan.issues",
            json!({ "limit": PAGE, "offset": offset }),
        )?;
        total = answer["total"].as_i64().unwrap_or_default();
        let page = answer["issues"].as_array().cloned().unwrap_or_default();
        let got = page.len() as i64;
        issues.extend(page);
        offset += got;
        if got < PAGE || offset >= total {
            break;
        }
    }
    let now = crate::board::claims::now();
    let days: Vec<String> = (0..DAYS)
        .rev()
        .map(|back| day_of(now.saturating_sub(back * 86_400)))
        .collect();
    let rows = figures(&issues, &days);
    Ok((
        "progress.html",
        context! {
            rows => rows,
            done => bars(&rows, &["done"]),
            open => bars(&rows, &OPEN),
            read => issues.len(),
            total => total,
            page_title => "Progress",
        },
        200,
    ))
}

/// `YYYY-MM-DD` of a time in seconds since the epoch, in UTC.
fn day_of(secs: u64) -> String {
    crate::rfc3339::of_secs(secs)
        .get(..10)
        .unwrap_or_default()
        .to_string()
}

/// The day of a stamp (`2026-12-01T10:00:00Z` or `2026-12-01`), if it has one.
fn stamp_day(issue: &Value, key: &str) -> Option<String> {
    issue[key]
        .as_str()
        .and_then(|s| s.get(..10))
        .map(str::to_string)
}

/// Per day: the issues done that day, and those open at its end by status. An issue without a
/// creation stamp counts from the first day.
fn figures(issues: &[Value], days: &[String]) -> Vec<Value> {
    days.iter()
        .map(|day| {
            let by = |key: &str, i: &Value| stamp_day(i, key).is_some_and(|d| d <= *day);
            let mut row = json!({ "day": day, "done": 0, "ready": 0, "active": 0, "verify": 0 });
            for i in issues {
                if stamp_day(i, "created_at").is_some_and(|d| d > *day) {
                    continue;
                }
                let key = if by("completed_at", i) {
                    if stamp_day(i, "completed_at").as_deref() != Some(day.as_str()) {
                        continue;
                    }
                    "done"
                } else if by("verified_at", i) {
                    "verify"
                } else if by("started_at", i) {
                    "active"
                } else {
                    "ready"
                };
                row[key] = json!(row[key].as_i64().unwrap_or_default() + 1);
            }
            row
        })
        .collect()
}

/// A bar chart of `rows`, one bar a day, stacking `keys` from the bottom.
fn bars(rows: &[Value], keys: &[&str]) -> Value {
    let sum = |r: &Value| {
        keys.iter()
            .map(|k| r[*k].as_i64().unwrap_or_default())
            .sum::<i64>()
    };
    let top = rows.iter().map(sum).max().unwrap_or(0).max(1);
    let plot = HEIGHT - TOP - BOTTOM;
    let slot = (WIDTH - LEFT) / rows.len().max(1) as i64;
    let mut rects = Vec::new();
    let mut labels = Vec::new();
    for (n, r) in rows.iter().enumerate() {
        let x = LEFT + n as i64 * slot + 3;
        let mut base = HEIGHT - BOTTOM;
        for k in keys {
            let v = r[*k].as_i64().unwrap_or_default();
            if v == 0 {
                continue;
            }
            let h = (v * plot / top).max(1);
            base -= h;
            rects.push(json!({
                "x": x, "y": base, "w": slot - 6, "h": h, "class": k,
                "title": format!("{}: {v} {k}", r["day"].as_str().unwrap_or_default()),
            }));
        }
        // Every other day is labelled, so the labels never crowd.
        if n % 2 == (rows.len() + 1) % 2 {
            labels.push(json!({
                "x": x + (slot - 6) / 2,
                "text": r["day"].as_str().and_then(|d| d.get(5..)).unwrap_or_default(),
            }));
        }
    }
    json!({
        "width": WIDTH, "height": HEIGHT, "left": LEFT,
        "base": HEIGHT - BOTTOM, "top": TOP, "max": top,
        "label_y": HEIGHT - 6, "rects": rects, "labels": labels,
        "keys": keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issue_counts_once_a_day_by_where_it_stood_that_day() {
        let issues = vec![
            json!({ "created_at": "2026-12-01T09:00:00Z", "started_at": "2026-12-02T09:00:00Z",
                    "completed_at": "2026-12-03T09:00:00Z" }),
            json!({}),
        ];
        let days: Vec<String> = [
            "2026-11-30",
            "2026-12-01",
            "2026-12-02",
            "2026-12-03",
            "2026-12-04",
        ]
        .iter()
        .map(|d| d.to_string())
        .collect();
        let rows = figures(&issues, &days);
        let at = |n: usize, k: &str| rows[n][k].as_i64().unwrap();
        assert_eq!(
            (at(0, "ready"), at(0, "active")),
            (1, 0),
            "only the undated one"
        );
        assert_eq!(at(1, "ready"), 2);
        assert_eq!((at(2, "ready"), at(2, "active")), (1, 1));
        assert_eq!((at(3, "done"), at(3, "active")), (1, 0));
        assert_eq!(at(4, "done"), 0, "done on one day only");
        let drawn = bars(&rows, &OPEN);
        assert_eq!(drawn["max"], 2);
        assert!(!drawn["rects"].as_array().unwrap().is_empty());
    }
}
