//! What a tool body returns when it cannot answer, and how each kind of failure
//! becomes an envelope error with the right category.

use crate::envelope::{Category, Code, ErrorBody};
use crate::store::StoreError;
use serde_json::Value;
use std::error::Error as StdError;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A deliberate, already-categorised refusal (bad input, unknown id, conflict, ...).
    #[error("{}", .0.message)]
    Fail(Box<ErrorBody>),
    #[error("{context}")]
    Store {
        context: String,
        #[source]
        source: StoreError,
    },
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{context}")]
    Internal {
        context: String,
        #[source]
        source: Option<Box<dyn StdError + Send + Sync>>,
    },
    #[error("the tool panicked: {0}")]
    Panic(String),
}

impl ToolError {
    pub fn fail(category: Category, code: Code, message: impl Into<String>) -> ToolError {
        ToolError::Fail(Box::new(ErrorBody::new(category, code, message)))
    }

    /// Bad input: names the field and what was expected.
    pub fn invalid(field: &str, expected: impl Into<String>) -> ToolError {
        let expected = expected.into();
        ToolError::Fail(Box::new(
            ErrorBody::new(
                Category::Validation,
                Code::E_ARGUMENT,
                format!("{field}: {expected}"),
            )
            .with_details(serde_json::json!({"field": field, "expected": expected})),
        ))
    }

    /// Two inputs that are each fine alone but not together: `details.with`
    /// names the other one, since no schema can state the rule.
    pub fn invalid_pair(field: &str, with: &str, expected: impl Into<String>) -> ToolError {
        let expected = expected.into();
        ToolError::invalid(field, expected.clone())
            .with_details(serde_json::json!({"field": field, "with": with, "expected": expected}))
    }

    /// A configuration file the hub cannot use: names the file and the fault.
    pub fn config(file: &std::path::Path, fault: &str) -> ToolError {
        ToolError::fail(
            Category::Validation,
            Code::E_CONFIG,
            format!("{}: {fault}", file.display()),
        )
        .with_details(serde_json::json!({"file": file.display().to_string()}))
    }

    pub fn not_found(code: Code, message: impl Into<String>) -> ToolError {
        ToolError::fail(Category::NotFound, code, message)
    }

    pub fn with_details(self, details: Value) -> ToolError {
        match self {
            ToolError::Fail(body) => ToolError::Fail(Box::new(body.with_details(details))),
            other => other,
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> ToolError {
        ToolError::Io {
            context: context.into(),
            source,
        }
    }

    pub fn internal(
        context: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> ToolError {
        ToolError::Internal {
            context: context.into(),
            source: Some(Box::new(source)),
        }
    }

    pub fn category(&self) -> Category {
        match self {
            ToolError::Fail(body) => body.category,
            ToolError::Store { source, .. } => store_category(source),
            ToolError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound => Category::NotFound,
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    Category::Permission
                }
                // a name longer than the filesystem takes comes from the input
                std::io::ErrorKind::InvalidFilename => Category::Validation,
                std::io::ErrorKind::TimedOut
                | std::io::ErrorKind::Interrupted
                | std::io::ErrorKind::WouldBlock => Category::Transient,
                _ => Category::Internal,
            },
            ToolError::Internal { .. } | ToolError::Panic(_) => Category::Internal,
        }
    }

    /// True when the failure came from the system rather than a deliberate refusal:
    /// such errors carry an `error_id` pointing at the forensic log line.
    pub fn is_system(&self) -> bool {
        !matches!(self, ToolError::Fail(_))
    }

    /// The full cause chain, for the server log only.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = self.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    pub fn sqlite_databases(&self) -> &[String] {
        match self {
            ToolError::Store { source, .. } => source.databases(),
            _ => &[],
        }
    }

    /// The body the caller sees. System errors never leak paths, SQL or library text.
    pub fn to_body(&self, error_id: &str) -> ErrorBody {
        if let ToolError::Fail(body) = self {
            return (**body).clone();
        }
        let category = self.category();
        let (code, message) = match (self, category) {
            (ToolError::Store { source, .. }, _) if source.is_unreachable() => (
                Code::E_UNAVAILABLE,
                format!(
                    "the team database {} cannot be reached; the areas kept there answer once it is back (the graph, documents and code search keep working); retry shortly",
                    source.database().unwrap_or("")
                ),
            ),
            (ToolError::Store {
                source: StoreError::CommitUnknown { database, request, .. },
                ..
            }, _) => {
                let check = match request {
                    Some(id) => format!("cos_write_receipt with request_id {id:?} says which"),
                    None => "read the record again to see which".to_string(),
                };
                let message = format!(
                    "the connection to the team database {database} dropped while the write was committing: it may or may not have been committed; {check}. Do not claim success"
                );
                let mut body = ErrorBody::new(category, Code::COMMIT_UNKNOWN, message);
                body.error_id = Some(error_id.to_string());
                if let Some(id) = request {
                    body = body.with_details(serde_json::json!({"request_id": id, "check_with": "cos_write_receipt"}));
                }
                return body;
            }
            (ToolError::Store { source, .. }, Category::Transient)
                if source.sqlite_code() == Some(rusqlite::ErrorCode::OperationInterrupted) =>
            {
                (
                    Code::E_TIMEOUT,
                    "a read ran past the hub's read limit and was stopped, so it holds no snapshot of the database; it changed nothing, ask again".to_string(),
                )
            }
            (_, Category::Transient) => {
                (Code::E_BUSY, "the hub is busy; retry shortly".to_string())
            }
            (ToolError::Io { context, .. }, Category::NotFound) => {
                (Code::E_NOT_FOUND, format!("{context}: not found"))
            }
            (ToolError::Io { context, source }, _)
                if source.kind() == std::io::ErrorKind::InvalidFilename =>
            {
                (
                    Code::E_PATH,
                    format!("{context}: a name longer than the filesystem accepts"),
                )
            }
            (ToolError::Store { .. }, Category::NotFound) => {
                (Code::E_NOT_FOUND, "no such record".to_string())
            }
            (
                ToolError::Io { context, .. } | ToolError::Store { context, .. },
                Category::Permission,
            ) => (Code::E_PERMISSION, format!("{context}: permission denied")),
            (_, Category::Unavailable) => (
                Code::E_STORAGE,
                "storage is unavailable; check disk space and permissions".to_string(),
            ),
            _ => (
                Code::E_INTERNAL,
                format!("internal error; the server log has the details under error_id {error_id}"),
            ),
        };
        let mut body = ErrorBody::new(category, code, message);
        body.error_id = Some(error_id.to_string());
        body
    }
}

