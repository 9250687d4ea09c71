// CPU samples on their way from a trace reader to the core's writers
// (convert, span-batches.ts): a thread's samples since the last batch as the
// call tree the core's CpuProfile holds (native/core/record/cpu_profile.h):
// its distinct frames, a node per distinct stack prefix under V8's "(root)"
// (node 0), and per sample its node and time. The writers merge the trees of
// a thread's batches (Chrome JSON: one profile per thread; Perfetto: interned
// frames and callstacks), so a batch holds only what its samples use:
// memory is bounded by a batch, not by the file.

import type { ColumnsProfile } from '../binding/native-binding';
import type { TraceFrame } from './trace-model';

/** V8's root node, which is no frame: the node every stack hangs under. */
const ROOT: TraceFrame = { function: '(root)', url: '', line: 0 };
const isRoot = (f: TraceFrame): boolean => f.function === ROOT.function && f.url === '';

export class ProfileBatch {
  private readonly frameIndex = new Map<string, number>();
  private readonly functions: string[] = [];
  private readonly urls: string[] = [];
  private readonly lines: number[] = [];
  /** The call tree under V8's root (node 0); declared after the frame table its ids index. */
  private readonly trie = new StackTrie((f) => this.frame(f), ROOT);
  private readonly sampleNode: number[] = [];
  private readonly sampleMs: number[] = [];

  constructor(readonly timeline: number) {}

  get samples(): number {
    return this.sampleNode.length;
  }

  /** A sample at `ms` (the columns' axis) whose stack is `stack`, outermost first. */
  add(ms: number, stack: readonly TraceFrame[]): void {
    // A stack of the root alone is a sample on the root; a leading root is the root node itself.
    const node = this.trie.node(stack, stack.length > 0 && isRoot(stack[0]) ? 1 : 0);
    this.sampleNode.push(node);
    this.sampleMs.push(ms);
  }

  private frame(f: TraceFrame): number {
    // The core's frame: 0-based line and column, -1 unknown (the model's are 1-based, 0 unknown).
    const line = f.line > 0 ? f.line - 1 : -1;
    const column = f.column !== undefined && f.column > 0 ? f.column - 1 : -1;
    const key = `${f.function}\0${f.url}\0${String(line)}\0${String(column)}`;
    let index = this.frameIndex.get(key);
    if (index === undefined) {
      index = this.functions.length;
      this.frameIndex.set(key, index);
      this.functions.push(f.function);
      this.urls.push(f.url);
      this.lines.push(line, column);
    }
    return index;
  }

  columns(): ColumnsProfile {
    return {
      timeline: this.timeline,
      functions: this.functions,
      urls: this.urls,
      lines: Int32Array.from(this.lines),
      nodeFrame: Uint32Array.from(this.trie.nodeFrame),
      nodeParent: Int32Array.from(this.trie.nodeParent),
      sampleNode: Uint32Array.from(this.sampleNode),
      sampleMs: Float64Array.from(this.sampleMs),
    };
  }
}

// Call stacks as a trie of nodes, for the readers' samples: node k is frame
// nodeFrame[k] called from node nodeParent[k], a parent made before its
// children. One node per distinct stack prefix (the child of `parent` by
// frame `f` is keyed `${parent}:${f}`), and per stack array the node of its
// whole stack, cached (the trace readers hand out one array per stack).
// ProfileBatch (V8's "(root)" as node 0) and SampleColumns (hot-functions.ts:
// outermost frames under -1, no node) both build theirs with it.
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
