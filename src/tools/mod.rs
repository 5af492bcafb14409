//! The tool runtime: every `cos_*` tool is registered here once and reached from
//! every front door (REST, MCP, CLI) through the same guarded call.
//!
//! Owns tool registration (name, module, layer, typed input and output with
//! their JSON schemas, description), the module gate, and the guard that turns
//! every error and every panic into a fail envelope and a forensic log line
//! (and rings the writes bell after every writing call that succeeded).
//! Blocking tool bodies run on the blocking pool, never on the async runtime.
//! It must not know about HTTP or MCP wire details: front doors adapt to it.
//!
//! A table of contents: `spec.rs` (what a tool is), `registry.rs` (every
//! tool by name), `context.rs` (what a call sees), `runtime.rs` (the hub and
//! its guarded call); beside them areas, searchables, answers, errors, input
//! checks, cursors, the answer cache and the writes bell.

pub mod answer;
pub mod area;
pub mod bell;
pub mod cache;
mod context;
pub mod cursor;
mod error;
mod forensics;
pub mod input;
pub mod modules;
pub mod offers;
mod registry;
pub mod requests;
mod runtime;
pub(crate) mod schema;
pub mod searchable;
pub mod settings;
pub mod shared_settings;
mod spec;
pub mod text;
pub mod users;

use crate::envelope::{self, Budget, Category, Code, ErrorBody};
use crate::store::Store;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use utoipa::ToSchema;

pub use answer::{Answer, Page};
pub use area::Area;
pub use error::ToolError;
pub use modules::{Module, ModuleState, Switches};

pub use context::*;
pub use registry::*;
pub use runtime::*;
pub use spec::*;

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: Module = Module::new("notes", "a module for tests");

    #[test]
    fn a_call_reads_the_switchboard_once_and_keeps_that_read() {
        let repo = tempfile::tempdir().unwrap();
        let hub = Hub::open(
            HubConfig::for_repo(repo.path(), None),
            Registry::of_areas(&[]),
        )
        .unwrap();
        let call = || {
            ToolContext::new(
                hub.state(),
                Source::Cli,
                hub.registry(),
                &Unwatched,
                Budget::None,
            )
        };
        let context = call();
        assert!(context.switches().unwrap().is_on(NOTES));
        hub.state().modules.set(NOTES, false).unwrap();
        // the call goes on with the read its gate made
        assert!(context.switches().unwrap().is_on(NOTES));
        assert!(!call().switches().unwrap().is_on(NOTES));
    }
}
