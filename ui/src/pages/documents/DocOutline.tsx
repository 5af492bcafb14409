// A document's headings to jump by; a long outline keeps its upper levels.
import type { Section } from "./docsApi";

/** Headings the outline lists at most, before it drops its deepest level. */
const OUTLINE_ENTRIES = 300;

function depthFor(outline: Section[]): number {
  let depth = 6;
  while (depth > 1 && outline.filter((section) => section.level <= depth).length > OUTLINE_ENTRIES) depth -= 1;
  return depth;
}

export function scrollToSection(anchor: string) {
  const target = document.querySelector(`[data-section="${CSS.escape(anchor)}"]`);
  if (!target) return;
  target.scrollIntoView({ block: "start" });
  // chunks off screen are laid out with a guessed height: once the browser
  // has laid out the ones around the target, it may have moved; follow it,
  // unless the page was scrolled meanwhile by anyone else (the reader, a click
  // further down): their place wins over the jump
  const margin = parseFloat(getComputedStyle(target).scrollMarginTop) || 0;
  let leftAt = window.scrollY;
  let frames = 0;
  const settle = () => {
    if (window.scrollY !== leftAt) return;
    if (Math.abs(target.getBoundingClientRect().top - margin) > 4) {
      target.scrollIntoView({ block: "start" });
      leftAt = window.scrollY;
    }
    if (++frames < 4) requestAnimationFrame(settle);
  };
  requestAnimationFrame(settle);
}

export function DocOutline({ outline }: { outline: Section[] }) {
  // thousands of entries help no one find their way
  const depth = depthFor(outline);
  const shown = outline.filter((section) => section.level <= depth);
  return (
    <nav className="doc-outline" aria-label="Outline">
      {shown.length < outline.length ? (
        <p className="muted">
          Levels 1–{depth} of {outline.length} headings
        </p>
      ) : null}
      <ol>
        {shown.map((section) => (
          <li key={section.anchor} style={{ paddingLeft: `${(section.level - 1) * 0.8}rem` }}>
            <a
              href={`#${section.anchor}`}
              onClick={(event) => {
                event.preventDefault();
                window.history.replaceState(null, "", `#${section.anchor}`);
                scrollToSection(section.anchor);
              }}
            >
              {section.title}
            </a>
          </li>
        ))}
      </ol>
    </nav>
  );
}
