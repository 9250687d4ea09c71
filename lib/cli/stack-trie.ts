// Call stacks as a trie of nodes, for the readers' samples: node k is frame
// nodeFrame[k] called from node nodeParent[k], a parent made before its
// children. One node per distinct stack prefix (the child of `parent` by
// frame `f` is keyed `${parent}:${f}`), and per stack array the node of its
// whole stack, cached (the trace readers hand out one array per stack).
// ProfileBatch (V8's "(root)" as node 0) and SampleColumns (outermost frames
// under -1, no node) both build theirs here.

import type { TraceFrame } from './trace-model';

export class StackTrie {
  readonly nodeFrame: number[] = [];
  readonly nodeParent: number[] = [];
  private readonly children = new Map<string, number>();
  private readonly ofStack = new WeakMap<readonly TraceFrame[], number>();

  /** The node every stack hangs under: -1 (no node), or node 0 when made with a root frame. */
  readonly root: number;

  /**
   * @param frameId the caller's id of a frame (in its own frame table)
   * @param rootFrame when given, node 0 is this frame, the parent of every
   *   outermost frame (V8's "(root)")
   */
  constructor(
    private readonly frameId: (frame: TraceFrame) => number,
    rootFrame?: TraceFrame,
  ) {
    if (rootFrame === undefined) {
      this.root = -1;
    } else {
      this.root = 0;
      this.nodeFrame.push(frameId(rootFrame));
      this.nodeParent.push(-1);
    }
  }

  /** The node of `stack` (outermost first) from its frame `from` on; the root for an empty one. */
  node(stack: readonly TraceFrame[], from = 0): number {
    let node = this.ofStack.get(stack);
    if (node !== undefined) return node;
    node = this.root;
    for (let k = from; k < stack.length; k++) {
      const f = this.frameId(stack[k]);
      const key = `${String(node)}:${String(f)}`;
      let child = this.children.get(key);
      if (child === undefined) {
        child = this.nodeFrame.length;
        this.nodeFrame.push(f);
        this.nodeParent.push(node);
        this.children.set(key, child);
      }
      node = child;
    }
    this.ofStack.set(stack, node);
    return node;
  }
}
