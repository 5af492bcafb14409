// The Markdown editor: a plain textarea (fast on a 1 MB document) beside a
// preview rendered a moment after typing stops, so keys never wait for it.
import { type MutableRefObject, useEffect, useMemo, useRef, useState } from "react";
import { type RenderPlace, renderMarkdown } from "./markdown";

const PREVIEW_DELAY_MS = 250;

interface Props {
  initialText: string;
  /** Always holds what the textarea holds. */
  textRef: MutableRefObject<string>;
  place: RenderPlace;
  label: string;
  saving: boolean;
  onChange: (text: string) => void;
  onSave: () => void;
  onCancel: () => void;
}

export function DocEditor({ initialText, textRef, place, label, saving, onChange, onSave, onCancel }: Props) {
  const [preview, setPreview] = useState(initialText);
  const [showPreview, setShowPreview] = useState(true);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const html = useMemo(() => (showPreview ? renderMarkdown(preview, place, null, false) : ""), [preview, place, showPreview]);

  return (
    <section className="doc-editor" aria-label={label}>
      <div className="doc-editor-tools">
        <strong>{label}</strong>
        <label>
          <input type="checkbox" checked={showPreview} onChange={(e) => setShowPreview(e.target.checked)} /> Preview
        </label>
        <button type="button" className="primary" onClick={onSave} disabled={saving}>
          {saving ? "Saving…" : "Save"}
        </button>
        <button type="button" onClick={onCancel} disabled={saving}>
          Cancel
        </button>
      </div>
      <div className={showPreview ? "doc-editor-panes" : "doc-editor-panes single"}>
        <textarea
          aria-label="Markdown"
          data-testid="doc-textarea"
          defaultValue={initialText}
          spellCheck
          onInput={(event) => {
            const text = event.currentTarget.value;
            textRef.current = text;
            onChange(text);
            window.clearTimeout(timer.current);
            timer.current = window.setTimeout(() => setPreview(text), PREVIEW_DELAY_MS);
          }}
          onKeyDown={(event) => {
            if ((event.ctrlKey || event.metaKey) && event.key === "s") {
              event.preventDefault();
              onSave();
            }
          }}
        />
        {showPreview ? (
          <div className="markdown doc-preview" data-testid="doc-preview" dangerouslySetInnerHTML={{ __html: html }} />
        ) : null}
      </div>
    </section>
  );
}
