//! Record types: what is stored, one file per kind. These are storage's own serde types; the JSON wire
//! format lives in the API layer, because the on-disk format is a promise kept across releases.

mod account;
mod delivery;
mod electronic;
mod failure;
mod operator;
mod payer;
mod payer_stats;
mod request;
mod run;
mod schema;
mod task;

pub use account::{AccountRecord, CredentialRecord, Environment, Feature, PhoneBookEntry};
pub use delivery::{AttemptRecord, DeliveryRecord, DeliveryStatus, UNFINISHED_ATTEMPT};
pub use electronic::{
    AmountQualifier, BenefitKind, BenefitSource, ClaimElement, CoverageQualifier,
    ElectronicMapping, ElectronicSource, NetworkQualifier, PlanElement,
};
pub use failure::{FailureCategory, FailureCode, FailureRecord};
pub use operator::{OperatorRecord, Role};
pub use payer::{CallingHoursRecord, PayerRecord};
pub use payer_stats::{
    CallPhases, HourStats, LearnedCall, PayerDayRecord, PayerLearning, PayerWeek,
    HOLD_BUCKET_SECONDS,
};
pub use request::{
    DialTarget, NumberSource, PayerLookupRecord, RequestRecord, RequestState, TraceRecord,
};
pub use run::{
    CallOutcomeRecord, CallRecord, CallReport, Disposition, ElectronicRecord, Modality,
    PlatformCallRecord, RunRecord, StepRecord, StepState,
};
pub use schema::{
    FieldCondition, FieldRecord, FieldType, SchemaDefinition, SchemaHeadRecord, SchemaVersionRecord,
};
pub use task::{TaskRecord, TaskState, CLAIM_MINUTES};
