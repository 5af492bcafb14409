// Rendered Markdown put into the page a chunk at a time, in slices of a few
// milliseconds, so a 1 MB document shows its top quickly and the page keeps
// answering while the rest arrives. Chunks off screen skip layout and paint
// (content-visibility).
import { type MouseEvent, useEffect, useRef } from "react";
import { type Chunk, type RenderPlace, renderChunks } from "./markdown";
import type { Section } from "./docsApi";

const SLICE_MS = 12;

/** The HTML each chunk element was made from. */
const sources = new WeakMap<Element, string>();

interface Props {
  markdown: string;
  place: RenderPlace;
  outline: Section[] | null;
  editable: boolean;
  testId: string;
  className?: string;
  onClick?: (event: MouseEvent<HTMLDivElement>) => void;
  /** Called after each slice of chunks is in the page, with whether all are. */
  onProgress?: (done: boolean) => void;
}

export function MarkdownView({ markdown, place, outline, editable, testId, className, onClick, onProgress }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const progress = useRef(onProgress);
  progress.current = onProgress;
  useEffect(() => {
    const container = host.current;
    if (!container) return;
    // a new text (the preview while typing) replaces only the chunks that
    // changed, in place, so the reader stays where they were
    const chunks = renderChunks(markdown, place, outline, editable);
    let count = 0;
    let timer: number | undefined;
    let frame = 0;
    const put = ({ index, html, bytes }: Chunk) => {
      const old = container.children[index];
      count = Math.max(count, index + 1);
      if (old && sources.get(old) === html) return;
      const chunk = document.createElement("div");
      chunk.className = "md-chunk";
      // a height guess until it is first laid out (about 60 bytes a line)
      chunk.style.containIntrinsicSize = `auto ${Math.ceil(bytes / 60) * 1.6}em`;
      chunk.innerHTML = html;
      sources.set(chunk, html);
      if (old) old.replaceWith(chunk);
      else container.append(chunk);
    };
    const step = () => {
      const started = performance.now();
      for (;;) {
        const next = chunks.next();
        if (next.done) {
          while (container.children.length > count) container.lastElementChild?.remove();
          progress.current?.(true);
          return;
        }
        put(next.value);
        // the first chunk is painted before the rest is worked on
        if (count === 1 || performance.now() - started > SLICE_MS) break;
      }
      progress.current?.(false);
      // after the next frame is painted, so what is in the page shows first
      frame = window.requestAnimationFrame(() => {
        timer = window.setTimeout(step, 0);
      });
    };
    step();
    return () => {
      window.cancelAnimationFrame(frame);
      window.clearTimeout(timer);
    };
  }, [markdown, place, outline, editable]);
  return <div ref={host} className={`markdown ${className ?? ""}`} data-testid={testId} onClick={onClick} />;
}
