// The knowledge graph: an explorer of the CONTAINS spine (opened on demand),
// the selected node's context, a path finder, and the doctor.
import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import { api, call, type Failure, type Schemas } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { revisionOf, useLive, useOnNewRevision } from "../live";
import { navigate } from "../router";
import { DoctorPage } from "./graph/DoctorPage";
import { GraphCanvas } from "./graph/GraphCanvas";
import { NodePanel } from "./graph/NodePanel";
import { PathFinder } from "./graph/PathFinder";
import { ROOT, addExport, canOpen, createSpine, layout } from "./graph/spine";

/** At most this many nodes per request (the export tool's hard cap). */
const PAGE = 2000;

export function GraphPage({ path }: { path: string }) {
  const doctor = path.startsWith("/graph/doctor");
  // the file watcher re-indexes after saves; each change of the graph's
  // revision reloads what the page shows
  const revision = revisionOf(useLive(), "graph");
  return (
    <section className="graph-page" aria-labelledby="graph-title">
      <div className="graph-toolbar">
        <h1 id="graph-title">Graph</h1>
        <nav className="tabs" aria-label="Graph views">
          {[
            ["/graph", "Explore"],
            ["/graph/doctor", "Doctor"],
          ].map(([href, label]) => (
            <a
              key={href}
              href={href}
              aria-current={(href === "/graph/doctor") === doctor ? "page" : undefined}
              onClick={(event) => {
                event.preventDefault();
                navigate(href as string);
              }}
            >
              {label}
            </a>
          ))}
        </nav>
      </div>
      {doctor ? <DoctorPage revision={revision} /> : <GraphExplorer revision={revision} />}
    </section>
  );
}

