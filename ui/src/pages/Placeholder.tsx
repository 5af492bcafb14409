// Pages of areas still to come say what they will hold and where to go today.
import { navigate } from "../router";

const BUILT = [
  { path: "/board", label: "Board" },
  { path: "/graph", label: "Graph" },
  { path: "/search", label: "Search" },
  { path: "/settings", label: "Settings" },
];

function Elsewhere() {
  return (
    <p>
      Built today:{" "}
      {BUILT.map((page, index) => (
        <span key={page.path}>
          {index > 0 ? ", " : ""}
          <a
            href={page.path}
            onClick={(event) => {
              event.preventDefault();
              navigate(page.path);
            }}
          >
            {page.label}
          </a>
        </span>
      ))}
      ; every tool is also in the API, documented at <a href="/docs/">/docs</a>.
    </p>
  );
}

/** An area that is not built yet, and what it will be. */
export function Placeholder({ area, willHold }: { area: string; willHold: string }) {
  return (
    <section className="placeholder" aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">{area}</h1>
      <p>This page is not built yet. It will hold {willHold}.</p>
      <Elsewhere />
    </section>
  );
}

export function NotFound({ path }: { path: string }) {
  return (
    <section className="placeholder" aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">Not found</h1>
      <p>
        The hub has no page at <code>{path}</code>.
      </p>
      <Elsewhere />
    </section>
  );
}
