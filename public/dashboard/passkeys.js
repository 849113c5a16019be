// Passkey ceremonies (DASHBOARD 11): the only dashboard feature that needs JavaScript. Loaded from our
// origin after @simplewebauthn/browser's bundle (webauthn.js); every button it uses is hidden until then.
'use strict';
document.addEventListener('DOMContentLoaded', function () {
  var W = window.SimpleWebAuthnBrowser;
  if (!W || !W.browserSupportsWebAuthn()) return;
  document.querySelectorAll('.passkey-needs-script').forEach(function (note) { note.hidden = true; });

  function problem(form, text) {
    var note = form.querySelector('.passkey-problem');
    if (!note) {
      note = document.createElement('p');
      note.className = 'error-message passkey-problem';
      note.setAttribute('role', 'alert');
      form.appendChild(note);
    }
    note.textContent = text;
  }
  // The ceremony's options, asked with the form's CSRF token; a 403 names a confirmation still owed.
  function options(url, form) {
    var body = new URLSearchParams();
    body.set('_csrf', form.querySelector('input[name=_csrf]').value);
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' }, body: body }).then(function (response) {
      if (response.status === 403) { var owed = new Error('confirm'); owed.confirm = true; throw owed; }
      if (!response.ok) throw new Error('the server did not answer (' + response.status + ')');
      return response.json();
    });
  }
  function why(error) {
    if (error && error.name === 'NotAllowedError') return 'The passkey was not used (cancelled, or it timed out). Try again.';
    return 'The passkey could not be used: ' + (error && error.message ? error.message : String(error));
  }

  // Sign in, the second step, "Confirm it's you": a signed challenge goes into a hidden field and the form is sent.
  document.querySelectorAll('form[data-passkey-auth]').forEach(function (form) {
    var button = form.querySelector('[data-passkey-button]');
    var field = form.querySelector('input[name="' + form.getAttribute('data-passkey-field') + '"]');
    if (!button || !field) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      button.disabled = true;
      options(form.getAttribute('data-passkey-auth'), form)
        .then(function (optionsJSON) { return W.startAuthentication({ optionsJSON: optionsJSON }); })
        .then(function (response) {
          field.value = JSON.stringify(response);
          // Fields the passkey replaces are not required any more.
          form.querySelectorAll('[required]').forEach(function (input) { input.required = false; });
          form.submit();
        })
        .catch(function (error) { button.disabled = false; problem(form, why(error)); });
    });
  });

  // "Add a passkey": the browser makes the credential, the form sends it with its name.
  document.querySelectorAll('form[data-passkey-register]').forEach(function (form) {
    var field = form.querySelector('input[name=response]');
    var button = form.querySelector('button[type=submit]');
    if (!field) return;
    if (button) button.hidden = false;
    form.addEventListener('submit', function (event) {
      if (field.value) return;
      event.preventDefault();
      options(form.getAttribute('data-passkey-register'), form)
        .then(function (optionsJSON) { return W.startRegistration({ optionsJSON: optionsJSON }); })
        .then(function (response) { field.value = JSON.stringify(response); form.submit(); })
        .catch(function (error) {
          // Owed a confirmation: send the form as it is; the server asks, then comes back here.
          if (error && error.confirm) { form.submit(); return; }
          problem(form, why(error));
        });
    });
  });
});
