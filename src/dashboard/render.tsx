import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/**
 * The page a form is on, sent back with it (`_from`): a refused form returns there (post/redirect/get),
 * so a reload after a refusal shows that page instead of posting again. Rendering is synchronous, so the
 * value is set for exactly one render; a context would need `preact/hooks`, whose global render hooks
 * cost every component of every page (measured: docs/benchmarks.md, "Dashboard pages (issue 23)").
 */
let formOrigin: string | null = null;

/** The page being rendered, for its forms' `_from` field; null outside a page render. */
export function currentFormOrigin(): string | null {
  return formOrigin;
}

/**
 * A whole HTML document from a Preact tree. The renderer escapes text and attribute values, so content
 * from users can be placed in the tree as-is; the doctype keeps browsers in standards mode. Generic over
 * the props like the renderer, so trees built with `h` (whose props type is specific) are accepted too.
 */
export function renderPage<P>(node: VNode<P>, origin: string | null = null): string {
  formOrigin = origin;
  try {
    return '<!doctype html>' + render(node);
  } finally {
    formOrigin = null;
  }
}
