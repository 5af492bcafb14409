import { Suspense, lazy } from "react";
import { BoardPage } from "./pages/BoardPage";
import { ChangesPage } from "./pages/ChangesPage";
import { DocumentsPage } from "./pages/documents/DocumentsPage";
import { NotFound } from "./pages/NotFound";
import { SearchPage } from "./pages/SearchPage";
import { SettingsPage } from "./pages/SettingsPage";
import { PAGES, navigate, usePath } from "./router";

// The graph view brings a WebGL renderer: loaded when first opened, not with the board.
const GraphPage = lazy(() => import("./pages/GraphPage").then((module) => ({ default: module.GraphPage })));

function page(path: string) {
  if (path === "/" || path.startsWith("/board")) return <BoardPage />;
  if (path.startsWith("/settings")) return <SettingsPage />;
  if (path.startsWith("/graph"))
    return (
      <Suspense fallback={<p className="muted">Loading the graph view…</p>}>
        <GraphPage path={path} />
      </Suspense>
    );
  if (path.startsWith("/search")) return <SearchPage />;
  if (path.startsWith("/changes")) return <ChangesPage />;
  if (path.startsWith("/documents")) return <DocumentsPage pathname={path} />;
  return <NotFound path={path} />;
}

export function App() {
  const path = usePath();
  const current = path === "/" ? "/board" : path;
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">cos-hub</span>
        <nav aria-label="Main">
          {PAGES.map((item) => (
            <a
              key={item.path}
              href={item.path}
              aria-current={current.startsWith(item.path) ? "page" : undefined}
              onClick={(event) => {
                event.preventDefault();
                navigate(item.path);
              }}
            >
              {item.label}
            </a>
          ))}
          <a href="/docs/" target="_blank" rel="noreferrer">
            API
          </a>
        </nav>
      </header>
      <main>{page(path)}</main>
    </div>
  );
}
