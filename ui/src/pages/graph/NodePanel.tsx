// The selected node's context: where it lives, its neighbours, who refers to it
// and what a change to it would reach.
import { useEffect, useState } from "react";
import { api, call, type Failure, type Schemas } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";

type Neighbour = Schemas["Neighbour"];
type GraphNode = Schemas["GraphNode"];

interface Props {
  uid: string;
  repoRoot: string | null;
  canOpen: boolean;
  onSelect: (uid: string) => void;
  onOpen: (uid: string, hops: number) => void;
  onPathEnd: (end: "from" | "to", uid: string) => void;
}

interface Loaded {
  node: GraphNode;
  neighbours: Neighbour[];
  references: Neighbour[];
  referencesTotal: number;
  impact: Schemas["ImpactTiers"];
}

/** An editor link to the file and line (VS Code's URL scheme), when the repository's folder is known. */
export function editorLink(repoRoot: string | null, node: GraphNode): string | null {
  if (!repoRoot || !node.path) return null;
  const line = node.line ?? 1;
  return `vscode://file/${encodeURI(`${repoRoot.replace(/\/$/, "")}/${node.path}`)}:${line}`;
}

function NodeButton({ node, onSelect }: { node: GraphNode; onSelect: (uid: string) => void }) {
  return (
    <button type="button" className="node-link" onClick={() => onSelect(node.uid)} title={node.uid}>
      <span className={`kind-dot kind-${node.kind}`} aria-hidden="true" />
      {node.label}
      <span className="node-kind">{node.kind}</span>
    </button>
  );
}

function NeighbourList({ items, onSelect, empty }: { items: Neighbour[]; onSelect: (uid: string) => void; empty: string }) {
  if (items.length === 0) return <p className="muted">{empty}</p>;
  return (
    <ul className="neighbours">
      {items.map((item) => (
        <li key={`${item.direction}-${item.edge}-${item.node.uid}`}>
          <span className="edge-label">
            {item.direction === "in" ? "←" : "→"} {item.edge}
            {item.confidence !== "resolved" ? ` (${item.confidence})` : ""}
          </span>
          <NodeButton node={item.node} onSelect={onSelect} />
        </li>
      ))}
    </ul>
  );
}

export function NodePanel({ uid, repoRoot, canOpen, onSelect, onOpen, onPathEnd }: Props) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);

  useEffect(() => {
    let current = true;
    setLoaded(null);
    setFailure(null);
    void (async () => {
      const [context, references, impact] = await Promise.all([
        call(() => api.GET("/api/graph/context", { params: { query: { uid, depth: 1, limit: 200 } } })),
        call(() => api.POST("/api/graph/references", { body: { uid, limit: 100 } })),
        call(() => api.POST("/api/graph/impact", { body: { uid, depth: 3, visit_limit: 500 } })),
      ]);
      if (!current) return;
      if (!context.ok) return setFailure(context.failure);
      if (!references.ok) return setFailure(references.failure);
      if (!impact.ok) return setFailure(impact.failure);
      setLoaded({
        node: context.data.node,
        neighbours: context.data.neighbours,
        references: references.data.references,
        referencesTotal: references.data.total_count,
        impact: impact.data.tiers,
      });
    })();
    return () => {
      current = false;
    };
  }, [uid]);

  if (failure) return <FailureNotice failure={failure} onRetry={() => onSelect(uid)} />;
  if (!loaded) return <p className="muted">Loading {uid}…</p>;
  const { node } = loaded;
  const link = editorLink(repoRoot, node);
  const where = node.path ? `${node.path}${node.line ? `:${node.line}` : ""}` : null;
  const tiers: [string, Neighbour[]][] = [
    ["Will break", loaded.impact.will_break],
    ["Should review", loaded.impact.should_review],
    ["Context", loaded.impact.context],
  ];
  return (
    <section className="node-panel" aria-labelledby="node-title" data-testid="node-panel">
      <h2 id="node-title">
        {node.label} <span className="node-kind">{node.kind}</span>
      </h2>
      <p className="uid">{node.uid}</p>
      {where ? (
        <p>
          {link ? (
            <a href={link} data-testid="node-location">
              {where}
            </a>
          ) : (
            <span data-testid="node-location">{where}</span>
          )}
        </p>
      ) : null}
      <div className="panel-actions">
        {canOpen ? (
          <>
            <button type="button" onClick={() => onOpen(uid, 1)}>
              Open in graph
            </button>
            <button type="button" onClick={() => onOpen(uid, 10)} title="Everything it contains, up to 2,000 nodes">
              Open all below
            </button>
          </>
        ) : null}
        <button type="button" onClick={() => onPathEnd("from", uid)}>
          Path from here
        </button>
        <button type="button" onClick={() => onPathEnd("to", uid)}>
          Path to here
        </button>
      </div>
      <h3>Neighbours ({loaded.neighbours.length})</h3>
      <NeighbourList items={loaded.neighbours} onSelect={onSelect} empty="No edges." />
      <h3>
        References ({loaded.referencesTotal})
      </h3>
      <NeighbourList items={loaded.references} onSelect={onSelect} empty="Nothing refers to it." />
      <h3>Impact</h3>
      {tiers.map(([title, items]) => (
        <details key={title} open={title === "Will break" && items.length > 0}>
          <summary data-testid={`impact-${title.toLowerCase().replace(" ", "-")}`}>
            {title}: {items.length}
          </summary>
          <NeighbourList items={items} onSelect={onSelect} empty="None." />
        </details>
      ))}
    </section>
  );
}
