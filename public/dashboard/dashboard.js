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

  // "Create API key": the per-kind levels only count under "Restricted", so they are off otherwise.
  var accessRadios = document.querySelectorAll('input[type=radio][name=access]');
  var restricted = document.querySelector('.restricted');
  if (accessRadios.length && restricted) {
    var syncAccess = function () {
      var chosen = document.querySelector('input[type=radio][name=access]:checked');
      var on = chosen && chosen.value === 'restricted';
      restricted.querySelectorAll('input').forEach(function (input) { input.disabled = !on; });
      restricted.classList.toggle('is-off', !on);
    };
    accessRadios.forEach(function (radio) { radio.addEventListener('change', syncAccess); });
    syncAccess();
  }

  // "Add step": only the fields of the chosen type; an Approval's assignee is its approver. Fields hidden
  // here are disabled too, so they are not sent. Without this script every field shows, with its hint.
  var stepType = document.querySelector('form select#type');
  if (stepType) {
    var form = stepType.form;
    var field = function (id) { var input = form.querySelector('#' + id); return input ? { input: input, box: input.closest('.field') } : null; };
    var assignee = field('assignee_id');
    var dueIn = field('due_in');
    var duration = field('duration');
    var assigneeLabel = assignee && form.querySelector('label[for=assignee_id]');
    var syncStep = function () {
      var type = stepType.value;
      [[assignee, type !== 'wait'], [dueIn, type === 'task'], [duration, type === 'wait']].forEach(function (pair) {
        if (!pair[0] || !pair[0].box) return;
        pair[0].box.hidden = !pair[1];
        pair[0].input.disabled = !pair[1];
      });
      if (assigneeLabel) assigneeLabel.textContent = type === 'approval' ? 'Approver' : 'Assignee';
    };
    stepType.addEventListener('change', syncStep);
    syncStep();
  }

  // After "Mark done" (or another row action) the page comes back with that row gone: focus goes to the
  // same place in the same table, the next row's first control, not back to the top of the page.
  var FOCUS_KEY = 'workspace-row-focus';
  var ROW_CONTROLS = 'button, a[href], select, input:not([type=hidden])';
  document.querySelectorAll('table tbody tr form').forEach(function (rowForm) {
    rowForm.addEventListener('submit', function (event) {
      var row = rowForm.closest('tr');
      var table = rowForm.closest('table');
      var tables = Array.prototype.slice.call(document.querySelectorAll('table'));
      var controls = Array.prototype.slice.call(row.querySelectorAll(ROW_CONTROLS));
      var control = Math.max(0, controls.indexOf(event.submitter));
      try {
        window.sessionStorage.setItem(FOCUS_KEY, JSON.stringify({ path: window.location.pathname, table: tables.indexOf(table), row: row.sectionRowIndex, control: control }));
      } catch { /* storage off: focus starts at the top, as without this script */ }
    });
  });
  try {
    var saved = JSON.parse(window.sessionStorage.getItem(FOCUS_KEY) || 'null');
    window.sessionStorage.removeItem(FOCUS_KEY);
    if (saved && saved.path === window.location.pathname && !summary) {
      var table = document.querySelectorAll('table')[saved.table];
      var rows = table ? table.tBodies[0].rows : [];
      var row = rows[Math.min(saved.row, rows.length - 1)];
      var control = row && row.querySelectorAll(ROW_CONTROLS)[saved.control];
      if (control) control.focus();
    }
  } catch { /* nothing saved, or storage off */ }
});
