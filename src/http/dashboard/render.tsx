import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/**
 * A whole HTML document from a Preact tree. The renderer escapes text and attribute values, so content
 * from users can be placed in the tree as-is; the doctype keeps browsers in standards mode. Generic over
 * the props like the renderer, so trees built with `h` (whose props type is specific) are accepted too.
 */
export function renderPage<P>(node: VNode<P>): string {
  return '<!doctype html>' + render(node);
}
