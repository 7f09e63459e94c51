//! The gateway's OpenAPI 3.1 document, generated from the operation table: one path item per
//! operation with its parameters, request body and response schemas (from the wire types'
//! `utoipa::ToSchema`), plus the streaming turn route. `echod serve` serves it at
//! `/api/openapi.json`; the repository keeps a copy (`openapi.json`) that a test keeps fresh.

use crate::operations::{Operation, OperationVisitor, Schema, visit_operations};
use crate::wire::ErrorBody;
use crate::wire::{EventEnvelope, PairRequest, Paired, SendTurn};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use utoipa::{PartialSchema, ToSchema};

/// The document, as JSON.
pub fn openapi_document() -> Value {
    let mut doc = Document::default();
    visit_operations(&mut doc);
    doc.add_named::<SendTurn>();
    doc.add_named::<EventEnvelope>();
    doc.add_named::<ErrorBody>();
    let turn = json!({
        "post": {
            "operationId": "send_turn",
            "summary": "Runs a turn in a session (created on first use).",
            "description": "The answer is a stream of server-sent events, one EventEnvelope (JSON) per event, ending with `turn_finished`. The client going away does not stop the turn; `POST /api/turns/{turn_id}/cancel` does.",
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SendTurn"}}}
            },
            "responses": {
                "200": {
                    "description": "Server-sent events: `data:` is an EventEnvelope",
                    "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/EventEnvelope"}}}
                },
                "default": error_response()
            }
        }
    });
    doc.paths.insert("/api/turns".into(), turn);
    doc.add_named::<PairRequest>();
    doc.add_named::<Paired>();
    let pair = json!({
        "post": {
            "operationId": "pair",
            "summary": "Exchanges the one-time code of the address `echod serve` printed (`#pair=…`) for a token.",
            "description": "Needs no token. A code works once, and only for the run that printed it; after each pairing the server prints a fresh address for the next browser. The token dies with the process.",
            "security": [],
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PairRequest"}}}
            },
            "responses": {
                "200": {
                    "description": "The token for the rest of this run",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Paired"}}}
                },
                "default": error_response()
            }
        }
    });
    doc.paths.insert("/api/pair".into(), pair);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Echo Desk gateway",
            "description": "The engine's operations over loopback HTTP (`echod serve`). Every request but `/api/pair` needs `Authorization: Bearer <token>`: the `serve-token` file in the data directory, or the token a browser page got by pairing. Generated from the operation table; do not edit.",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "paths": doc.paths,
        "components": {
            "schemas": doc.schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}
        },
        "security": [{"bearer": []}],
    })
}

fn error_response() -> Value {
    json!({
        "description": "An error: `{\"error\": {\"code\", \"message\"}}`",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    })
}

#[derive(Default)]
struct Document {
    paths: BTreeMap<String, Value>,
    schemas: BTreeMap<String, Value>,
}

impl Document {
    fn add_schemas(&mut self, named: Vec<(String, Schema)>) {
        for (name, schema) in named {
            self.schemas.entry(name).or_insert_with(|| to_json(&schema));
        }
    }

    fn add_named<T: ToSchema>(&mut self) {
        let mut named = vec![(T::name().into_owned(), T::schema())];
        T::schemas(&mut named);
        self.add_schemas(named);
    }
}

fn to_json(schema: &Schema) -> Value {
    // A schema always serialises; `Null` would only hide a utoipa bug, which the drift test
    // would then show as a changed document.
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// The `{name}`s of a route, in order.
pub fn path_params(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

impl OperationVisitor for Document {
    fn visit<O: Operation>(&mut self) {
        let mut named = Vec::new();
        O::schemas(&mut named);
        O::response_schemas(&mut named);
        self.add_schemas(named);

        let mut request = to_json(&<O as PartialSchema>::schema());
        // A request that is another type under a new name (`UpdateProvider`) is a reference.
        if let Some(name) = request
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            && let Some(target) = self.schemas.get(name)
        {
            let description = request.get("description").cloned();
            request = target.clone();
            if let Some(description) = description {
                request["description"] = description;
            }
        }
        let description = request
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let properties = request
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = request
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let in_path = path_params(O::PATH);

        let mut parameters = Vec::new();
        for name in &in_path {
            parameters.push(json!({
                "name": name,
                "in": "path",
                "required": true,
                "schema": properties.get(*name).cloned().unwrap_or(json!({"type": "string"})),
            }));
        }
        let rest: Map<String, Value> = properties
            .into_iter()
            .filter(|(name, _)| !in_path.contains(&name.as_str()))
            .collect();
        let mut operation = Map::new();
        operation.insert("operationId".into(), json!(O::NAME));
        operation.insert("summary".into(), json!(description));
        if O::METHOD.has_body() {
            if !rest.is_empty() {
                let body_required: Vec<&String> =
                    required.iter().filter(|r| rest.contains_key(*r)).collect();
                let mut schema =
                    json!({"type": "object", "properties": rest, "additionalProperties": false});
                if !body_required.is_empty() {
                    schema["required"] = json!(body_required);
                }
                operation.insert(
                    "requestBody".into(),
                    json!({"required": true, "content": {"application/json": {"schema": schema}}}),
                );
            }
        } else {
            for (name, schema) in rest {
                parameters.push(json!({
                    "name": name,
                    "in": "query",
                    "required": required.contains(&name),
                    "schema": schema,
                }));
            }
        }
        if !parameters.is_empty() {
            operation.insert("parameters".into(), Value::Array(parameters));
        }
        let response = if std::any::TypeId::of::<O::Response>() == std::any::TypeId::of::<()>() {
            ("204", json!({"description": "Done"}))
        } else {
            (
                "200",
                json!({
                    "description": "OK",
                    "content": {"application/json": {"schema": to_json(&<O::Response as PartialSchema>::schema())}}
                }),
            )
        };
        let mut responses = Map::new();
        responses.insert(response.0.into(), response.1);
        responses.insert("default".into(), error_response());
        operation.insert("responses".into(), Value::Object(responses));
        let item = self
            .paths
            .entry(O::PATH.to_string())
            .or_insert_with(|| json!({}));
        // OpenAPI names path-item operations in lower case.
        item[O::METHOD.as_str().to_ascii_lowercase()] = Value::Object(operation);
    }
}