function GraphExplorer({ revision }: { revision: number | null }) {
  const graph = useRef(createSpine()).current;
  /** What the person opened beyond the first rings, reopened after a refresh. */
  const openedByHand = useRef<string[]>([]);
  const [version, setVersion] = useState(0);
  // a deep link (`/graph?node=<uid>`, as search opens a symbol) selects its node
  const [selected, setSelected] = useState<string | null>(() => new URLSearchParams(window.location.search).get("node"));
  const [failure, setFailure] = useState<Failure | null>(null);
  const [repoRoot, setRepoRoot] = useState<string | null>(null);
  const [empty, setEmpty] = useState(false);
  const [indexing, setIndexing] = useState(false);
  const [pathEnds, setPathEnds] = useState({ from: "", to: "" });
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<Schemas["GraphNode"][] | null>(null);

  const redraw = useCallback(() => {
    layout(graph, ROOT);
    setVersion((v) => v + 1);
  }, [graph]);

  /** Loads `root`'s subtree along contains, `hops` deep, into the view. */
  const open = useCallback(
    async (root: string, hops: number) => {
      const result = await call(() =>
        api.POST("/api/graph/export", {
          body: { root, edge_types: ["contains"], max_hops: hops, max_nodes: PAGE },
        }),
      );
      if (!result.ok) {
        setFailure(result.failure);
        return false;
      }
      setFailure(null);
      // a node is opened when its children came along (the last ring may be cut by max_nodes)
      const parents = new Set(result.data.edges.filter((e) => e.kind === "contains").map((e) => e.source));
      addExport(graph, result.data.nodes, result.data.edges, [...parents, root]);
      redraw();
      return true;
    },
    [graph, redraw],
  );

  const loadRoot = useCallback(async () => {
    graph.clear();
    const ok = await open(ROOT, 2);
    setEmpty(ok && graph.order === 0);
    return ok;
  }, [graph, open]);

  const openByHand = useCallback(
    (uid: string, hops: number) => {
      openedByHand.current = [...openedByHand.current.filter((known) => known !== uid), uid];
      return open(uid, hops);
    },
    [open],
  );

  const [panelRevision, setPanelRevision] = useState(0);
  useOnNewRevision(revision, () => {
    void (async () => {
      if (!(await loadRoot())) return;
      for (const uid of openedByHand.current) {
        if (graph.hasNode(uid) && !graph.getNodeAttribute(uid, "opened")) await open(uid, 1);
      }
      setPanelRevision((n) => n + 1);
    })();
  });

  useEffect(() => {
    void (async () => {
      const health = await call(() => api.GET("/api/health"));
      if (health.ok) setRepoRoot(health.data.repo_root);
      await loadRoot();
    })();
  }, [loadRoot]);

  const select = useCallback(
    (uid: string) => {
      setSelected(uid);
      const attributes = graph.hasNode(uid) ? graph.getNodeAttributes(uid) : null;
      if (attributes && canOpen(attributes.kind) && !attributes.opened) void openByHand(uid, 1);
    },
    [graph, openByHand],
  );

  const index = async () => {
    setIndexing(true);
    const result = await call(() => api.POST("/api/graph/index"));
    setIndexing(false);
    if (!result.ok) return setFailure(result.failure);
    await loadRoot();
  };

  const search = async (event: FormEvent) => {
    event.preventDefault();
    const result = await call(() => api.GET("/api/graph/search", { params: { query: { query, limit: 20 } } }));
    if (!result.ok) return setFailure(result.failure);
    setFound(result.data.results);
  };

  const highlight = (uids: string[]) => {
    const on = new Set(uids);
    graph.forEachNode((uid, attributes) => {
      if (attributes.highlighted !== on.has(uid)) graph.setNodeAttribute(uid, "highlighted", on.has(uid));
    });
    setVersion((v) => v + 1);
  };

  const selectedKind = selected && graph.hasNode(selected) ? graph.getNodeAttribute(selected, "kind") : null;
  return (
    <div className="graph-explorer">
      <div className="graph-main">
        <div className="graph-controls">
          <form className="graph-search" onSubmit={(event) => void search(event)} role="search">
            <label htmlFor="graph-query">Find a node</label>
            <input id="graph-query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="symbol, file or heading" />
            <button type="submit">Find</button>
          </form>
          <span className="graph-count" data-testid="graph-count">
            {graph.order.toLocaleString()} nodes shown
          </span>
          <button type="button" onClick={() => void index()} disabled={indexing}>
            {indexing ? "Indexing…" : "Re-index"}
          </button>
        </div>
        {failure ? <FailureNotice failure={failure} onRetry={() => void loadRoot()} /> : null}
        {empty ? (
          <p className="empty">
            The graph is empty. <button type="button" className="primary" onClick={() => void index()}>Index the repository</button>
          </p>
        ) : null}
        {found ? (
          <ul className="search-results" aria-label="Nodes found">
            {found.length === 0 ? <li className="muted">No node matches.</li> : null}
            {found.map((node) => (
              <li key={node.uid}>
                <button type="button" className="node-link" onClick={() => select(node.uid)} title={node.uid}>
                  {node.label} <span className="node-kind">{node.kind}</span> <span className="muted">{node.path}</span>
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        <GraphCanvas graph={graph} version={version} selected={selected} onSelect={select} />
        <p className="hint">Click a folder or file to open it; click any node for its context. Scroll to zoom, drag to pan.</p>
      </div>
      <aside className="graph-side">
        {selected ? (
          <NodePanel
            key={`${selected}@${panelRevision}`}
            uid={selected}
            repoRoot={repoRoot}
            canOpen={selectedKind !== null && canOpen(selectedKind)}
            onSelect={select}
            onOpen={(uid, hops) => void openByHand(uid, hops)}
            onPathEnd={(end, uid) => setPathEnds((ends) => ({ ...ends, [end]: uid }))}
          />
        ) : (
          <p className="muted">Select a node to see its neighbours, references and impact.</p>
        )}
        <PathFinder
          from={pathEnds.from}
          to={pathEnds.to}
          onChange={(end, value) => setPathEnds((ends) => ({ ...ends, [end]: value }))}
          onFound={highlight}
          onSelect={select}
        />
      </aside>
    </div>
  );
}
