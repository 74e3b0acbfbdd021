//! `[dialer] cost_per_minute` and `[electronic] cost_per_transaction` validated: what a call without a
//! platform price and a clearinghouse inquiry cost, in US dollars, read into the exact units requests are
//! priced in ([`Prices`]).

use switchboard_actors::cost::{usd_micros, Prices, MAX_USD};

use super::specs::SpecError;

/// `cost_per_minute` when the configuration names none.
const DEFAULT_PER_MINUTE: f64 = 0.12;
/// `cost_per_transaction` when the configuration names none.
const DEFAULT_PER_TRANSACTION: f64 = 0.30;

/// The two rates, each a finite number of dollars from 0 to [`MAX_USD`] (kept to a millionth of a
/// dollar).
pub(super) fn validate_prices(
    per_minute: Option<f64>,
    per_transaction: Option<f64>,
) -> Result<Prices, SpecError> {
    Ok(Prices {
        per_minute_micros: rate("dialer.cost_per_minute", per_minute, DEFAULT_PER_MINUTE)?,
        per_transaction_micros: rate(
            "electronic.cost_per_transaction",
            per_transaction,
            DEFAULT_PER_TRANSACTION,
        )?,
    })
}

fn rate(key: &str, value: Option<f64>, default: f64) -> Result<u64, SpecError> {
    let value = value.unwrap_or(default);
    usd_micros(value).ok_or_else(|| {
        SpecError::new(
            key,
            format!("{value} is not a price: it must be a finite number of US dollars from 0 to {MAX_USD}, such as {default:.2}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_default_read_exactly_and_refuse_what_is_not_a_price() {
        let prices = validate_prices(None, None).unwrap();
        assert_eq!(prices.per_minute_micros, 120_000);
        assert_eq!(prices.per_transaction_micros, 300_000);
        let prices = validate_prices(Some(0.0), Some(1.0)).unwrap();
        assert_eq!(prices.per_minute_micros, 0);
        assert_eq!(prices.per_transaction_micros, 1_000_000);
        for bad in [-0.12, f64::NAN, f64::INFINITY, 2e6] {
            let err = validate_prices(Some(bad), None).unwrap_err();
            assert_eq!(err.key, "dialer.cost_per_minute", "{bad}");
            let err = validate_prices(None, Some(bad)).unwrap_err();
            assert_eq!(err.key, "electronic.cost_per_transaction", "{bad}");
        }
    }
}
