//! `GET /admin/v1/openapi.json`: the OpenAPI 3.1 document of the admin API, derived from its route table
//! (`admin_api`) and the admin wire types as the client API's `/openapi.json` is from its own, so an admin
//! operation cannot be routed without being documented. Any operator may read it (any role): it tells
//! how to call the API, which every operator does, and nothing about the data behind it. Without an
//! operator token it is 401, as the rest of `/admin/v1`.

use actix_web::http::header::{self, ContentType};
use actix_web::{web, HttpResponse};
use serde_json::{json, Value};
use switchboard_storage::Feature;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, OpenApi as Document, Ref, RefOr, ResponseBuilder,
};
use utoipa::OpenApi;

use super::{accounts, backups, clock, operators, task_actions};
use crate::auth::AnyOperator;
use crate::configuration::specs::{AccountSpec, PayerSpec, SchemaSpec};
use crate::routes::{Access, Endpoint};
use crate::state::AppState;
use crate::wire::{
    AccountListOut, AccountOut, AdminRefusalOut, AuditCheckpointOut, AuditPageOut, AuditVerifyIn,
    AuditVerifyOut, BackupOut, ClockMovedOut, ClockOut, CredentialIssuedOut, DeliveriesOut,
    ErrorOut, OperatorCreatedOut, OperatorListOut, OrchestrationStatsOut, PayerListOut, PayerOut,
    RedeliveryOut, SchemaHeadOut,
};

/// Where the document is served.
pub(super) const PATH: &str = "/admin/v1/openapi.json";

const OPERATOR_TOKEN: &str = "operatorToken";
const UNAUTHORIZED: &str = "Unauthorized";
const FORBIDDEN: &str = "Forbidden";
const INTERNAL_ERROR: &str = "InternalError";
const PAYLOAD_TOO_LARGE: &str = "PayloadTooLarge";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard admin API",
        version = "1.0.0",
        description = "The operator's API under `/admin/v1`, present only when `server.admin_token` is set. \
            Every call takes an operator token as a bearer token; each operation names the roles it is open \
            to, and another role gets 403. Bodies use the config file's snake_case keys.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "/", description = "This server")),
    tags(
        (name = "Accounts", description = "Accounts and their key pairs."),
        (name = "Schemas", description = "Publishing and retiring schemas."),
        (name = "Payers", description = "The payer directory, and what was learned of each payer's line."),
        (name = "Clock", description = "The server's clock."),
        (name = "Webhooks", description = "Delivery logs and redelivery."),
        (name = "Orchestration", description = "Counters."),
        (name = "Operators", description = "People with a role and a token."),
        (name = "Backups", description = "Online backups of a sled store."),
        (name = "Requests", description = "Purging a request."),
        (name = "Audit", description = "The audit log and its hash chain."),
        (name = "Tasks", description = "The work queue: tasks for people where the calls could not finish."),
        (name = "Faults", description = "Deliberate failures (`server.fault_injection` only)."),
    ),
    components(schemas(
        AccountListOut, AccountOut, AccountSpec, accounts::NewCredentialIn, CredentialIssuedOut,
        SchemaSpec, SchemaHeadOut, PayerSpec, PayerListOut, PayerOut, clock::MoveClockIn, ClockOut,
        ClockMovedOut, DeliveriesOut, RedeliveryOut, OrchestrationStatsOut, operators::NewOperatorIn,
        OperatorCreatedOut, OperatorListOut, backups::BackupIn, BackupOut, AuditPageOut,
        AuditVerifyOut, AuditVerifyIn, AuditCheckpointOut, ErrorOut, AdminRefusalOut,
        crate::wire::TaskListOut, crate::wire::TaskOut, crate::wire::TaskSheetOut,
        crate::wire::QuestionOut, crate::wire::SheetCallOut, crate::wire::TaskErrorOut,
        task_actions::CompleteIn, task_actions::PersonCallIn, task_actions::GiveUpIn,
        crate::wire::PayerStatsOut, crate::wire::PayerHourOut,
    )),
)]
struct Base;

