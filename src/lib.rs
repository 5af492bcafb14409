//! cos-hub: a local work hub for software projects.
//!
//! One set of `cos_*` tool functions serves agents (over MCP, trimmed to a token
//! budget) and browsers or scripts (over REST, untrimmed) through one envelope
//! contract. The modules mirror the architecture described in docs/architecture.md.

pub mod cli;
pub mod envelope;
pub mod hub;
pub mod store;
pub mod tools;
pub mod web;
