// A path the hub has no page for says so and where to go instead.
import { PAGES, navigate } from "../router";

function Elsewhere() {
  return (
    <p>
      The pages:{" "}
      {PAGES.map((page, index) => (
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