/// The document of the admin API as a server with (or without) fault injection serves it.
pub fn document(fault_injection: bool) -> Document {
    let mut document = Base::openapi();
    let components = document
        .components
        .get_or_insert_with(|| ComponentsBuilder::new().build());
    components.add_security_scheme(
        OPERATOR_TOKEN,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "`server.admin_token` (the operator `admin`) or a token from `POST /admin/v1/operators`.",
                ))
                .build(),
        ),
    );
    for (name, description, schema, example) in [
        (
            UNAUTHORIZED,
            "No operator token, or one nobody holds.",
            "AdminRefusalOut",
            json!({ "error": "UNAUTHORIZED" }),
        ),
        (
            FORBIDDEN,
            "The operator's role may not make this call.",
            "AdminRefusalOut",
            json!({ "error": "FORBIDDEN" }),
        ),
        (
            INTERNAL_ERROR,
            "`INTERNAL_ERROR`: unexpected server failure.",
            "ErrorOut",
            json!({ "error": "INTERNAL_ERROR", "message": "An unexpected error occurred; please retry the request." }),
        ),
        (
            PAYLOAD_TOO_LARGE,
            "`PAYLOAD_TOO_LARGE`: body over 8 MiB.",
            "ErrorOut",
            json!({ "error": "PAYLOAD_TOO_LARGE", "message": "Request body exceeds the 8388608-byte limit" }),
        ),
    ] {
        let response = ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name(schema)))
                    .example(Some(example))
                    .build(),
            )
            .build();
        components
            .responses
            .insert(name.to_owned(), RefOr::T(response));
    }
    list_features(components.schemas.get_mut("AccountSpec"));
    list_features(components.schemas.get_mut("AccountOut"));
    document.security = Some(vec![SecurityRequirement::new(
        OPERATOR_TOKEN,
        Vec::<String>::new(),
    )]);
    for endpoint in super::admin_api(fault_injection) {
        add(&mut document, endpoint);
    }
    document
}

/// Adds one operation with its tag, its roles and the answers every admin call shares.
fn add(document: &mut Document, endpoint: Endpoint) {
    let Access::Operator(roles) = endpoint.access else {
        unreachable!("every admin operation takes an operator token");
    };
    let mut operation = endpoint.operation;
    operation.tags = Some(vec![endpoint.tag.to_owned()]);
    // Said twice: in words for a reader, and as `x-roles` for a client or a test that checks it.
    let open_to = format!("Roles: {}.", roles.join(", "));
    operation
        .extensions
        .get_or_insert_with(Default::default)
        .insert("x-roles".to_owned(), json!(roles));
    operation.description = Some(match operation.description.take() {
        Some(text) => format!("{text}\n\n{open_to}"),
        None => open_to,
    });
    let mut shared = vec![
        ("401", UNAUTHORIZED),
        ("403", FORBIDDEN),
        ("500", INTERNAL_ERROR),
    ];
    if operation.request_body.is_some() {
        shared.push(("413", PAYLOAD_TOO_LARGE));
    }
    for (status, name) in shared {
        operation
            .responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| RefOr::Ref(Ref::from_response_name(name)));
    }
    document
        .paths
        .add_path_operation(&endpoint.path, vec![endpoint.method], operation);
}

/// `features` takes the server's feature names.
fn list_features(schema: Option<&mut RefOr<Schema>>) {
    let Some(RefOr::T(Schema::Object(object))) = schema else {
        panic!("an account schema is an inline object");
    };
    let Some(RefOr::T(Schema::Array(features))) = object.properties.get_mut("features") else {
        panic!("an account schema has a features array");
    };
    let utoipa::openapi::schema::ArrayItems::RefOrSchema(item) = &mut features.items else {
        panic!("features has an item schema");
    };
    let RefOr::T(Schema::Object(item)) = item.as_mut() else {
        panic!("a feature is an inline string");
    };
    item.enum_values = Some(
        Feature::ALL
            .iter()
            .map(|f| Value::from(f.as_str()))
            .collect(),
    );
}

/// `GET /admin/v1/openapi.json`: rendered on each call, since operators fetch it rarely.
pub(super) async fn serve(_: AnyOperator, state: web::Data<AppState>) -> HttpResponse {
    let body = document(state.settings.server.fault_injection)
        .to_pretty_json()
        .expect("the document serializes");
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_admin_operation_is_documented_and_every_reference_resolves() {
        let document: Value =
            serde_json::from_str(&document(true).to_pretty_json().unwrap()).unwrap();
        if let Ok(path) = std::env::var("SWITCHBOARD_DUMP_ADMIN_OPENAPI") {
            std::fs::write(path, document.to_string()).unwrap();
        }
        for endpoint in super::super::admin_api(true) {
            let method = serde_json::to_value(&endpoint.method).unwrap();
            let operation = &document["paths"][&endpoint.path][method.as_str().unwrap()];
            assert_eq!(operation["tags"][0], endpoint.tag, "{}", endpoint.path);
        }
        fn walk(node: &Value, document: &Value) {
            match node {
                Value::Object(map) => {
                    if let Some(Value::String(reference)) = map.get("$ref") {
                        let pointer = reference.strip_prefix('#').expect("a local reference");
                        assert!(document.pointer(pointer).is_some(), "{reference}");
                    }
                    map.values().for_each(|v| walk(v, document));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, document)),
                _ => {}
            }
        }
        walk(&document, &document);
    }
}
