//! Every integration test of cos-hub, in one binary: one link instead of one
//! per file. Each module drives the hub through a public interface only: HTTP
//! against a server on 127.0.0.1:0, MCP through a real client, the `cos`
//! binary, or the library's public API.

// Test tools return the runtime's `ToolError`, a wire error of ~150 bytes,
// as the hub's own tools do (see the note in src/lib.rs).
#![allow(clippy::result_large_err)]

mod common;

/// Where the suites of the shared state at this level keep it (the board,
/// evidence, receipts); `team` runs them again with it in a team database.
const BOARD: common::Board = common::Board::Local;

mod access;
mod board_api;
mod board_concurrency;
mod board_files;
mod busy;
mod changes;
mod cli;
mod docs;
mod docs_crash;
mod docs_races;
mod graph;
mod graph_languages;
mod http_api;
mod layout;
mod mcp;
mod openapi_spec;
mod search;
mod semantic;
mod supervise;
mod team;
mod team_commit;
mod team_copy;
mod team_crash;
mod team_faults;
mod team_hubs;
mod team_users;
mod text_files;
