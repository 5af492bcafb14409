// The WebGL view of the spine (sigma.js): clicking a node selects it.
import { useEffect, useRef } from "react";
import Sigma from "sigma";
import { NodePointProgram } from "sigma/rendering";
import type { RenderParams } from "sigma/types";
import { type NodeAttributes, type SpineGraph, canOpen } from "./spine";

/**
 * GL points, drawn without the picking pass while the camera moves: nothing is
 * clicked mid-move, and where WebGL runs on the CPU that pass costs as much as
 * the points themselves at 10,000 nodes. The render after the move (sigma
 * draws one to bring the labels back) redraws the picking layer.
 */
class PointsProgram extends NodePointProgram<NodeAttributes> {
  render(params: RenderParams): void {
    if (this.hasNothingToRender()) return;
    const captor = this.renderer.getMouseCaptor();
    const moving =
      this.renderer.getCamera().isAnimated() || captor.isMoving || captor.draggedEvents > 0 || captor.currentWheelDirection !== 0;
    if (!moving) {
      super.render(params);
      return;
    }
    const program = this.normalProgram;
    program.gl.viewport(0, 0, params.width * params.pixelRatio, params.height * params.pixelRatio);
    this.bindProgram(program);
    this.renderProgram(params, program);
    this.unbindProgram(program);
  }
}

interface Props {
  graph: SpineGraph;
  /** Bumped whenever the graph's nodes, layout or highlights change. */
  version: number;
  selected: string | null;
  onSelect: (uid: string) => void;
}

declare global {
  interface Window {
    /** For browser tests and the fluidity measurement (ui/scripts/measure-graph.mjs). */
    cosGraphView?: {
      /** Where a node is drawn, in page pixels, so a test can click it like a person would. */
      positionOf(uid: string): { x: number; y: number } | null;
      /** What a click on the node does. */
      select(uid: string): void;
      /** Shown folders, files and classes not opened yet: folders first, then files, then classes. */
      closed(): string[];
      /** Moves the camera like a person zooming and panning; resolves with each frame's duration in ms. */
      sweep(durationMs: number): Promise<number[]>;
    };
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
      renderEdgeLabels: false,
      labelRenderedSizeThreshold: 3,
      // while the camera moves, only the nodes are drawn: labels and edges cost the most per frame
      hideEdgesOnMove: true,
      hideLabelsOnMove: true,
      defaultEdgeColor: "#c3c9d4",
      // square GL points: far cheaper per frame than shaded circles, which matters
      // at thousands of nodes (and on machines that draw WebGL on the CPU)
      defaultNodeType: "point",
      nodeProgramClasses: { point: PointsProgram },
      nodeReducer: (uid, attributes) => {
        const focused = uid === selectedRef.current;
        return {
          ...attributes,
          color: attributes.highlighted ? "#f0a500" : attributes.color,
          size: focused ? attributes.size * 1.8 : attributes.size,
          forceLabel: focused || attributes.highlighted,
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
      select(uid) {
        onSelectRef.current(uid);
      },
      closed() {
        const order: Record<string, number> = { folder: 0, file: 1, doc_file: 1, module: 2, class: 2 };
        return graph
          .filterNodes((_, attributes) => canOpen(attributes.kind) && !attributes.opened)
          .sort((a, b) => (order[graph.getNodeAttribute(a, "kind")] ?? 3) - (order[graph.getNodeAttribute(b, "kind")] ?? 3));
      },
      async sweep(durationMs) {
        const frames: number[] = [];
        let running = true;
        let last = performance.now();
        const tick = (now: number) => {
          frames.push(now - last);
          last = now;
          if (running) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
        const camera = sigma.getCamera();
        const step = durationMs / 3;
        await camera.animate({ ratio: 0.25 }, { duration: step });
        await camera.animate({ x: 0.3, y: 0.7 }, { duration: step });
        await camera.animate({ ratio: 1, x: 0.5, y: 0.5 }, { duration: step });
        running = false;
        return frames.slice(1);
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
