//! The OpenAPI 3.1 document of the client API, derived from the wire types (`crate::wire`) and the route
//! table (`routes::client_api`), and rendered once per deployment: the auth header names, the token realm
//! and the payer-lookup source follow `server.auth_header_word`, `server.product_word` and
//! `server.lookup_source_word`.

mod components;
mod examples;
mod operations;

use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;

use crate::configuration::ServerSettings;
use crate::wire::{
    AuthErrorOut, BatchCreatedOut, CreateIn, CreateOut, CreateRejectedOut, ErrorOut, HealthOut,
    InputValueIn, ReadyOut, RequestListOut, RequestOut, RequiredInputsOut, RequiredPayerInputsIn,
    RequiredPayerInputsOut, SchemaDetailOut, SchemaListOut, TokenErrorOut, TokenOut,
    WebhookPayloadOut,
};

/// The deployment's words, as the document shows them.
#[derive(Clone, Debug)]
pub struct Words {
    /// The token realm.
    pub product: String,
    /// `{word}-API-Key` / `{word}-API-Secret`.
    pub auth_header: String,
    /// `payerLookup.phoneNumberSource` of the built-in directory.
    pub lookup_source: String,
}

impl Words {
    /// The words of a server's settings.
    pub fn of(server: &ServerSettings) -> Words {
        Words {
            product: server.product_word.clone(),
            auth_header: server.auth_header_word.clone(),
            lookup_source: server.lookup_source_word.clone(),
        }
    }
}

/// What does not depend on the deployment: metadata, tags and every body type (nested types come along).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard client API",
        version = "1.0.0",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "/", description = "This server")),
    tags(
        (name = "Health", description = "Probes."),
        (name = "Authentication", description = "Credentials to bearer token."),
        (name = "Schemas", description = "What a request returns and what it needs."),
        (name = "Requests", description = "Create and read extraction requests."),
        (name = "Recordings", description = "Call audio behind signed links."),
        (name = "Legacy", description = "The retired calls interface: every endpoint answers 410."),
        (name = "Webhooks", description = "Outbound notifications to the client."),
    ),
    components(schemas(
        HealthOut, ReadyOut, TokenOut, AuthErrorOut, TokenErrorOut, ErrorOut, SchemaListOut,
        SchemaDetailOut, RequiredInputsOut, RequiredPayerInputsIn, RequiredPayerInputsOut, CreateIn,
        CreateOut, CreateRejectedOut, BatchCreatedOut, RequestOut, RequestListOut, WebhookPayloadOut,
        InputValueIn,
    )),
)]
struct Base;

/// The document as a deployment with `words` serves it.
pub fn document(words: &Words) -> Document {
    let mut document = Base::openapi();
    document.info.description = Some(
        include_str!("description.md")
            .replace("{auth}", &words.auth_header)
            .trim_end()
            .to_owned(),
    );
    components::add(&mut document, words);
    operations::add(&mut document);
    examples::add(&mut document);
    document
}

/// The served JSON.
pub fn render(words: &Words) -> String {
    document(words)
        .to_pretty_json()
        .expect("the document serializes")
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn words() -> Words {
        Words {
            product: "Acme".into(),
            auth_header: "Robodialer".into(),
            lookup_source: "superdial".into(),
        }
    }

    #[test]
    fn every_endpoint_of_the_route_table_is_documented_with_its_method_and_tag() {
        let document: Value = serde_json::from_str(&render(&words())).unwrap();
        let endpoints = crate::routes::client_api();
        assert!(endpoints.len() >= 11, "{} endpoints", endpoints.len());
        for endpoint in endpoints {
            let method = serde_json::to_value(&endpoint.method).unwrap();
            let operation = &document["paths"][&endpoint.path][method.as_str().unwrap()];
            assert!(
                operation.is_object(),
                "{method} {} is documented",
                endpoint.path
            );
            assert_eq!(operation["tags"][0], endpoint.tag);
        }
    }

    #[test]
    fn every_reference_resolves() {
        let document: Value = serde_json::from_str(&render(&words())).unwrap();
        if let Ok(path) = std::env::var("SWITCHBOARD_DUMP_OPENAPI") {
            std::fs::write(path, render(&words())).unwrap();
        }
        fn walk<'a>(node: &'a Value, refs: &mut Vec<&'a str>) {
            match node {
                Value::Object(map) => {
                    if let Some(Value::String(reference)) = map.get("$ref") {
                        refs.push(reference);
                    }
                    map.values().for_each(|v| walk(v, refs));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, refs)),
                _ => {}
            }
        }
        let mut refs = Vec::new();
        walk(&document, &mut refs);
        assert!(refs.len() > 40, "{} references", refs.len());
        for reference in refs {
            let pointer = reference.strip_prefix('#').expect("local reference");
            assert!(
                document.pointer(pointer).is_some(),
                "{reference} does not resolve"
            );
        }
    }
}
