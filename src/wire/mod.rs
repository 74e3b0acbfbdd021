//! The JSON wire format: every body that crosses the client API, as a type with its direction in the
//! name (`...In` is read, `...Out` is written), and the formatting rules they share. Storage records are
//! converted here, so the on-disk format and the wire format evolve separately. The OpenAPI document
//! (`crate::openapi`) is derived from these types; the admin API's answers are in `admin`.

mod admin;
mod call_trace;
mod calls;
mod cost;
mod create;
mod deliveries;
mod errors;
mod listing;
mod lookup;
mod outcome;
mod payer_stats;
mod read;
mod request;
mod schemas;
mod service;
mod tasks;
mod time;
mod webhook;

pub use admin::{
    AccountListOut, AccountOut, AdminRefusalOut, AuditCheckpointOut, AuditEventOut, AuditPageOut,
    AuditPartyOut, AuditVerifyIn, AuditVerifyOut, BackupOut, ClockMovedOut, ClockOut,
    CredentialIssuedOut, CredentialOut, DeliveriesOut, OperatorCreatedOut, OperatorListOut,
    OperatorOut, OrchestrationStatsOut, PayerListOut, PayerOut, PhoneBookEntryOut, RedeliveryOut,
    SchemaHeadOut,
};
pub use call_trace::{
    CallStepErrorOut, CallStepOut, ContributingCallOut, PlacedByOut, StepStateOut,
};
pub use calls::{AttemptOut, DispositionOut};
pub use cost::{dollars, CostOut};
pub use create::{
    BatchCreatedOut, BatchEntryOut, CreateBatchIn, CreateIn, CreateOut, CreateRejectedOut,
    CreateRequestIn, CreatedOut, InputValueIn,
};
pub use deliveries::{WebhookAttemptOut, WebhookDeliveryOut};
pub use errors::{AuthErrorCodeOut, AuthErrorOut, ErrorOut, InvalidInputsOut, TokenErrorOut};
pub use listing::RequestListOut;
pub use lookup::{PayerLookupOut, OTHER_LOOKUP_SOURCES};
pub use outcome::{DataCompletenessOut, FailureOut, ModalityOut, RequestStateOut};
pub use payer_stats::{PayerHourOut, PayerStatsOut};
pub use read::{ReadContext, ReadKind};
pub use request::RequestOut;
pub use schemas::{
    FieldListOut, PayerInputsOut, PayerMatchOut, PayerUnresolvedOut, RequiredInputsOut,
    RequiredPayerInputsIn, RequiredPayerInputsOut, ResultsFieldOut, SchemaDetailOut, SchemaListOut,
    SchemaRowOut,
};
pub use service::{HealthOut, ReadyOut, TokenOut};
pub use tasks::{QuestionOut, SheetCallOut, TaskErrorOut, TaskListOut, TaskOut, TaskSheetOut};
pub use time::format_timestamp;
pub use webhook::{TerminalStateOut, WebhookPayloadOut};
