//! The document's deployment-dependent components: the security schemes named with the auth header word,
//! the shared error responses (the 401 names the realm), and the payer-lookup source values.

use serde_json::{json, Value};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{Object, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ComponentsBuilder, OpenApi as Document};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder, Schema};

use super::Words;
use crate::wire::OTHER_LOOKUP_SOURCES;

/// Names of the shared responses, as `#/components/responses/{name}`.
pub(super) const UNAUTHORIZED: &str = "Unauthorized";
pub(super) const ACCOUNT_NOT_FOUND: &str = "AccountNotFound";
pub(super) const INTERNAL_ERROR: &str = "InternalError";
pub(super) const NOT_READY: &str = "NotReady";
pub(super) const PAYLOAD_TOO_LARGE: &str = "PayloadTooLarge";
pub(super) const GONE: &str = "Gone";

/// Names of the security schemes.
pub(super) const BEARER: &str = "bearerAuth";
pub(super) const API_KEY: &str = "apiKey";
pub(super) const API_SECRET: &str = "apiSecret";

/// Adds the security schemes and shared responses, and lists the lookup source values in force.
pub(super) fn add(document: &mut Document, words: &Words) {
    let components = document
        .components
        .get_or_insert_with(|| ComponentsBuilder::new().build());
    components.add_security_scheme(
        BEARER,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some("Token from `GET /v1/auth`, valid for 1 hour."))
                .build(),
        ),
    );
    let header = |suffix: &str| format!("{}-API-{suffix}", words.auth_header);
    components.add_security_scheme(
        API_KEY,
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            header("Key"),
            format!(
                "`{}`: identifies the account (production or sandbox). Only for `GET /v1/auth`.",
                header("Key")
            ),
        ))),
    );
    components.add_security_scheme(
        API_SECRET,
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            header("Secret"),
            format!(
                "`{}`: authenticates the key. Only for `GET /v1/auth`.",
                header("Secret")
            ),
        ))),
    );
    let realm = &words.product;
    let responses = [
        (UNAUTHORIZED, unauthorized(realm)),
        (
            ACCOUNT_NOT_FOUND,
            envelope(
                "`ACCOUNT_NOT_FOUND`: the token's account no longer exists.",
                json!({ "error": "ACCOUNT_NOT_FOUND",
                        "message": "The account for these credentials no longer exists" }),
            ),
        ),
        (
            INTERNAL_ERROR,
            envelope(
                "`INTERNAL_ERROR`: unexpected server failure; retry.",
                json!({ "error": "INTERNAL_ERROR",
                        "message": "An unexpected error occurred; please retry the request." }),
            ),
        ),
        (NOT_READY, not_ready()),
        (
            PAYLOAD_TOO_LARGE,
            envelope(
                "`PAYLOAD_TOO_LARGE`: body over 8 MiB.",
                json!({ "error": "PAYLOAD_TOO_LARGE",
                        "message": "Request body exceeds the 8388608-byte limit" }),
            ),
        ),
        (
            GONE,
            envelope(
                "`GONE`: the legacy endpoint was retired on 2026-10-01; the message names its replacement.",
                json!({ "error": "GONE",
                        "message": "GET /v1/calls was retired on 2026-10-01; use GET /v1/requests instead" }),
            ),
        ),
    ];
    for (name, response) in responses {
        components
            .responses
            .insert(name.to_owned(), RefOr::T(response));
    }
    lookup_sources(
        components.schemas.get_mut("PayerLookupOut"),
        &words.lookup_source,
    );
}

/// `phoneNumberSource` takes the deployment's directory word or one of the fixed values.
fn lookup_sources(schema: Option<&mut RefOr<Schema>>, directory: &str) {
    let Some(RefOr::T(Schema::Object(lookup))) = schema else {
        panic!("PayerLookupOut is an inline object schema");
    };
    let Some(RefOr::T(Schema::Object(source))) = lookup.properties.get_mut("phoneNumberSource")
    else {
        panic!("PayerLookupOut has phoneNumberSource");
    };
    let values = std::iter::once(directory).chain(OTHER_LOOKUP_SOURCES);
    source.enum_values = Some(values.map(Value::from).collect());
}

/// A standard-envelope response with one example.
fn envelope(description: &str, example: Value) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorOut")))
                .example(Some(example))
                .build(),
        )
        .build()
}

fn unauthorized(realm: &str) -> Response {
    ResponseBuilder::new()
        .description("Bearer token missing, malformed, invalid, revoked or expired.")
        .header(
            "WWW-Authenticate",
            HeaderBuilder::new()
                .schema(Some(Object::with_type(Type::String)))
                .description(Some(format!(
                    "`Bearer realm=\"{realm}\"`, plus `error=\"invalid_token\"` and \
                     `error_description` when a token was presented."
                )))
                .build(),
        )
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("TokenErrorOut")))
                .example(Some(
                    json!({ "code": 401, "message": "Authorization token is missing" }),
                ))
                .build(),
        )
        .build()
}

fn not_ready() -> Response {
    let mut response = envelope(
        "`NOT_READY`: the server is still recovering stored work after start-up (all `/v1` routes).",
        json!({ "error": "NOT_READY", "message": "Switchboard is starting; retry shortly" }),
    );
    response.headers.insert(
        "Retry-After".to_owned(),
        HeaderBuilder::new()
            .schema(Some(Object::with_type(Type::Integer)))
            .description(Some("Seconds to wait before retrying."))
            .build()
            .into(),
    );
    response
}
