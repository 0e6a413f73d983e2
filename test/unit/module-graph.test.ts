/**
 * The modules import each other in one direction only: the graph of "a file of module A imports a
 * file of module B" (types and re-exports included) has no loop, and it is the graph drawn in
 * docs/architecture.md, layer by layer, every arrow pointing down at most one pointing up.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ARCHITECTURE_DOC,
  arrowsOf,
  describeLoop,
  findLoop,
  moduleGraph,
  moduleNames,
  type ModuleGraph,
} from '../helpers/module-sources';

/** The mermaid drawing of the module graph: its layers (subgraphs, top first) and its arrows. */
function drawnGraph() {
  const doc = readFileSync(ARCHITECTURE_DOC, 'utf8');
  const block = /## The module graph[\s\S]*?```mermaid\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/architecture.md has no mermaid block under "## The module graph"');
  const layers: string[][] = [];
  const arrows: string[] = [];
  for (const line of block.split('\n').map((text) => text.trim())) {
    if (line.startsWith('subgraph ')) layers.push([]);
    else if (/^[a-z]+$/.test(line) && line !== 'end') layers.at(-1)?.push(line);
    const arrow = /^([a-z]+)\s*-->\s*([a-z]+)$/.exec(line);
    if (arrow) arrows.push(`${arrow[1]} -> ${arrow[2]}`);
  }
  return { layers, arrows: arrows.sort() };
}

const graphOf = (arrows: Record<string, string[]>): ModuleGraph =>
  new Map(
    Object.entries(arrows).map(([from, tos]) => [
      from,
      new Map(tos.map((to) => [to, [{ file: `src/modules/${from}/index.ts`, imports: `src/modules/${to}/index.ts` }]])),
    ]),
  );

describe('the module graph', () => {
  const graph = moduleGraph();

  it('has no loop: no module imports, even for a type, a module that imports it back', () => {
    const loop = findLoop(graph);
    expect(loop, loop ? describeLoop(graph, loop) : undefined).toBeNull();
  });

  it('is seen to have a loop when it has one, named with an import of each arrow', () => {
    const looping = graphOf({ catalog: ['broadcasts'], broadcasts: ['edge', 'catalog'], edge: [] });
    expect(findLoop(looping)).toEqual(['broadcasts', 'catalog', 'broadcasts']);
    expect(describeLoop(looping, findLoop(looping)!)).toContain(
      'catalog → broadcasts (src/modules/catalog/index.ts imports src/modules/broadcasts/index.ts)',
    );
    expect(findLoop(graphOf({ orders: ['stock', 'catalog'], stock: ['catalog'], catalog: [] }))).toBeNull();
  });

  it('is drawn in docs/architecture.md as it is (add or remove the arrow there)', () => {
    const drawn = drawnGraph().arrows;
    const actual = arrowsOf(graph);
    expect({
      'imported but not drawn': actual.filter((arrow) => !drawn.includes(arrow)),
      'drawn but not imported': drawn.filter((arrow) => !actual.includes(arrow)),
    }).toEqual({ 'imported but not drawn': [], 'drawn but not imported': [] });
  });

  it('is drawn in layers that hold every module once, its arrows pointing down (at most one up)', () => {
    const { layers, arrows } = drawnGraph();
    expect(layers.flat().sort()).toEqual(moduleNames());
    const layerOf = (module: string) => layers.findIndex((layer) => layer.includes(module));
    const up = arrows.filter((arrow) => {
      const [from, to] = arrow.split(' -> ') as [string, string];
      return layerOf(to) < layerOf(from);
    });
    expect(up.length, `arrows up: ${up.join(', ')}`).toBeLessThanOrEqual(1);
  });
});
