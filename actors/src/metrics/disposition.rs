//! How a call's disposition is named in labels, in storage and on the wire.

use switchboard_storage::Disposition;

/// The snake_case name a disposition has in storage and on the wire.
pub(crate) fn disposition_label(disposition: Disposition) -> &'static str {
    match disposition {
        Disposition::Completed => "completed",
        Disposition::Voicemail => "voicemail",
        Disposition::HoldTimeout => "hold_timeout",
        Disposition::Referred => "referred",
        Disposition::Failed => "failed",
    }
}
