import { h } from 'preact';
import { describe, expect, it } from 'vitest';
import { renderPage } from '../../src/dashboard/render.js';

describe('dashboard page rendering', () => {
  it('starts with the doctype and renders the tree', () => {
    const html = renderPage(h('html', { lang: 'en' }, h('body', null, h('h1', null, 'Projects'))));
    expect(html).toBe('<!doctype html><html lang="en"><body><h1>Projects</h1></body></html>');
  });

  it('escapes text and attribute values, so user content cannot inject markup', () => {
    const name = '<script>alert("x")</script> & more';
    const html = renderPage(h('p', { title: '"><script>alert(1)</script>' }, name));
    expect(html).not.toContain('<script>');
    expect(html).toBe(
      '<!doctype html><p title="&quot;>&lt;script>alert(1)&lt;/script>">&lt;script>alert(&quot;x&quot;)&lt;/script> &amp; more</p>',
    );
  });
});
