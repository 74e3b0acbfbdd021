//! Call lengths and wall-time waits.

use std::time::Duration;

use super::*;

#[tokio::test]
async fn medicare_holds_longer_than_a_commercial_carrier() {
    let medicare = PayerProfile::for_payer("Medicare Part B - Novitas");
    let commercial = PayerProfile::for_payer("Aetna");
    assert!(medicare.hold_minutes_median > commercial.hold_minutes_median * 1.5);
    assert!(medicare.hold_timeout_rate > commercial.hold_timeout_rate);
    let mean_completed = |profile: PayerProfile| async move {
        let dialer = SimulatedPayerDialer::with_profile_override(quiet().with_hold(profile));
        let mut total = 0u64;
        for seed in 0..200 {
            let report = place(&dialer, job(vob(), inputs("x", &[]), 0, 1, seed)).await;
            total += u64::from(report.duration_seconds);
        }
        total / 200
    };
    let (slow, quick) = (
        mean_completed(medicare).await,
        mean_completed(commercial).await,
    );
    assert!(
        slow > quick + 10 * 60,
        "medicare {slow} s, commercial {quick} s"
    );
}

impl PayerProfile {
    /// This profile with `other`'s median hold.
    fn with_hold(self, other: PayerProfile) -> PayerProfile {
        PayerProfile {
            hold_minutes_median: other.hold_minutes_median,
            ..self
        }
    }
}

#[test]
fn waits_are_scaled_and_capped() {
    let wait = |duration, scale| wall_wait(duration, scale).unwrap_or_default();
    assert_eq!(wait(600, 60.0), Duration::from_secs(10));
    assert_eq!(
        wait(3 * 3600, 60.0),
        Duration::from_secs(20),
        "capped at 20 s of wall time"
    );
    assert!(wait(3600, FAST) < Duration::from_micros(1));
    assert_eq!(wall_wait(0, 60.0), None);
    assert_eq!(
        wait(60, 0.0),
        Duration::from_secs(60),
        "a non-positive scale is real time"
    );
}

#[tokio::test]
async fn a_call_at_a_huge_time_scale_ends_at_once() {
    let dialer = SimulatedPayerDialer::new();
    let call = job(
        claim_status(),
        inputs("Medicare Part B - Novitas", &[("ptan", "AB1234")]),
        0,
        1,
        3,
    );
    let report = tokio::time::timeout(Duration::from_secs(1), dialer.place(call)).await;
    assert!(report.expect("no wall-time wait").duration_seconds > 60);
}
