//! The work queue's metrics: tasks by state and the age of the oldest open one (set from the store when
//! `/metrics` is rendered), and requests answered by the channel that finished them.

use prometheus::{IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};
use switchboard_storage::{Modality, RequestRecord, RequestState, TaskState};

use super::register;

/// Channels of `switchboard_requests_completed_total`.
const CHANNELS: [&str; 3] = ["electronic", "automated_call", "person"];

/// Task states as labelled in `switchboard_tasks`.
pub const TASK_STATES: [TaskState; 5] = [
    TaskState::Open,
    TaskState::Claimed,
    TaskState::Done,
    TaskState::Abandoned,
    TaskState::Expired,
];

pub(super) struct TaskMetrics {
    tasks: IntGaugeVec,
    oldest_open: IntGauge,
    completed: IntCounterVec,
}

impl TaskMetrics {
    pub(super) fn register(registry: &Registry) -> TaskMetrics {
        let tasks = register(
            registry,
            IntGaugeVec::new(
                Opts::new(
                    "switchboard_tasks",
                    "Tasks for people (human_fallback), by state, as stored when scraped",
                ),
                &["state"],
            ),
        );
        let oldest_open = register(
            registry,
            IntGauge::new(
                "switchboard_oldest_open_task_seconds",
                "Age of the oldest open or claimed task in seconds (0 when none is open)",
            ),
        );
        let completed = register(
            registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_requests_completed_total",
                    "Requests ending SUCCESS or PARTIAL since start-up, by the channel that finished them \
                     (electronic, automated_call, person); with switchboard_requests_finished_total it \
                     gives the completion rate by channel",
                ),
                &["channel"],
            ),
        );
        for state in TASK_STATES {
            tasks.with_label_values(&[state.as_str()]);
        }
        for channel in CHANNELS {
            completed.with_label_values(&[channel]);
        }
        TaskMetrics {
            tasks,
            oldest_open,
            completed,
        }
    }

    pub(super) fn set_tasks(&self, counts: &[(TaskState, usize)], oldest_open_seconds: i64) {
        for (state, count) in counts {
            self.tasks
                .with_label_values(&[state.as_str()])
                .set(*count as i64);
        }
        self.oldest_open.set(oldest_open_seconds.max(0));
    }

    pub(super) fn completed(&self, channel: &'static str) {
        self.completed.with_label_values(&[channel]).inc();
    }
}

/// The channel that finished `terminal`, when it ends `SUCCESS` or `PARTIAL`: a person who completed its
/// task, the electronic channel alone, or the automated calls.
pub(super) fn completion_channel(terminal: &RequestRecord) -> Option<&'static str> {
    if !matches!(
        terminal.state,
        RequestState::Success | RequestState::Partial
    ) {
        return None;
    }
    let run = terminal.run.as_ref();
    let by_person = run
        .and_then(|run| run.task.as_ref())
        .is_some_and(|task| task.state == TaskState::Done);
    Some(if by_person {
        "person"
    } else if run.and_then(|run| run.modality) == Some(Modality::DigitalOnly) {
        "electronic"
    } else {
        "automated_call"
    })
}
