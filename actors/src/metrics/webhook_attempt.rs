//! [`WebhookAttempt`]: the outcomes of one webhook attempt that `switchboard_webhook_attempts_total` counts
//! apart, and the label each carries.

/// How one webhook attempt ended, as `switchboard_webhook_attempts_total` labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookAttempt {
    /// 2xx: the delivery is acknowledged.
    Delivered,
    /// 400 or 404: delivery stops for good.
    Rejected,
    /// 5xx: retried.
    ServerError,
    /// Any other status (other 4xx, 3xx, which is not followed): the round ends.
    OtherStatus,
    /// Timeout, refused connection or other failure before a response: retried.
    TransportError,
    /// The target was refused before sending (a private address, a bad URL).
    TargetRefused,
}

impl WebhookAttempt {
    pub(super) const ALL: [WebhookAttempt; 6] = [
        WebhookAttempt::Delivered,
        WebhookAttempt::Rejected,
        WebhookAttempt::ServerError,
        WebhookAttempt::OtherStatus,
        WebhookAttempt::TransportError,
        WebhookAttempt::TargetRefused,
    ];

    /// The outcome of an attempt that got an HTTP response with `status`.
    pub fn for_status(status: u16) -> WebhookAttempt {
        match status {
            200..=299 => WebhookAttempt::Delivered,
            400 | 404 => WebhookAttempt::Rejected,
            500..=599 => WebhookAttempt::ServerError,
            _ => WebhookAttempt::OtherStatus,
        }
    }

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookAttempt::Delivered => "delivered",
            WebhookAttempt::Rejected => "rejected",
            WebhookAttempt::ServerError => "server_error",
            WebhookAttempt::OtherStatus => "other_status",
            WebhookAttempt::TransportError => "transport_error",
            WebhookAttempt::TargetRefused => "target_refused",
        }
    }
}
