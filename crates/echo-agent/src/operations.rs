//! Every operation front ends call, from one table (`operations.table`): each request type
//! of [`crate::wire`] implements [`Operation`] (its name, HTTP route and response type, and
//! what it does through [`Api`]). Front ends never write an operation out by hand: `echod
//! serve` mounts one generic handler per entry ([`visit_operations`]), the desktop app
//! generates one Tauri command per entry from the same table, and the UI's TypeScript and
//! the OpenAPI document are generated from these types.
//!
//! # Adding an operation
//!
//! One line in `operations.table` (its name, HTTP method and route, request type, response
//! type, and the `Api` call), its request type in `wire.rs` if new, a grant in
//! `src-tauri/capabilities/main.json`, then regenerate `docs/openapi.json` and
//! `ui/src/generated/engine.ts` (`ECHO_UPDATE_OPENAPI=1` / `ECHO_UPDATE_TS=1`; the drift tests
//! fail while either is stale and refuse to rewrite on CI). `echod serve` answers `Json<T>` (204
//! for `()`), an `ApiError` as `{"error": {"code", "message"}}` with its `ErrorCode`'s status
//! (`busy` → 409). `src-tauri/tests/parity.rs` checks what is still kept by hand against the
//! table: the windows' capabilities, the generated permissions, the OpenAPI paths and the UI's
//! generated list.

use crate::api::Api;
use crate::error::ApiError;
#[allow(clippy::wildcard_imports)]
use crate::wire::*;
use echo_core::ApprovalId;
use echo_core::store::TurnFilter;
use echo_memory::ListFilter;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::future::Future;

/// The HTTP method of an operation's route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMethod {
    /// Reads; the request comes from the path and the query.
    Get,
    /// Creates or acts; the request is the JSON body (plus path parameters).
    Post,
    /// Replaces; the request is the JSON body (plus path parameters).
    Put,
    /// Changes part; the request is the JSON body (plus path parameters).
    Patch,
    /// Removes; the request comes from the path and the query.
    Delete,
}

impl HttpMethod {
    /// Whether the request travels in a JSON body (else in the query).
    pub fn has_body(self) -> bool {
        matches!(self, Self::Post | Self::Put | Self::Patch)
    }

    /// The method's name, upper case.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// One operation: a request type that knows its name, its route, its response, and how
/// [`Api`] carries it out. Implemented only by the table.
pub trait Operation:
    DeserializeOwned + Serialize + ts_rs::TS + utoipa::ToSchema + Send + 'static
{
    /// What it answers with (`()` is "nothing": HTTP 204, `null` over IPC).
    type Response: Serialize + ts_rs::TS + utoipa::ToSchema + Send + 'static;
    /// The operation's name (snake case), the same in every front end.
    const NAME: &'static str;
    /// The HTTP method of its gateway route.
    const METHOD: HttpMethod;
    /// The gateway route, with `{field}` path parameters.
    const PATH: &'static str;

    /// Carries the operation out.
    fn run(self, api: &Api) -> impl Future<Output = Result<Self::Response, ApiError>> + Send;

    /// Adds the named schemas the response refers to (for `Vec<T>` and `Option<T>`: `T`
    /// and what `T` refers to; nothing for `()`).
    fn response_schemas(out: &mut Vec<(String, Schema)>);
}

/// A named schema as utoipa gives it.
pub type Schema = utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>;

/// Collects the schemas a response type refers to, with autoref specialisation: the
/// macro calls `(&Probe::<R>::NEW).collect(out)` on a concrete `R`, and the impls on `Probe`
/// itself (lists, options, unit) win over the general one on `&Probe`.
mod probe {
    use super::Schema;
    use std::marker::PhantomData;
    use utoipa::ToSchema;

    pub struct Probe<T: ?Sized>(PhantomData<T>);

    impl<T: ?Sized> Probe<T> {
        pub const NEW: Self = Probe(PhantomData);
    }

    fn named<T: ToSchema>(out: &mut Vec<(String, Schema)>) {
        out.push((T::name().into_owned(), T::schema()));
        T::schemas(out);
    }

    /// Lists, options and unit: the item type is the named one.
    pub trait Wrapped {
        fn collect(&self, out: &mut Vec<(String, Schema)>);
    }
    impl<T: ToSchema> Wrapped for Probe<Vec<T>> {
        fn collect(&self, out: &mut Vec<(String, Schema)>) {
            named::<T>(out);
        }
    }
    impl<T: ToSchema> Wrapped for Probe<Option<T>> {
        fn collect(&self, out: &mut Vec<(String, Schema)>) {
            named::<T>(out);
        }
    }
    impl Wrapped for Probe<()> {
        fn collect(&self, _: &mut Vec<(String, Schema)>) {}
    }

    /// Any other type is named itself.
    pub trait Plain {
        fn collect(&self, out: &mut Vec<(String, Schema)>);
    }
    impl<T: ToSchema> Plain for &Probe<T> {
        fn collect(&self, out: &mut Vec<(String, Schema)>) {
            named::<T>(out);
        }
    }
}

/// An operation's name and route, as data.
#[derive(Clone, Copy, Debug)]
pub struct OperationInfo {
    /// See [`Operation::NAME`].
    pub name: &'static str,
    /// See [`Operation::METHOD`].
    pub method: HttpMethod,
    /// See [`Operation::PATH`].
    pub path: &'static str,
}

/// Something that wants every operation as a type (a router, a schema or TypeScript
/// generator).
pub trait OperationVisitor {
    /// Called once per operation, in table order.
    fn visit<O: Operation>(&mut self);
}

impl Api {
    /// Carries out one operation: what every front end's handler calls.
    pub async fn call<O: Operation>(&self, request: O) -> Result<O::Response, ApiError> {
        request.run(self).await
    }
}

macro_rules! operations {
    ($(
        $name:ident : $method:ident $path:literal ($request:ident) -> $response:ty
            = |$api:ident, $req:pat_param| $body:expr;
    )*) => {
        $(
            impl Operation for $request {
                type Response = $response;
                const NAME: &'static str = stringify!($name);
                const METHOD: HttpMethod = HttpMethod::$method;
                const PATH: &'static str = $path;

                #[allow(clippy::unused_async)]
                async fn run(self, $api: &Api) -> Result<$response, ApiError> {
                    let $req = self;
                    $body
                }

                fn response_schemas(out: &mut Vec<(String, Schema)>) {
                    #[allow(unused_imports)]
                    use probe::{Plain as _, Wrapped as _};
                    (&probe::Probe::<$response>::NEW).collect(out);
                }
            }
        )*

        /// Every operation, in table order.
        pub const OPERATIONS: &[OperationInfo] = &[$(
            OperationInfo {
                name: stringify!($name),
                method: HttpMethod::$method,
                path: $path,
            },
        )*];

        /// Calls `visitor` with every operation, in table order.
        pub fn visit_operations(visitor: &mut impl OperationVisitor) {
            $(visitor.visit::<$request>();)*
        }
    };
}

include!("operations.table");
