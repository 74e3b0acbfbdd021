//! `cost` of the single read: what a request has cost, by channel, as decimal strings of US dollars with
//! two places. The amounts are whole cents (`switchboard_actors::cost`), written here without ever
//! becoming a float.

use serde::Serialize;
use switchboard_actors::cost::RequestCost;
use utoipa::ToSchema;

/// What a request cost (single read only). Final once the request is terminal; while it is `PROCESSING`,
/// what its ended calls and its electronic attempt have cost so far. Sandbox requests cost `0.00`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostOut {
    /// Always `USD`.
    #[schema(example = "USD", pattern = "^USD$")]
    pub currency: &'static str,
    /// `calls` plus `electronic`.
    #[schema(pattern = r"^\d+\.\d{2}$", example = "3.42")]
    pub amount: String,
    /// Every call that ended: the voice platform's own price where it reports one, else the call's
    /// connected minutes (each started minute) at the configured rate. Calls a person placed cost nothing.
    #[schema(pattern = r"^\d+\.\d{2}$", example = "3.12")]
    pub calls: String,
    /// The clearinghouse inquiries, at the configured price per transaction.
    #[schema(pattern = r"^\d+\.\d{2}$", example = "0.30")]
    pub electronic: String,
}

impl From<RequestCost> for CostOut {
    fn from(cost: RequestCost) -> CostOut {
        CostOut {
            currency: "USD",
            amount: dollars(cost.total_cents()),
            calls: dollars(cost.calls_cents),
            electronic: dollars(cost.electronic_cents),
        }
    }
}

/// `cents` as dollars with two places: `342` is `"3.42"`, `5` is `"0.05"`.
pub fn dollars(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_are_written_as_dollars_with_two_places() {
        assert_eq!(dollars(0), "0.00");
        assert_eq!(dollars(5), "0.05");
        assert_eq!(dollars(30), "0.30");
        assert_eq!(dollars(342), "3.42");
        assert_eq!(dollars(123_456_789), "1234567.89");
    }

    #[test]
    fn the_amount_is_the_sum_of_the_channels() {
        let out = CostOut::from(RequestCost {
            calls_cents: 312,
            electronic_cents: 30,
        });
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            serde_json::json!({"currency": "USD", "amount": "3.42", "calls": "3.12", "electronic": "0.30"})
        );
    }
}
