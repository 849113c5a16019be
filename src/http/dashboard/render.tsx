import { createContext, h, type VNode } from 'preact';
import { render } from 'preact-render-to-string';

/**
 * The page a form is on, sent back with it (`_from`): a refused form returns there (post/redirect/get),
 * so a reload after a refusal shows that page instead of posting again.
 */
export const FormOrigin = createContext<string | null>(null);

/**
 * A whole HTML document from a Preact tree. The renderer escapes text and attribute values, so content
 * from users can be placed in the tree as-is; the doctype keeps browsers in standards mode. Generic over
 * the props like the renderer, so trees built with `h` (whose props type is specific) are accepted too.
 */
export function renderPage<P>(node: VNode<P>, formOrigin: string | null = null): string {
  return '<!doctype html>' + render(h(FormOrigin.Provider, { value: formOrigin }, node));
}
