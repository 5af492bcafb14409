//! The knowledge graph of the repository's code and docs.
//!
//! Owns the graph's tables (graph_files, graph_nodes, graph_edges,
//! graph_references, graph_nodes_fts), the extractors (tree-sitter) and the
//! indexer. Its tools are plain functions registered with the runtime; it knows
//! nothing of HTTP or MCP, and no other area writes its tables.

pub mod analysis;
pub mod bindings;
pub mod extract;
pub mod index;
pub mod plans;
mod resolve;
pub mod tools;
pub mod watch;

use crate::tools::Registry;

/// Registers every graph tool.
pub fn register(registry: &mut Registry) {
    registry
        .register::<tools::GraphIndex>()
        .register::<tools::GraphSearch>()
        .register::<tools::GraphResolve>()
        .register::<tools::GraphContext>()
        .register::<analysis::GraphImpact>()
        .register::<analysis::GraphReferences>()
        .register::<plans::GraphRenamePlan>()
        .register::<plans::GraphTrace>()
        .register::<plans::GraphSimilar>()
        .register::<analysis::GraphPath>()
        .register::<analysis::GraphExport>()
        .register::<analysis::GraphDoctor>();
}
