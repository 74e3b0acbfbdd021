//! Unit tests of the business-day calendar: weekends, observed federal holidays, day boundaries.

use super::*;

fn date(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn instant(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn zone(name: &str) -> Tz {
    name.parse().unwrap()
}

#[test]
fn every_2026_federal_holiday_is_found_on_its_observed_date() {
    let table = [
        ("2026-01-01", "New Year's Day"),
        ("2026-01-19", "Birthday of Martin Luther King Jr."),
        ("2026-02-16", "Washington's Birthday"),
        ("2026-05-25", "Memorial Day"),
        ("2026-06-19", "Juneteenth National Independence Day"),
        ("2026-07-03", "Independence Day"),
        ("2026-09-07", "Labor Day"),
        ("2026-10-12", "Columbus Day"),
        ("2026-11-11", "Veterans Day"),
        ("2026-11-26", "Thanksgiving Day"),
        ("2026-12-25", "Christmas Day"),
    ];
    for (day, name) in table {
        assert_eq!(federal_holiday(date(day)), Some(name), "{day}");
        assert!(!is_business_day(date(day)), "{day}");
    }
    let count = date("2026-01-01")
        .iter_days()
        .take_while(|day| day.year() == 2026)
        .filter(|&day| federal_holiday(day).is_some())
        .count();
    assert_eq!(count, table.len());
}

#[test]
fn every_2027_federal_holiday_is_found_on_its_observed_date() {
    let table = [
        ("2027-01-01", "New Year's Day"),
        ("2027-01-18", "Birthday of Martin Luther King Jr."),
        ("2027-02-15", "Washington's Birthday"),
        ("2027-05-31", "Memorial Day"),
        ("2027-06-18", "Juneteenth National Independence Day"),
        ("2027-07-05", "Independence Day"),
        ("2027-09-06", "Labor Day"),
        ("2027-10-11", "Columbus Day"),
        ("2027-11-11", "Veterans Day"),
        ("2027-11-25", "Thanksgiving Day"),
        ("2027-12-24", "Christmas Day"),
        ("2027-12-31", "New Year's Day"),
    ];
    for (day, name) in table {
        assert_eq!(federal_holiday(date(day)), Some(name), "{day}");
        assert!(!is_business_day(date(day)), "{day}");
    }
    let count = date("2027-01-01")
        .iter_days()
        .take_while(|day| day.year() == 2027)
        .filter(|&day| federal_holiday(day).is_some())
        .count();
    assert_eq!(count, table.len());
}

#[test]
fn a_fixed_date_holiday_on_a_weekend_is_not_reported_on_the_weekend_day_itself() {
    for day in [
        "2026-07-04", // Saturday, observed Friday 2026-07-03
        "2027-06-19", // Saturday, observed Friday 2027-06-18
        "2027-07-04", // Sunday, observed Monday 2027-07-05
        "2027-12-25", // Saturday, observed Friday 2027-12-24
        "2028-01-01", // Saturday, observed Friday 2027-12-31
        "2023-01-01", // Sunday, observed Monday 2023-01-02
    ] {
        assert_eq!(federal_holiday(date(day)), None, "{day}");
    }
}

#[test]
fn new_years_day_on_a_saturday_is_observed_on_december_31_of_the_year_before() {
    assert_eq!(federal_holiday(date("2021-12-31")), Some("New Year's Day"));
    assert_eq!(federal_holiday(date("2022-01-01")), None);
    assert!(!is_business_day(date("2021-12-31")));
    assert!(!is_business_day(date("2022-01-01")));
    assert!(is_business_day(date("2021-12-30")));
    assert!(is_business_day(date("2022-01-03")));
}

#[test]
fn a_sunday_holiday_is_observed_on_the_monday_after() {
    let table = [
        ("2023-01-02", "New Year's Day"),
        ("2022-06-20", "Juneteenth National Independence Day"),
        ("2021-07-05", "Independence Day"),
        ("2029-11-12", "Veterans Day"),
        ("2022-12-26", "Christmas Day"),
    ];
    for (day, name) in table {
        assert_eq!(federal_holiday(date(day)), Some(name), "{day}");
    }
}

#[test]
fn juneteenth_is_a_holiday_only_from_2021_on() {
    assert_eq!(federal_holiday(date("2020-06-19")), None);
    assert!(is_business_day(date("2020-06-19")));
    assert_eq!(
        federal_holiday(date("2021-06-18")),
        Some("Juneteenth National Independence Day")
    );
}

#[test]
fn every_year_has_its_eleven_holidays_less_one_moved_out_plus_one_moved_in() {
    for year in 1990..=2100 {
        let saturday_new_year =
            |y: i32| NaiveDate::from_ymd_opt(y, 1, 1).unwrap().weekday() == Weekday::Sat;
        let mut expected = 11;
        if year < JUNETEENTH_FIRST_YEAR {
            expected -= 1;
        }
        if saturday_new_year(year) {
            expected -= 1;
        }
        if saturday_new_year(year + 1) {
            expected += 1;
        }
        let holidays: Vec<NaiveDate> = NaiveDate::from_ymd_opt(year, 1, 1)
            .unwrap()
            .iter_days()
            .take_while(|day| day.year() == year)
            .filter(|&day| federal_holiday(day).is_some())
            .collect();
        assert_eq!(holidays.len(), expected, "{year}: {holidays:?}");
        assert!(
            holidays
                .iter()
                .all(|day| !matches!(day.weekday(), Weekday::Sat | Weekday::Sun)),
            "{year}: {holidays:?}"
        );
    }
}

#[test]
fn weekends_are_not_business_days_and_ordinary_weekdays_are() {
    let table = [
        ("2026-11-21", false), // Saturday
        ("2026-11-22", false), // Sunday
        ("2026-11-23", true),  // Monday
        ("2026-11-24", true),
        ("2026-11-25", true),
        ("2026-11-26", false), // Thanksgiving
        ("2026-11-27", true),  // Friday
        ("2026-11-28", false),
        ("2026-11-29", false),
    ];
    for (day, expected) in table {
        assert_eq!(is_business_day(date(day)), expected, "{day}");
    }
}

#[test]
fn business_days_from_the_day_before_thanksgiving_skip_thanksgiving_and_the_weekend() {
    let days: Vec<NaiveDate> = business_days_from(date("2026-11-25")).take(5).collect();
    let expected = [
        "2026-11-25",
        "2026-11-27",
        "2026-11-30",
        "2026-12-01",
        "2026-12-02",
    ];
    assert_eq!(days, expected.map(date));
}

#[test]
fn business_days_from_a_non_business_day_start_at_the_next_business_day() {
    let days: Vec<NaiveDate> = business_days_from(date("2027-12-24")).take(3).collect();
    // Friday 12-24 (Christmas observed), weekend, Monday 12-27 ... Friday 12-31 (New Year's Day observed).
    let expected = ["2027-12-27", "2027-12-28", "2027-12-29"];
    assert_eq!(days, expected.map(date));
    let after: Vec<NaiveDate> = business_days_from(date("2027-12-30")).take(2).collect();
    assert_eq!(after, ["2027-12-30", "2028-01-03"].map(date));
}

#[test]
fn local_date_changes_at_local_midnight() {
    let table = [
        ("America/New_York", "2026-11-24T04:59:59Z", "2026-11-23"),
        ("America/New_York", "2026-11-24T05:00:00Z", "2026-11-24"),
        ("America/New_York", "2026-07-01T03:59:59Z", "2026-06-30"),
        ("America/New_York", "2026-07-01T04:00:00Z", "2026-07-01"),
        ("Pacific/Honolulu", "2026-11-24T09:59:59Z", "2026-11-23"),
        ("Pacific/Honolulu", "2026-11-24T10:00:00Z", "2026-11-24"),
        ("UTC", "2026-11-23T23:59:59Z", "2026-11-23"),
        ("UTC", "2026-11-24T00:00:00Z", "2026-11-24"),
    ];
    for (name, at, expected) in table {
        assert_eq!(
            local_date(instant(at), zone(name)),
            date(expected),
            "{name} {at}"
        );
    }
}

#[test]
fn day_start_is_local_midnight_or_the_first_valid_instant_after_it() {
    let table = [
        // Ordinary days.
        ("America/New_York", "2026-11-23", "2026-11-23T05:00:00Z"),
        ("America/New_York", "2026-07-01", "2026-07-01T04:00:00Z"),
        ("Pacific/Honolulu", "2026-11-23", "2026-11-23T10:00:00Z"),
        ("UTC", "2026-11-23", "2026-11-23T00:00:00Z"),
        // Spring forward at midnight: 00:00 does not exist, the day begins at 01:00 with the new offset.
        ("America/Santiago", "2026-09-06", "2026-09-06T04:00:00Z"), // 01:00 -03
        ("America/Havana", "2026-03-08", "2026-03-08T05:00:00Z"),   // 01:00 CDT
        ("Asia/Beirut", "2026-03-29", "2026-03-28T22:00:00Z"),      // 01:00 EEST
        // Fall back at midnight: 00:00 happens twice, the day begins at the first.
        ("America/Havana", "2026-11-01", "2026-11-01T04:00:00Z"), // 00:00 CDT, not 00:00 CST
        // Fall back just before midnight: 23:00-23:59 repeats, 00:00 happens once.
        ("America/Santiago", "2026-04-05", "2026-04-05T04:00:00Z"), // 00:00 -04
    ];
    for (name, day, expected) in table {
        let tz = zone(name);
        let start = day_start(date(day), tz);
        assert_eq!(start, instant(expected), "{name} {day}");
        assert_eq!(local_date(start, tz), date(day), "{name} {day}");
        assert_eq!(
            local_date(start - TimeDelta::seconds(1), tz),
            date(day).pred_opt().unwrap(),
            "{name} {day}"
        );
    }
}

#[test]
fn day_start_in_a_midnight_gap_confirms_that_midnight_really_does_not_exist() {
    for (name, day) in [
        ("America/Santiago", "2026-09-06"),
        ("America/Havana", "2026-03-08"),
    ] {
        let midnight = date(day).and_time(NaiveTime::MIN);
        assert_eq!(
            zone(name).from_local_datetime(&midnight),
            LocalResult::None,
            "{name} {day}"
        );
    }
}

#[test]
fn gap_end_finds_a_half_hour_gap_to_the_second() {
    // Lord Howe springs forward 30 minutes at 02:00 local (+10:30 to +11:00).
    let tz = zone("Australia/Lord_Howe");
    let local = date("2026-10-04").and_hms_opt(2, 0, 0).unwrap();
    assert_eq!(tz.from_local_datetime(&local), LocalResult::None);
    assert_eq!(gap_end(local, tz), instant("2026-10-03T15:30:00Z"));
    let inside = date("2026-10-04").and_hms_opt(2, 17, 43).unwrap();
    assert_eq!(gap_end(inside, tz), instant("2026-10-03T15:30:00Z"));
}

#[test]
fn day_start_of_a_day_the_zone_skipped_entirely_is_the_start_of_the_next_day() {
    // Samoa moved across the date line: 2011-12-29 was followed by 2011-12-31.
    let tz = zone("Pacific/Apia");
    let start = day_start(date("2011-12-30"), tz);
    assert_eq!(start, instant("2011-12-30T10:00:00Z")); // 2011-12-31 00:00 +14
    assert_eq!(local_date(start, tz), date("2011-12-31"));
    assert_eq!(start, day_start(date("2011-12-31"), tz));
}
