//! What a request costs, in whole US cents: each call at its end (the platform's own price where it
//! reports one, else its connected minutes, rounded up, times `[dialer] cost_per_minute`), each
//! electronic attempt at `[electronic] cost_per_transaction` per clearinghouse inquiry sent, and a
//! sandbox request nothing.
//!
//! Amounts are integers: rates and platform prices are read once into millionths of a dollar and each
//! call or attempt is rounded to the cent (half up) when it is priced, so a request's total is an exact
//! sum of what its calls show and never carries binary-fraction error. Turning cents into the wire's
//! decimal strings is left to the API crate.

use switchboard_storage::{CallReport, ElectronicRecord, Environment, RequestRecord};

/// Millionths of a dollar in one cent.
const MICROS_PER_CENT: u64 = 10_000;

/// The largest amount in dollars accepted from a configuration or a platform: far above any real price,
/// and small enough that products and sums of many of them stay exact in integers.
pub const MAX_USD: f64 = 1_000_000.0;

/// The configured rates, in millionths of a US dollar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prices {
    /// `[dialer] cost_per_minute`: one connected minute of a call whose platform reports no price.
    pub per_minute_micros: u64,
    /// `[electronic] cost_per_transaction`: one clearinghouse inquiry.
    pub per_transaction_micros: u64,
}

impl Prices {
    /// Nothing costs anything (sandbox requests).
    pub const FREE: Prices = Prices {
        per_minute_micros: 0,
        per_transaction_micros: 0,
    };

    /// The rates that apply to a request of `environment`: sandbox requests are free.
    pub fn for_environment(self, environment: Environment) -> Prices {
        match environment {
            Environment::Production => self,
            Environment::Sandbox => Prices::FREE,
        }
    }

    /// A call of `seconds` connected seconds priced by the minute, every started minute counted.
    pub fn duration_cents(self, seconds: u32) -> u64 {
        let minutes = u64::from(seconds.div_ceil(60));
        cents_of_micros(minutes.saturating_mul(self.per_minute_micros))
    }

    /// What the call `report` describes costs: the price its dialer reported, else its duration priced.
    pub fn call_cents(self, report: &CallReport) -> u64 {
        report
            .cost_cents
            .unwrap_or_else(|| self.duration_cents(report.duration_seconds))
    }

    /// `transactions` clearinghouse inquiries.
    pub fn inquiry_cents(self, transactions: u32) -> u64 {
        cents_of_micros(u64::from(transactions).saturating_mul(self.per_transaction_micros))
    }
}

/// `usd` (a configured rate, or a platform's price in dollars) in millionths of a dollar; `None` unless it
/// is a finite number from 0 to [`MAX_USD`].
pub fn usd_micros(usd: f64) -> Option<u64> {
    if !usd.is_finite() || !(0.0..=MAX_USD).contains(&usd) {
        return None;
    }
    // Within MAX_USD the product is below 2^53, so rounding it gives the nearest whole micro exactly.
    Some((usd * 1_000_000.0).round() as u64)
}

/// Whole cents of `micros`, half a cent rounded up.
pub fn cents_of_micros(micros: u64) -> u64 {
    micros.saturating_add(MICROS_PER_CENT / 2) / MICROS_PER_CENT
}

/// What a request has cost so far, by channel, in cents. Once the request is terminal nothing it is
/// made of changes (a call's price is fixed with its outcome, the electronic attempt's with its record),
/// so the amount is final.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestCost {
    /// Every call that ended.
    pub calls_cents: u64,
    /// The electronic attempt.
    pub electronic_cents: u64,
}

impl RequestCost {
    /// The cost of `record` under `prices` (the configured rates; a sandbox request is free whatever
    /// they say). A call in flight has no price yet.
    pub fn of(record: &RequestRecord, prices: Prices) -> RequestCost {
        let Some(run) = &record.run else {
            return RequestCost::default();
        };
        if record.environment == Environment::Sandbox {
            return RequestCost::default();
        }
        let calls_cents = run
            .calls
            .iter()
            .filter_map(|call| call.outcome.as_ref())
            .map(|outcome| prices.call_cents(outcome))
            .sum();
        let electronic_cents = run
            .electronic
            .as_ref()
            .map_or(0, |electronic| electronic_cents(electronic, prices));
        RequestCost {
            calls_cents,
            electronic_cents,
        }
    }

    /// Both channels together.
    pub fn total_cents(self) -> u64 {
        self.calls_cents + self.electronic_cents
    }
}

/// The stored price of an electronic attempt. A record from before prices were kept counts one inquiry
/// when the clearinghouse issued a transaction id.
fn electronic_cents(electronic: &ElectronicRecord, prices: Prices) -> u64 {
    electronic
        .cost_cents
        .unwrap_or_else(|| prices.inquiry_cents(u32::from(electronic.transaction_id.is_some())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_storage::Disposition;

    const RATES: Prices = Prices {
        per_minute_micros: 120_000,
        per_transaction_micros: 300_000,
    };

    #[test]
    fn a_call_is_priced_by_every_started_minute() {
        assert_eq!(RATES.duration_cents(0), 0);
        assert_eq!(RATES.duration_cents(1), 12);
        assert_eq!(RATES.duration_cents(60), 12);
        assert_eq!(RATES.duration_cents(61), 24);
        assert_eq!(RATES.duration_cents(421), 96);
        assert_eq!(Prices::FREE.duration_cents(3_600), 0);
    }

    #[test]
    fn a_price_the_dialer_reported_wins_over_the_duration() {
        let mut report = CallReport::new(Disposition::Completed);
        report.duration_seconds = 421;
        assert_eq!(RATES.call_cents(&report), 96);
        report.cost_cents = Some(156);
        assert_eq!(RATES.call_cents(&report), 156);
    }

    #[test]
    fn fractions_of_a_cent_round_half_up_once_per_call() {
        let odd = Prices {
            per_minute_micros: usd_micros(0.125).unwrap(),
            per_transaction_micros: usd_micros(0.305).unwrap(),
        };
        assert_eq!(odd.duration_cents(60), 13);
        assert_eq!(odd.duration_cents(120), 25);
        assert_eq!(odd.inquiry_cents(1), 31);
        assert_eq!(odd.inquiry_cents(0), 0);
        assert_eq!(cents_of_micros(4_999), 0);
        assert_eq!(cents_of_micros(5_000), 1);
    }

    #[test]
    fn only_finite_amounts_from_zero_to_the_bound_are_read() {
        assert_eq!(usd_micros(0.12), Some(120_000));
        assert_eq!(usd_micros(0.3), Some(300_000));
        assert_eq!(usd_micros(0.0), Some(0));
        assert_eq!(usd_micros(MAX_USD), Some(1_000_000_000_000));
        for refused in [-0.01, f64::NAN, f64::INFINITY, MAX_USD * 2.0] {
            assert_eq!(usd_micros(refused), None, "{refused}");
        }
    }
}
