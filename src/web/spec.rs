//! The OpenAPI 3.1 document: collected from the routes, then completed so that
//! every operation declares an ErrorEnvelope for each error status it can answer.

use super::routes::ROUTERS;
use crate::envelope::{Category, Code, ErrorBody, ErrorEnvelope, Meta};
use crate::tools::Hub;
use axum::Router;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, ResponseBuilder};
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;

/// Error statuses every /api operation declares: the shared four, and the
/// access checks that run before any route (token 401, Origin 403, Host 421).
pub const SHARED_ERRORS: [u16; 7] = [400, 401, 403, 404, 421, 500, 503];

/// The /api routes and the finished spec describing them.
pub fn api_router() -> (Router<Hub>, OpenApi) {
    let mut combined = OpenApiRouter::with_openapi(base());
    for spec in ROUTERS {
        combined = combined.merge((spec.router)());
    }
    let (router, mut openapi) = combined.split_for_parts();
    complete(&mut openapi);
    (router, with_text_rules(openapi))
}

/// The spec with its text-rule markers spelled out as patterns
/// (tools::schema::spell_out_rules), in components and parameters alike.
fn with_text_rules(mut openapi: OpenApi) -> OpenApi {
    use crate::tools::schema::spell_out_rules;
    if let Some(components) = openapi.components.as_mut() {
        components.schemas.values_mut().for_each(spell_out_rules);
    }
    for item in openapi.paths.paths.values_mut() {
        for operation in operations(item) {
            let parameters = operation.parameters.iter_mut().flatten();
            for schema in parameters.filter_map(|parameter| match parameter {
                RefOr::T(parameter) => parameter.schema.as_mut(),
                RefOr::Ref(_) => None,
            }) {
                spell_out_rules(schema);
                never_null(schema);
            }
        }
    }
    openapi
}

/// A parameter is present or absent, never null: an optional one's schema
/// (`Option<String>` gives `["string", "null"]`) keeps only its real type.
fn never_null(schema: &mut RefOr<utoipa::openapi::schema::Schema>) {
    use utoipa::openapi::schema::{Schema, SchemaType, Type};
    if let RefOr::T(Schema::Object(object)) = schema
        && let SchemaType::Array(types) = &object.schema_type
    {
        let real: Vec<Type> = types
            .iter()
            .filter(|t| **t != Type::Null)
            .cloned()
            .collect();
        object.schema_type = match real.as_slice() {
            [one] => SchemaType::Type(one.clone()),
            _ => SchemaType::Array(real),
        };
    }
}

/// The spec alone, as `cos openapi` prints it and openapi/openapi.json holds it.
pub fn openapi() -> OpenApi {
    api_router().1
}

/// The committed form: pretty JSON with a trailing newline.
pub fn openapi_json() -> String {
    let mut text = serde_json::to_string_pretty(&openapi()).unwrap_or_default();
    text.push('\n');
    text
}

fn base() -> OpenApi {
    let mut openapi = utoipa::openapi::OpenApiBuilder::new()
        .info(
            utoipa::openapi::InfoBuilder::new()
                .title("cos-hub")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "REST face of the cos-hub tool functions. Success bodies are `{data, meta}`; every error body is an \
                     ErrorEnvelope whose category decides the status (see docs/errors.md).",
                ))
                .build(),
        )
        .build();
    openapi.tags = Some(
        ROUTERS
            .iter()
            .map(|spec| {
                utoipa::openapi::tag::TagBuilder::new()
                    .name(spec.tag)
                    .build()
            })
            .collect(),
    );
    openapi
}

