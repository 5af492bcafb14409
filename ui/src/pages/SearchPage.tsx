// Search: one ranked query over code symbols, code text, documents, tasks and
// agent evidence.
// Hits are grouped by area in rank order; up/down moves through them, Enter
// opens one where it lives (the graph node, the task's card, the document's
// section, the editor at path:line). "Load more" follows the cursor. Area
// tabs and language chips narrow the query, each keeping the other.
import { type FormEvent, type KeyboardEvent, useCallback, useEffect, useRef, useState } from "react";
import { api, call, type Failure, type Schemas } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { documentHref, editorHref } from "../links";
import { revisionOf, useLive, useOnNewRevision } from "../live";
import { navigate } from "../router";
import { counted } from "../counted";

type Hit = Schemas["SearchHit"];
type Answer = Schemas["SearchAnswer"];
type Area = "symbols" | "code" | "docs" | "tasks" | "evidence";

const AREAS: { id: Area; label: string }[] = [
  { id: "symbols", label: "Symbols" },
  { id: "code", label: "Code" },
  { id: "docs", label: "Docs" },
  { id: "tasks", label: "Tasks" },
  { id: "evidence", label: "Evidence" },
];
const PAGE = 30;

interface Shown {
  query: string;
  area: Area | null;
  /** The language the hits are narrowed to (`lang`), if any. */
  lang: string | null;
  hits: Hit[];
  answer: Answer;
  /** How it was answered: `lexical`, `semantic` or both fused. */
  mode: string;
}

/** What the URL says to look for: `/search?q=...&area=...&lang=...`. */
function fromUrl(): { query: string; area: Area | null; lang: string | null } {
  const params = new URLSearchParams(window.location.search);
  const area = params.get("area");
  return {
    query: params.get("q") ?? "",
    area: AREAS.some((a) => a.id === area) ? (area as Area) : null,
    lang: params.get("lang") || null,
  };
}

function toUrl(query: string, area: Area | null, lang: string | null) {
  const params = new URLSearchParams({ q: query });
  if (area) params.set("area", area);
  if (lang) params.set("lang", lang);
  window.history.replaceState(null, "", `/search?${params.toString()}`);
}

async function search(query: string, area: Area | null, lang: string | null, cursor?: string) {
  return call(() =>
    api.GET("/api/search", {
      params: {
        query: {
          q: query,
          limit: PAGE,
          ...(area ? { area } : {}),
          ...(lang ? { lang } : {}),
          ...(cursor ? { cursor } : {}),
        },
      },
    }),
  );
}

