//! cos-hub: a local work hub for software projects.
//!
//! One set of `cos_*` tool functions serves agents (over MCP, trimmed to a token
//! budget) and browsers or scripts (over REST, untrimmed) through one envelope
//! contract. The modules mirror the architecture described in docs/architecture.md.

// Error values here are the wire errors sent to clients (ErrorBody is ~150 bytes).
// They are built on the cold path only; boxing them would add an indirection at
// every call site for no measurable gain.
#![allow(clippy::result_large_err)]

pub mod allocator;
pub mod background;
pub mod board;
pub mod cli;
pub mod docs;
pub mod envelope;
pub mod events;
pub mod graph;
pub mod hub;
pub mod mcp;
pub mod search;
pub mod store;
pub mod supervise;
pub mod text_lines;
pub mod tools;
pub mod watching;
pub mod web;
