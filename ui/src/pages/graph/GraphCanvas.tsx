// The WebGL view of the spine (sigma.js): clicking a node selects it.
import { useEffect, useRef } from "react";
import Sigma from "sigma";
import type { NodeAttributes, SpineGraph } from "./spine";

interface Props {
  graph: SpineGraph;
  /** Bumped whenever the graph's nodes, layout or highlights change. */
  version: number;
  selected: string | null;
  onSelect: (uid: string) => void;
}

declare global {
  interface Window {
    /** Where a node is drawn, in page pixels: lets a browser test click it like a person would. */
    cosGraphView?: { positionOf(uid: string): { x: number; y: number } | null };
  }
}

export function GraphCanvas({ graph, version, selected, onSelect }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const renderer = useRef<Sigma<NodeAttributes> | null>(null);
  const selectedRef = useRef<string | null>(selected);
  selectedRef.current = selected;
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const sigma = new Sigma<NodeAttributes>(graph, element, {
      settings: { renderEdgeLabels: false, labelRenderedSizeThreshold: 6, hideEdgesOnMove: true },
      nodeReducer: (uid, data, attributes) => {
        const focused = uid === selectedRef.current;
        return {
          ...data,
          color: attributes.highlighted ? "#f0a500" : attributes.color,
          size: focused ? attributes.size * 1.8 : attributes.size,
          labelVisibility: focused || attributes.highlighted ? "visible" : "auto",
          zIndex: focused ? 2 : attributes.highlighted ? 1 : 0,
        };
      },
    });
    sigma.on("clickNode", ({ node }) => onSelectRef.current(node));
    renderer.current = sigma;
    window.cosGraphView = {
      positionOf(uid) {
        const data = sigma.getNodeDisplayData(uid);
        if (!data) return null;
        const point = sigma.framedGraphToViewport(data);
        const box = element.getBoundingClientRect();
        return { x: box.left + point.x, y: box.top + point.y };
      },
    };
    return () => {
      sigma.kill();
      renderer.current = null;
      delete window.cosGraphView;
    };
  }, [graph]);

  useEffect(() => {
    renderer.current?.refresh();
  }, [version, selected]);

  return <div ref={container} className="graph-canvas" data-testid="graph-canvas" data-nodes={graph.order} />;
}
