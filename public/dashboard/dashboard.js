// Conveniences only: every page works without this file. Loaded from our origin (no inline script).
'use strict';
document.addEventListener('DOMContentLoaded', function () {
  // "Copy" buttons next to a shown-once secret; hidden until this script runs.
  document.querySelectorAll('button[data-copy-target]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy-target'));
    if (!target) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var done = function () {
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = 'Copy'; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(target.value).then(done, function () { target.select(); });
      } else {
        target.select();
        try { document.execCommand('copy'); done(); } catch { /* the field stays selected for a manual copy */ }
      }
    });
  });
  // Progress without reloading: a page with work going on names a fragment; when its version changes
  // the page is shown again (a GET: it repeats nothing). Polls only while the tab is visible.
  var progress = document.querySelector('[data-progress-url]');
  if (progress && window.fetch) {
    var url = progress.getAttribute('data-progress-url');
    var version = progress.getAttribute('data-progress-version');
    var delay = 2000;
    var poll = function () {
      if (document.hidden) { setTimeout(poll, delay); return; }
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (body) {
          if (body && body.version !== version) { window.location.reload(); return; }
          if (body && !body.active) return;
          // Back off slowly while nothing changes: a run may wait for days.
          delay = Math.min(delay * 1.25, 15000);
          setTimeout(poll, delay);
        }, function () { setTimeout(poll, 15000); });
    };
    setTimeout(poll, delay);
  }
  // Move focus to the error summary so screen readers announce it and keyboard users start there.
  var summary = document.querySelector('.error-summary');
  if (summary) summary.focus();
});
