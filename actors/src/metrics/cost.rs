//! `switchboard_cost_usd_total{channel}`: what finished requests cost, by channel. Counted in whole cents
//! and shown in dollars at each scrape, so the total is exact however many requests are added (a float
//! counter adding 0.01 at a time drifts).

use prometheus::core::{Collector, Desc};
use prometheus::proto::{Counter, MetricFamily};
use prometheus::{IntCounterVec, Opts, Registry};

use super::register;
use crate::cost::RequestCost;

/// The channels, as labelled.
const CHANNELS: [&str; 2] = ["call", "electronic"];

/// The counter, in cents inside, in dollars outside.
#[derive(Clone)]
pub(super) struct CostMetrics {
    cents: IntCounterVec,
}

impl CostMetrics {
    pub(super) fn register(registry: &Registry) -> CostMetrics {
        let cents = IntCounterVec::new(
            Opts::new(
                "switchboard_cost_usd_total",
                "What requests that reached a terminal state since start-up cost, in US dollars, by channel \
                 (call: voice platforms' prices or connected minutes at [dialer] cost_per_minute; electronic: \
                 clearinghouse inquiries at [electronic] cost_per_transaction); sandbox requests cost nothing",
            ),
            &["channel"],
        )
        .expect("metric options are valid");
        for channel in CHANNELS {
            cents.with_label_values(&[channel]);
        }
        register(registry, Ok(CostMetrics { cents }))
    }

    /// A request's final cost, counted once: when its terminal record is written.
    pub(super) fn add(&self, cost: RequestCost) {
        self.cents
            .with_label_values(&["call"])
            .inc_by(cost.calls_cents);
        self.cents
            .with_label_values(&["electronic"])
            .inc_by(cost.electronic_cents);
    }
}

impl Collector for CostMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.cents.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut families = self.cents.collect();
        for family in &mut families {
            for metric in family.mut_metric() {
                let cents = metric.get_counter().get_value();
                let mut dollars = Counter::default();
                // One division of an exact integer per scrape: the shown value is the nearest double.
                dollars.set_value(cents / 100.0);
                metric.set_counter(dollars);
            }
        }
        families
    }
}