/// What a store failure means to a client: a busy or locked database is worth
/// retrying, a read-only one is a permission problem, and so on.
fn store_category(error: &StoreError) -> Category {
    use rusqlite::ErrorCode;
    if error.is_unreachable() {
        return Category::Unavailable;
    }
    if error.is_pool_timeout() || matches!(error, StoreError::CommitUnknown { .. }) {
        return Category::Transient;
    }
    if let StoreError::Postgres { source, .. } = error {
        // serialization failures, deadlocks, lock and statement timeouts: worth a retry
        let transient = source
            .code()
            .is_some_and(|code| ["40001", "40P01", "55P03", "57014"].contains(&code.code()));
        return if transient {
            Category::Transient
        } else {
            Category::Internal
        };
    }
    if error.is_no_rows() {
        return Category::NotFound;
    }
    match error.sqlite_code() {
        Some(
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked | ErrorCode::OperationInterrupted,
        ) => Category::Transient,
        Some(
            ErrorCode::ReadOnly
            | ErrorCode::PermissionDenied
            | ErrorCode::AuthorizationForStatementDenied,
        ) => Category::Permission,
        Some(ErrorCode::CannotOpen | ErrorCode::DiskFull) => Category::Unavailable,
        _ => Category::Internal,
    }
}

impl From<StoreError> for ToolError {
    fn from(source: StoreError) -> ToolError {
        ToolError::Store {
            context: "database".to_string(),
            source,
        }
    }
}

impl From<ErrorBody> for ToolError {
    fn from(body: ErrorBody) -> ToolError {
        ToolError::Fail(Box::new(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_categories_without_leaking_paths() {
        let missing = ToolError::io(
            "board export folder",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(missing.category(), Category::NotFound);
        let denied = ToolError::io(
            "state file",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert_eq!(denied.category(), Category::Permission);
        // ENAMETOOLONG: the name came from the input
        let long = ToolError::io("task file", std::io::Error::from_raw_os_error(36));
        let body = long.to_body("def456");
        assert_eq!(body.category, Category::Validation);
        assert_eq!(body.code, Code::E_PATH);
        let other = ToolError::io(
            "/secret/path/x.db",
            std::io::Error::other("disk on fire at /secret/path"),
        );
        let body = other.to_body("abc123");
        assert_eq!(body.category, Category::Internal);
        assert!(!body.message.contains("/secret"), "{}", body.message);
        assert!(body.message.contains("abc123"));
        assert_eq!(body.error_id.as_deref(), Some("abc123"));
        assert!(other.chain().contains("disk on fire"));
    }

    #[test]
    fn busy_and_locked_are_transient_and_read_only_is_permission() {
        let failure = |code| {
            ToolError::from(StoreError::Sqlite {
                source: rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None),
                databases: Vec::new(),
            })
            .category()
        };
        assert_eq!(failure(rusqlite::ffi::SQLITE_BUSY), Category::Transient);
        assert_eq!(failure(rusqlite::ffi::SQLITE_LOCKED), Category::Transient);
        assert_eq!(
            failure(rusqlite::ffi::SQLITE_READONLY),
            Category::Permission
        );
        assert_eq!(failure(rusqlite::ffi::SQLITE_FULL), Category::Unavailable);
        assert_eq!(failure(rusqlite::ffi::SQLITE_CORRUPT), Category::Internal);
    }

    #[test]
    fn invalid_names_the_field() {
        let body = ToolError::invalid("priority", "one of P0, P1, P2, P3").to_body("x");
        assert_eq!(body.category, Category::Validation);
        assert_eq!(body.code, Code::E_ARGUMENT);
        assert!(body.message.contains("priority"));
        assert_eq!(body.details.unwrap()["field"], "priority");
        assert_eq!(body.error_id, None);
    }
}
