// The part of the repository's CONTAINS spine the person has opened, as a
// graphology graph with a radial tree layout: folders and files open on demand,
// so the browser holds only what is being looked at.
import Graph from "graphology";
import type { Schemas } from "../../api/client";

export type GraphNode = Schemas["GraphNode"];

export interface NodeAttributes {
  label: string;
  kind: string;
  path: string | null;
  line: number | null;
  x: number;
  y: number;
  size: number;
  color: string;
  /** Its children along `contains` are loaded. */
  opened: boolean;
  /** On the path the path finder found. */
  highlighted: boolean;
}

export type SpineGraph = Graph<NodeAttributes>;

export const ROOT = "folder:";

const COLORS: Record<string, string> = {
  folder: "#6b7280",
  file: "#1f5fbf",
  doc_file: "#0f766e",
  doc_heading: "#14b8a6",
  module: "#7c3aed",
  class: "#b45309",
  interface: "#d97706",
  function: "#15803d",
  method: "#65a30d",
  variable: "#9ca3af",
  external: "#be123c",
};

const SIZES: Record<string, number> = { folder: 7, file: 5, doc_file: 5, class: 4, interface: 4, module: 4 };

export function colorOf(kind: string): string {
  return COLORS[kind] ?? "#475569";
}

/** Nodes that have children along `contains` worth opening. */
export function canOpen(kind: string): boolean {
  return kind === "folder" || kind === "file" || kind === "doc_file" || kind === "class" || kind === "module";
}

export function createSpine(): SpineGraph {
  return new Graph<NodeAttributes>({ type: "directed", multi: false, allowSelfLoops: false });
}

/** Adds an export's nodes and contains edges; `opened` marks the nodes whose children it carried. */
export function addExport(
  graph: SpineGraph,
  nodes: GraphNode[],
  edges: { source: string; target: string; kind: string }[],
  opened: string[],
): void {
  for (const node of nodes) {
    if (graph.hasNode(node.uid)) continue;
    graph.addNode(node.uid, {
      label: node.label,
      kind: node.kind,
      path: node.path ?? null,
      line: node.line ?? null,
      x: 0,
      y: 0,
      size: SIZES[node.kind] ?? 3,
      color: colorOf(node.kind),
      opened: false,
      highlighted: false,
    });
  }
  for (const edge of edges) {
    if (edge.kind !== "contains") continue;
    if (graph.hasNode(edge.source) && graph.hasNode(edge.target) && !graph.hasEdge(edge.source, edge.target)) {
      graph.addDirectedEdge(edge.source, edge.target);
    }
  }
  for (const uid of opened) {
    if (graph.hasNode(uid)) graph.setNodeAttribute(uid, "opened", true);
  }
}

/**
 * Radial tree: each node gets a wedge of the circle in proportion to the leaves
 * under it, and a ring by its depth. Linear in the nodes shown.
 */
export function layout(graph: SpineGraph, root: string): void {
  if (!graph.hasNode(root)) return;
  const leaves = new Map<string, number>();
  const children = (uid: string) => graph.outNeighbors(uid);
  const count = (uid: string, seen: Set<string>): number => {
    seen.add(uid);
    const kids = children(uid).filter((kid) => !seen.has(kid));
    const total = kids.length === 0 ? 1 : kids.reduce((sum, kid) => sum + count(kid, seen), 0);
    leaves.set(uid, total);
    return total;
  };
  const seen = new Set<string>();
  count(root, seen);
  const place = (uid: string, depth: number, from: number, to: number, placed: Set<string>) => {
    placed.add(uid);
    const angle = (from + to) / 2;
    const radius = depth === 0 ? 0 : 40 + depth * 60;
    graph.mergeNodeAttributes(uid, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
    const kids = children(uid).filter((kid) => !placed.has(kid));
    const total = kids.reduce((sum, kid) => sum + (leaves.get(kid) ?? 1), 0) || 1;
    let start = from;
    for (const kid of kids) {
      const share = ((to - from) * (leaves.get(kid) ?? 1)) / total;
      place(kid, depth + 1, start, start + share, placed);
      start += share;
    }
  };
  place(root, 0, 0, Math.PI * 2, new Set());
  // nodes not under the root (opened from a search) sit on an outer ring
  const loose = graph.nodes().filter((uid) => !seen.has(uid));
  loose.forEach((uid, index) => {
    const angle = (index / Math.max(loose.length, 1)) * Math.PI * 2;
    graph.mergeNodeAttributes(uid, { x: 900 * Math.cos(angle), y: 900 * Math.sin(angle) });
  });
}