export function SearchPage() {
  const initial = useRef(fromUrl()).current;
  const [input, setInput] = useState(initial.query);
  const [shown, setShown] = useState<Shown | null>(null);
  /** Counts per area of the query over every area, kept while a tab narrows it. */
  const [facets, setFacets] = useState<Schemas["Facets"] | null>(null);
  /** Counts per language of the query in the chosen area, kept while a language narrows it. */
  const [languages, setLanguages] = useState<Schemas["Facets"] | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const [active, setActive] = useState(0);
  const [repoRoot, setRepoRoot] = useState<string | null>(null);
  const list = useRef<HTMLUListElement>(null);

  const run = useCallback(async (query: string, area: Area | null, lang: string | null) => {
    if (query.trim() === "") return;
    setBusy(true);
    toUrl(query, area, lang);
    const [result, everywhere, anyLanguage] = await Promise.all([
      search(query, area, lang),
      area ? search(query, null, lang) : Promise.resolve(null),
      lang ? search(query, area, null) : Promise.resolve(null),
    ]);
    setBusy(false);
    if (!result.ok) {
      setFailure(result.failure);
      setShown(null);
      return;
    }
    setFailure(null);
    const mode = typeof result.meta?.mode === "string" ? result.meta.mode : "lexical";
    setShown({ query, area, lang, hits: result.data.hits, answer: result.data, mode });
    setFacets(everywhere?.ok ? everywhere.data.facets : result.data.facets);
    setLanguages(anyLanguage?.ok ? anyLanguage.data.languages : result.data.languages);
    setActive(0);
  }, []);

  useEffect(() => {
    void (async () => {
      const health = await call(() => api.GET("/api/health"));
      if (health.ok) setRepoRoot(health.data.repo_root);
    })();
    if (initial.query) void run(initial.query, initial.area, initial.lang);
  }, [initial, run]);

  // a task, a document, a saved file or recorded evidence changed somewhere: ask again
  const live = useLive();
  const sources = ["board", "graph", "docs", "supervise"].map((area) => revisionOf(live, area));
  const changed = sources.every((r) => r === null) ? null : sources.reduce<number>((sum, r) => sum + (r ?? 0), 0);
  useOnNewRevision(changed, () => {
    if (shown) void run(shown.query, shown.area, shown.lang);
  });

  const more = async () => {
    if (!shown?.answer.next_cursor) return;
    setBusy(true);
    const result = await search(shown.query, shown.area, shown.lang, shown.answer.next_cursor);
    setBusy(false);
    if (!result.ok) return setFailure(result.failure);
    setShown({ ...shown, hits: [...shown.hits, ...result.data.hits], answer: result.data });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(input, shown?.area ?? initial.area, shown?.lang ?? initial.lang);
  };

  const ordered = shown ? grouped(shown.hits) : [];
  const flat = ordered.flatMap((group) => group.hits);
  const open = (hit: Hit) => openHit(hit, repoRoot);

  const onKey = (event: KeyboardEvent) => {
    if (flat.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = Math.max(0, Math.min(flat.length - 1, active + (event.key === "ArrowDown" ? 1 : -1)));
      setActive(next);
      list.current?.querySelector<HTMLElement>(`[data-index="${next}"]`)?.scrollIntoView({ block: "nearest" });
    } else if (event.key === "Enter" && document.activeElement === list.current) {
      event.preventDefault();
      const hit = flat[active];
      if (hit) open(hit);
    }
  };

  return (
    <section className="search-page" aria-labelledby="search-title" onKeyDown={onKey}>
      <h1 id="search-title">Search</h1>
      <form className="search-box" role="search" onSubmit={submit}>
        <input
          type="search"
          aria-label="Search query"
          placeholder="parseHttpRequest, &quot;select related&quot;, auth*, -test, /def \w+_queryset/, path:src/**"
          value={input}
          maxLength={1000}
          onChange={(event) => setInput(event.target.value)}
          aria-invalid={failure?.error.category === "validation" ? true : undefined}
        />
        <button type="submit" className="primary" disabled={busy}>
          Search
        </button>
      </form>
      <p className="hint" data-testid="syntax">
        Words match identifiers in any spelling (<code>parseHttpRequest</code> finds <code>parse_http_request</code>), and
        several rank what holds the most of them: ask in plain words;{" "}
        <code>"exact phrase"</code>, <code>prefix*</code>, <code>+require</code>, <code>-exclude</code>,{" "}
        <code>/regex/</code> (code text); filters{" "}
        <code>area:</code> <code>kind:</code> <code>path:</code>(a glob) <code>lang:</code> <code>status:</code>. Up and down move
        through the hits, Enter opens one.
      </p>
      {failure ? <FailureNotice failure={failure} onRetry={() => void run(input, shown?.area ?? null, shown?.lang ?? null)} /> : null}
      {shown ? (
        <>
          <nav className="tabs search-tabs" aria-label="Areas">
            <AreaTab
              label="All"
              count={sum(facets)}
              current={shown.area === null}
              onChoose={() => void run(shown.query, null, shown.lang)}
            />
            {AREAS.map((area) => (
              <AreaTab
                key={area.id}
                label={area.label}
                count={facets?.[area.id] ?? 0}
                current={shown.area === area.id}
                onChoose={() => void run(shown.query, area.id, shown.lang)}
              />
            ))}
            <span className="search-mode" data-testid="search-total">
              {shown.answer.capped
                ? `${shown.answer.total}+ hits`
                : counted(shown.answer.total, "hit")}
            </span>
            <span className="search-mode-used" data-testid="search-mode-used" title="How the hits were found">
              {shown.mode}
            </span>
          </nav>
          <LanguageChips
            languages={languages}
            chosen={shown.lang}
            onChoose={(lang) => void run(shown.query, shown.area, lang)}
          />
          {shown.answer.notes.map((note) => (
            <p key={note} className="hint search-note">
              {note}
            </p>
          ))}
          {shown.answer.did_you_mean.length > 0 ? (
            <p className="search-note">
              Did you mean{" "}
              {shown.answer.did_you_mean.map((name) => (
                <button key={name} type="button" className="quiet" onClick={() => { setInput(name); void run(name, shown.area, shown.lang); }}>
                  {name}
                </button>
              ))}
              ?
            </p>
          ) : null}
          {flat.length === 0 ? <p className="muted">Nothing found for {shown.query}.</p> : null}
          <ul
            ref={list}
            className="search-hits"
            role="listbox"
            aria-label="Hits"
            tabIndex={0}
            aria-activedescendant={flat.length > 0 ? `hit-${active}` : undefined}
          >
            {ordered.map((group) => (
              <li key={group.area} role="presentation" className="search-group">
                <h2>
                  {AREAS.find((a) => a.id === group.area)?.label ?? group.area}{" "}
                  <span className="count">{facets?.[group.area] ?? group.hits.length}</span>
                </h2>
                <ul role="group" aria-label={group.area}>
                  {group.hits.map((hit) => {
                    const index = flat.indexOf(hit);
                    return (
                      <HitRow
                        key={`${index}`}
                        hit={hit}
                        index={index}
                        active={index === active}
                        repoRoot={repoRoot}
                        showWords={/\s/.test(shown.query.trim())}
                        onOpen={() => {
                          setActive(index);
                          open(hit);
                        }}
                      />
                    );
                  })}
                </ul>
              </li>
            ))}
          </ul>
          {shown.answer.next_cursor ? (
            <button type="button" onClick={() => void more()} disabled={busy}>
              Load more
            </button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** The languages the hits are in, most hits first: one narrows the hits to it, "Any" widens them again. */
function LanguageChips(props: {
  languages: Schemas["Facets"] | null;
  chosen: string | null;
  onChoose: (lang: string | null) => void;
}) {
  const { languages, chosen, onChoose } = props;
  const counts = Object.entries(languages ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (counts.length === 0 && chosen === null) return null;
  return (
    <nav className="search-languages" aria-label="Languages">
      <button type="button" className="chip" aria-pressed={chosen === null} onClick={() => onChoose(null)}>
        Any language
      </button>
      {counts.map(([lang, count]) => (
        <button
          key={lang}
          type="button"
          className="chip"
          aria-pressed={chosen === lang}
          onClick={() => onChoose(chosen === lang ? null : lang)}
        >
          {lang} <span className="count">{count}</span>
        </button>
      ))}
    </nav>
  );
}

function sum(facets: Schemas["Facets"] | null): number {
  return facets ? Object.values(facets).reduce((total, count) => total + count, 0) : 0;
}

function AreaTab({ label, count, current, onChoose }: { label: string; count: number; current: boolean; onChoose: () => void }) {
  return (
    <a
      href="#"
      aria-current={current ? "page" : undefined}
      onClick={(event) => {
        event.preventDefault();
        onChoose();
      }}
    >
      {label} <span className="count">{count}</span>
    </a>
  );
}

/** Hits by area, the areas in the order of their best hit, each in rank order. */
function grouped(hits: Hit[]): { area: string; hits: Hit[] }[] {
  const groups = new Map<string, Hit[]>();
  for (const hit of hits) {
    const group = groups.get(hit.area) ?? [];
    group.push(hit);
    groups.set(hit.area, group);
  }
  return [...groups.entries()].map(([area, list]) => ({ area, hits: list }));
}

function editorLink(repoRoot: string | null, hit: Hit): string | null {
  return hit.path ? editorHref(repoRoot, hit.path, hit.line ?? 1) : null;
}

function openHit(hit: Hit, repoRoot: string | null) {
  const { opens } = hit;
  if (opens.uid) return navigate(`/graph?node=${encodeURIComponent(opens.uid)}`);
  if (opens.task_id) return navigate(`/board?task=${encodeURIComponent(opens.task_id)}`);
  if (opens.document) return navigate(documentHref(opens.document.mount, opens.document.path, opens.document.section));
  const link = editorLink(repoRoot, hit);
  if (link) window.location.assign(link);
}

function HitRow({
  hit,
  index,
  active,
  repoRoot,
  showWords,
  onOpen,
}: {
  hit: Hit;
  index: number;
  active: boolean;
  repoRoot: string | null;
  /** Whether to say which of several words the hit holds. */
  showWords: boolean;
  onOpen: () => void;
}) {
  const link = hit.area === "code" ? editorLink(repoRoot, hit) : null;
  return (
    <li
      id={`hit-${index}`}
      data-index={index}
      role="option"
      aria-selected={active}
      className={`search-hit${active ? " active" : ""}`}
      data-testid="search-hit"
      onClick={onOpen}
    >
      <div className="search-hit-top">
        <span className="badge">{hit.kind}</span>
        <span className="search-hit-title">{hit.title}</span>
        {hit.opens.location ? (
          link ? (
            <a href={link} className="search-where" onClick={(event) => event.stopPropagation()}>
              {hit.opens.location}
            </a>
          ) : (
            <code className="search-where">{hit.opens.location}</code>
          )
        ) : hit.opens.task_id ? (
          <code className="search-where">{hit.opens.task_id}</code>
        ) : hit.opens.document ? (
          <code className="search-where">
            {hit.opens.document.mount}/{hit.opens.document.path}
            {hit.opens.document.section ? `#${hit.opens.document.section}` : ""}
          </code>
        ) : null}
        <span className="search-why">{hit.why}</span>
      </div>
      {showWords && hit.words.length > 0 ? (
        <div className="search-words" data-testid="search-words" aria-label="Words it holds">
          {hit.words.map((word) => (
            <mark key={word}>{word}</mark>
          ))}
        </div>
      ) : null}
      <pre className="search-snippet">
        {hit.line !== null && hit.line !== undefined ? <span className="search-line">{hit.line}</span> : null}
        <Highlighted text={hit.snippet} highlights={hit.highlights} />
      </pre>
    </li>
  );
}

/** The snippet with its highlights (character offsets) marked. */
function Highlighted({ text, highlights }: { text: string; highlights: Schemas["Highlight"][] }) {
  const chars = Array.from(text);
  const parts: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const { start, end } of highlights) {
    if (start < at) continue;
    if (start > at) parts.push({ text: chars.slice(at, start).join(""), marked: false });
    parts.push({ text: chars.slice(start, end).join(""), marked: true });
    at = end;
  }
  if (at < chars.length) parts.push({ text: chars.slice(at).join(""), marked: false });
  return (
    <>
      {parts.map((part, index) => (part.marked ? <mark key={index}>{part.text}</mark> : <span key={index}>{part.text}</span>))}
    </>
  );
}
