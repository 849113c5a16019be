// The reference page's header: our name and mark above Swagger UI, which runs without its own top bar
// (src/http/docs-ui.ts says why). Loaded from our origin after Swagger UI's scripts; nothing inline.
'use strict';
(function () {
  var logo = document.createElement('img');
  // Served next to this script (static/theme/), whatever path the page was opened at.
  logo.src = new URL('logo.svg', document.currentScript.src).href;
  logo.alt = '';
  logo.width = 36;
  logo.height = 36;
  var name = document.createElement('span');
  name.className = 'ws-docs-name';
  name.textContent = 'Workspace Service';
  var what = document.createElement('span');
  what.className = 'ws-docs-what';
  what.textContent = 'API reference';
  // Not a heading: the document's title below is the page's h1.
  var brand = document.createElement('p');
  brand.className = 'ws-docs-brand';
  // The space keeps the text (what a screen reader says) "Workspace Service API reference".
  brand.append(logo, name, ' ', what);
  // The way back to the dashboard the reference is usually opened from (same origin, so a plain link).
  var back = document.createElement('a');
  back.className = 'ws-docs-back';
  back.href = '/dashboard';
  back.textContent = 'Back to the dashboard';
  var header = document.createElement('header');
  header.className = 'ws-docs-header';
  header.append(brand, back);
  document.body.insertBefore(header, document.body.firstChild);
  // Swagger UI's content is the page's main landmark.
  var root = document.getElementById('swagger-ui');
  if (!root) return;
  root.setAttribute('role', 'main');
  // Gaps in Swagger UI's markup that axe reports as serious or critical, filled as React renders: pickers
  // without a name (the server, a parameter's values, a response's examples) and scrolling code samples a
  // keyboard cannot reach.
  function nameOf(select) {
    if (select.id === 'servers') return 'Server';
    var parameter = select.closest('tr[data-param-name]');
    if (parameter) return parameter.getAttribute('data-param-name');
    if (select.closest('.response-control-examples')) return 'Example';
    if (select.closest('.content-type-wrapper, .response-control-media-type')) return 'Media type';
    return null;
  }
  new window.MutationObserver(function () {
    root.querySelectorAll('select:not([aria-label])').forEach(function (select) {
      var label = nameOf(select);
      if (label) select.setAttribute('aria-label', label);
    });
    root.querySelectorAll('pre.microlight:not([tabindex])').forEach(function (pre) {
      pre.setAttribute('tabindex', '0');
    });
  }).observe(root, { childList: true, subtree: true });
})();
