//! The document's paths: every endpoint of the client API's route table with the security it declares and
//! the answers every `/v1` operation shares, the retired interface, and the outgoing webhook.

use actix_web::http::Method;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{Object, ObjectBuilder, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{
    ContentBuilder, Deprecated, OpenApi as Document, PathItem, Paths, Ref, RefOr, Required,
    ResponseBuilder,
};

use super::components::{
    ACCOUNT_NOT_FOUND, API_KEY, API_SECRET, BEARER, GONE, INTERNAL_ERROR, NOT_READY,
    PAYLOAD_TOO_LARGE, UNAUTHORIZED,
};
use crate::routes::{client_api, Access, RETIRED};

/// Adds every path and the webhook.
pub(super) fn add(document: &mut Document) {
    document.security = Some(vec![SecurityRequirement::new(BEARER, Vec::<String>::new())]);
    for endpoint in client_api() {
        let mut operation = endpoint.operation;
        operation.tags = Some(vec![endpoint.tag.to_owned()]);
        let operation = with_shared_answers(operation, &endpoint.path, endpoint.access);
        document
            .paths
            .add_path_operation(&endpoint.path, vec![endpoint.method], operation);
    }
    for retired in RETIRED {
        for (method, id, what, replacement) in retired.methods {
            let operation = retired_operation(retired.path, id, what, replacement);
            document
                .paths
                .add_path_operation(retired.path, vec![http_method(method)], operation);
        }
    }
    document.webhooks = Some(webhooks());
}

/// Declares the operation's security and adds the answers it shares with its kind.
fn with_shared_answers(mut operation: Operation, path: &str, access: Access) -> Operation {
    match access {
        // The document-wide requirement is the bearer token.
        Access::Bearer => {
            shared(&mut operation, "401", UNAUTHORIZED);
            shared(&mut operation, "404", ACCOUNT_NOT_FOUND);
        }
        Access::Credentials => {
            let both = SecurityRequirement::new(API_KEY, Vec::<String>::new())
                .add(API_SECRET, Vec::<String>::new());
            operation.security = Some(vec![both]);
        }
        Access::Open => operation.security = Some(Vec::new()),
        Access::Operator(_) => unreachable!("the client API has no operator routes"),
    }
    if operation.request_body.is_some() {
        shared(&mut operation, "413", PAYLOAD_TOO_LARGE);
    }
    // The probes answer before readiness and never fail inside; every `/v1` operation may.
    if path.starts_with("/v1/") {
        shared(&mut operation, "500", INTERNAL_ERROR);
        shared(&mut operation, "503", NOT_READY);
    }
    operation
}

/// The shared response `name` for `status`, unless the operation documents its own.
fn shared(operation: &mut Operation, status: &str, name: &str) {
    operation
        .responses
        .responses
        .entry(status.to_owned())
        .or_insert_with(|| RefOr::Ref(Ref::from_response_name(name)));
}

fn retired_operation(path: &str, id: &str, what: &str, replacement: &str) -> Operation {
    let mut operation = OperationBuilder::new()
        .tag("Legacy")
        .operation_id(Some(id))
        .summary(Some(format!("Legacy: {what}")))
        .description(Some(format!(
            "Retired on 2026-10-01: answers 410 `GONE`. Use `{replacement}` instead."
        )))
        .deprecated(Some(Deprecated::True))
        .response("410", Ref::from_response_name(GONE))
        .response("503", Ref::from_response_name(NOT_READY))
        .build();
    operation.security = Some(Vec::new());
    for name in path_parameters(path) {
        let parameter = ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Path)
            .required(Required::True)
            .schema(Some(Object::with_type(Type::String)))
            .build();
        operation
            .parameters
            .get_or_insert_with(Vec::new)
            .push(RefOr::T(parameter));
    }
    operation
}

/// `{name}` segments of a path.
fn path_parameters(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
}

fn http_method(method: &Method) -> HttpMethod {
    match *method {
        Method::POST => HttpMethod::Post,
        Method::PUT => HttpMethod::Put,
        Method::DELETE => HttpMethod::Delete,
        _ => HttpMethod::Get,
    }
}

/// `requestTerminal`: the POST a client's webhook receiver gets.
fn webhooks() -> Paths {
    let signature = ParameterBuilder::new()
        .name("X-Webhook-Signature")
        .parameter_in(ParameterIn::Header)
        .required(Required::True)
        .description(Some(
            "Bare lowercase hex HMAC-SHA256 of the raw body, no prefix.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[0-9a-f]{64}$")),
        ))
        .build();
    let body = RequestBodyBuilder::new()
        .required(Some(Required::True))
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("WebhookPayloadOut")))
                .example(Some(serde_json::json!({
                    "internalId": "claim-1001", "requestBatchId": "b-1",
                    "requestId": "r-1", "state": "SUCCESS"
                })))
                .build(),
        )
        .build();
    let answer = |text: &str| ResponseBuilder::new().description(text).build();
    let mut operation = OperationBuilder::new()
        .tag("Webhooks")
        .operation_id(Some("requestTerminalWebhook"))
        .summary(Some("A request reached a terminal state"))
        .description(Some(include_str!("webhook.md").trim_end()))
        .parameter(signature)
        .request_body(Some(body))
        .response(
            "200",
            answer("Any 2xx acknowledges. Return quickly and process in the background."),
        )
        .response("400", answer("Stops delivery permanently."))
        .response("404", answer("Stops delivery permanently."))
        .response(
            "default",
            answer("Any other answer (including 401, 403, 5xx) or a timeout is retried."),
        )
        .build();
    operation.security = Some(Vec::new());
    let mut webhooks = Paths::new();
    webhooks.paths.insert(
        "requestTerminal".to_owned(),
        PathItem::new(HttpMethod::Post, operation),
    );
    webhooks
}