/// Registers the envelope schemas and attaches error responses to every operation.
fn complete(openapi: &mut OpenApi) {
    let components = openapi.components.get_or_insert_with(Default::default);
    components.security_schemes.insert(
        "bearer".to_string(),
        RefOr::T(utoipa::openapi::security::SecurityScheme::Http(
            utoipa::openapi::security::Http::new(utoipa::openapi::security::HttpAuthScheme::Bearer),
        )),
    );
    // A token is needed only when the hub was started with one: anonymous or bearer.
    openapi.security = Some(vec![
        utoipa::openapi::security::SecurityRequirement::default(),
        utoipa::openapi::security::SecurityRequirement::new("bearer", Vec::<String>::new()),
    ]);
    let components = openapi.components.get_or_insert_with(Default::default);
    for (name, schema) in [
        (ErrorEnvelope::name(), ErrorEnvelope::schema()),
        (ErrorBody::name(), ErrorBody::schema()),
        (Category::name(), Category::schema()),
        (Code::name(), Code::schema()),
        (Meta::name(), Meta::schema()),
        // what the stream's events carry as their data's JSON
        (
            crate::events::Revisions::name(),
            crate::events::Revisions::schema(),
        ),
    ] {
        components.schemas.insert(name.to_string(), schema);
    }
    for (path, item) in openapi.paths.paths.iter_mut() {
        if path.starts_with("/api/") {
            let own_ids = super::keeps_own_request_ids(path);
            for operation in write_operations(item) {
                accept_idempotency_key(operation);
                if !own_ids {
                    accept_request_id(operation);
                }
            }
        }
        for operation in operations(item) {
            let tag = operation
                .tags
                .as_ref()
                .and_then(|tags| tags.first())
                .cloned()
                .unwrap_or_default();
            let extra = ROUTERS
                .iter()
                .find(|spec| spec.tag == tag)
                .map(|spec| spec.extra_errors)
                .unwrap_or(&[]);
            let mut statuses: Vec<u16> = SHARED_ERRORS.iter().chain(extra).copied().collect();
            if operation.request_body.is_some() {
                statuses.push(413);
            }
            for status in statuses {
                operation
                    .responses
                    .responses
                    .entry(status.to_string())
                    .or_insert_with(|| error_response(status));
            }
        }
    }
}

fn write_operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// Every write takes an `Idempotency-Key` (web::idempotency) and can answer
/// 409 `E_REQUEST_REUSE` for it.
fn accept_idempotency_key(operation: &mut Operation) {
    accept_header(
        operation,
        "Idempotency-Key",
        "1 to 255 visible ASCII characters. The same request sent again with the same key \
         gets the first answer back (with `Idempotency-Replayed: true`) without writing again; \
         another request with the key is refused with 409 E_REQUEST_REUSE. Keys are kept 24 hours.",
    );
    operation
        .responses
        .responses
        .entry("409".to_string())
        .or_insert_with(|| error_response(409));
}

/// Every write outside the documents (whose request IDs are their own) runs
/// under a request ID, answered in `X-Request-Id` (web::idempotency).
fn accept_request_id(operation: &mut Operation) {
    accept_header(
        operation,
        "X-Request-Id",
        "1 to 255 visible ASCII characters naming this write (the Idempotency-Key when one is \
         sent; a new one when neither is), answered in the `X-Request-Id` header. \
         `GET /api/receipts/{request_id}` says later whether it committed, whatever the answer \
         said (kept 24 hours).",
    );
}

/// An optional header of 1 to 255 visible ASCII characters.
fn accept_header(operation: &mut Operation, name: &str, description: &str) {
    use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
    let parameter: Parameter = ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(utoipa::openapi::Required::False)
        .description(Some(description))
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .min_length(Some(1))
                .max_length(Some(255))
                .pattern(Some("^[!-~]+$")),
        ))
        .build();
    operation
        .parameters
        .get_or_insert_with(Vec::new)
        .push(RefOr::T(parameter));
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
        item.head.as_mut(),
        item.options.as_mut(),
        item.trace.as_mut(),
    ]
    .into_iter()
    .flatten()
}

fn error_response(status: u16) -> RefOr<utoipa::openapi::Response> {
    let description = match status {
        400 => "Validation failed (category validation): the message and details name the field",
        401 => "Missing or wrong bearer token, when the hub runs with one (unauthorized)",
        403 => {
            "Not permitted: the module is disabled, or the Origin is not allowed (permission, module_disabled)"
        }
        404 => "No such entity or route (not_found)",
        409 => "A stale revision or state, or a reused request ID (conflict)",
        412 => "A conditional request's precondition no longer holds (conflict with If-Match)",
        421 => "The Host is not one this hub answers for (E_HOST): DNS rebinding protection",
        413 => "The request body is over the size limit",
        500 => "Internal error; the body carries an error_id found in the server log",
        503 => "Transient or unavailable; retry after the Retry-After header",
        _ => "Error",
    };
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                    .build(),
            )
            .build(),
    )
}
