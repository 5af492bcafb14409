// The Markdown editor: CodeMirror 6, which draws only the lines in view, so a
// 1 MB document types as fast as a short one. Beside it a preview, rendered a
// moment after typing stops so keys never wait for it.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { markdown } from "@codemirror/lang-markdown";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { EditorState } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { type MutableRefObject, useEffect, useRef, useState } from "react";
import { withLineEnding } from "./lines";
import { MarkdownView } from "./MarkdownView";
import type { RenderPlace } from "./markdown";

const PREVIEW_DELAY_MS = 250;

interface Props {
  initialText: string;
  /** The document's line ending, which a save puts back (CodeMirror hands back LF). */
  lineEnding: string;
  /** Reads what the editor holds now. */
  textRef: MutableRefObject<() => string>;
  place: RenderPlace;
  label: string;
  saving: boolean;
  onChange: () => void;
  onSave: () => void;
  onCancel: () => void;
}

export function DocEditor({ initialText, lineEnding, textRef, place, label, saving, onChange, onSave, onCancel }: Props) {
  const [preview, setPreview] = useState(initialText);
  const [showPreview, setShowPreview] = useState(true);
  const host = useRef<HTMLDivElement>(null);
  const handlers = useRef({ onChange, onSave });
  handlers.current = { onChange, onSave };

  useEffect(() => {
    const parent = host.current;
    if (!parent) return;
    let timer: number | undefined;
    const view = new EditorView({
      parent,
      state: EditorState.create({
        doc: initialText,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          EditorView.lineWrapping,
          markdown(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          keymap.of([
            { key: "Mod-s", preventDefault: true, run: () => (handlers.current.onSave(), true) },
            ...defaultKeymap,
            ...historyKeymap,
            ...searchKeymap,
          ]),
          EditorView.contentAttributes.of({ "aria-label": "Markdown", "data-testid": "doc-textarea", spellcheck: "true" }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            handlers.current.onChange();
            window.clearTimeout(timer);
            timer = window.setTimeout(() => setPreview(update.view.state.doc.toString()), PREVIEW_DELAY_MS);
          }),
        ],
      }),
    });
    const text = () => withLineEnding(view.state.doc.toString(), lineEnding);
    textRef.current = text;
    view.focus();
    return () => {
      window.clearTimeout(timer);
      textRef.current = text;
      view.destroy();
    };
  }, [initialText, lineEnding, textRef]);

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
        <div className="doc-editor-code" ref={host} />
        {showPreview ? <MarkdownView markdown={preview} place={place} outline={null} editable={false} testId="doc-preview" className="doc-preview" /> : null}
      </div>
    </section>
  );
}
