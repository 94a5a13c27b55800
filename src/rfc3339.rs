//! Times as answers and files write them: RFC 3339 in UTC, of seconds or microseconds since the
//! Unix epoch, and read back. A leaf: every module that shows or reads a time uses this one.

/// The current UTC time as RFC 3339 (`2026-11-30T01:45:04Z`).
pub(crate) fn now() -> String {
    of_secs(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default(),
    )
}

/// `secs` since the Unix epoch as RFC 3339 in UTC (`2026-11-30T01:45:04Z`).
pub(crate) fn of_secs(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `2026-12-02T09:00:00.000123Z` of microseconds since the Unix epoch.
pub(crate) fn of_micros(us: u64) -> String {
    let secs = of_secs(us / 1_000_000);
    format!(
        "{}.{:06}Z",
        secs.strip_suffix('Z').unwrap_or(&secs),
        us % 1_000_000
    )
}

/// Microseconds since the Unix epoch of an RFC 3339 UTC time (`2026-12-02T09:00:00Z`, with an
/// optional fraction); `None` when it is not one.
pub fn micros_of(text: &str) -> Option<u64> {
    let number = |range: std::ops::Range<usize>| -> Option<i64> { text.get(range)?.parse().ok() };
    let (y, m, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (h, min, s) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let fraction = text
        .get(19..)
        .and_then(|rest| rest.strip_prefix('.'))
        .map(|rest| rest.trim_end_matches('Z'))
        .map_or(0, |digits| {
            let six: String = digits
                .chars()
                .chain(std::iter::repeat('0'))
                .take(6)
                .collect();
            six.parse::<u64>().unwrap_or(0)
        });
    let days = days_from_civil(y, m as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + min * 60 + s;
    u64::try_from(secs).ok().map(|s| s * 1_000_000 + fraction)
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_are_right_around_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn a_time_reads_back_to_what_was_written() {
        for us in [0, 1_764_666_000_000_123, 951_782_400_999_999] {
            assert_eq!(micros_of(&of_micros(us)), Some(us));
            assert_eq!(
                micros_of(&of_secs(us / 1_000_000)),
                Some(us / 1_000_000 * 1_000_000)
            );
        }
        assert_eq!(micros_of("2026-13-02T09:00:00Z"), None);
        assert_eq!(micros_of("soon"), None);
    }
}
