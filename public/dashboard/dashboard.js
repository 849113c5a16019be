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
  // Move focus to the error summary so screen readers announce it and keyboard users start there.
  var summary = document.querySelector('.error-summary');
  if (summary) summary.focus();
});
