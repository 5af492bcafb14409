import { BoardPage } from "./pages/BoardPage";
import { Placeholder } from "./pages/Placeholder";
import { SettingsPage } from "./pages/SettingsPage";
import { navigate, usePath } from "./router";

const PAGES = [
  { path: "/board", label: "Board" },
  { path: "/graph", label: "Graph" },
  { path: "/search", label: "Search" },
  { path: "/documents", label: "Documents" },
  { path: "/settings", label: "Settings" },
] as const;

function page(path: string) {
  if (path === "/" || path.startsWith("/board")) return <BoardPage />;
  if (path.startsWith("/settings")) return <SettingsPage />;
  if (path.startsWith("/graph")) return <Placeholder area="Graph" what="the knowledge graph of this repository's code and docs" />;
  if (path.startsWith("/search")) return <Placeholder area="Search" what="full-text search over symbols, docs and tasks" />;
  if (path.startsWith("/documents")) return <Placeholder area="Documents" what="Markdown documents with safe concurrent writes" />;
  return <Placeholder area="Not found" what={`a page at ${path}`} />;
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
