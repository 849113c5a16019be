import { escapeHtml } from '../../lib/html.js';

/**
 * The page behind an invitation link: self-contained (inline CSS and JS, nothing fetched but the accept
 * call), every interpolated value escaped, and a CSP that lets only this page's own nonce-tagged code run.
 */

/** Headers for every invitation page: the token is in the URL, so no referrer, no caching, no framing. */
export function invitationPageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "form-action 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  };
}

const STYLE = `
  *{box-sizing:border-box}
  body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f3f4f6;
    font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827}
  main{width:100%;max-width:26rem;margin:1.5rem;padding:2rem;background:#fff;border-radius:.75rem;
    box-shadow:0 1px 3px rgba(0,0,0,.1),0 8px 24px rgba(0,0,0,.06)}
  h1{font-size:1.35rem;margin:0 0 .5rem}
  p{margin:.25rem 0 1rem;color:#374151}
  label{display:block;font-weight:600;font-size:.9rem;margin:1rem 0 .3rem}
  input{width:100%;padding:.6rem .7rem;border:1px solid #d1d5db;border-radius:.45rem;font:inherit}
  input:focus{outline:2px solid #2563eb;outline-offset:1px;border-color:#2563eb}
  input[readonly]{background:#f9fafb;color:#6b7280}
  .hint{font-size:.8rem;color:#6b7280;margin:.3rem 0 0}
  button{margin-top:1.5rem;width:100%;padding:.7rem;border:0;border-radius:.45rem;background:#2563eb;color:#fff;
    font:inherit;font-weight:600;cursor:pointer}
  button:disabled{background:#93c5fd;cursor:default}
  #status{margin:1rem 0 0;padding:0;border-radius:.45rem}
  #status.ok,#status.error{padding:.75rem}
  #status.ok{background:#ecfdf5;color:#065f46}
  #status.error{background:#fef2f2;color:#991b1b}
`;

function layout(title: string, body: string, nonce: string, script = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style nonce="${escapeHtml(nonce)}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
${script ? `<script nonce="${escapeHtml(nonce)}">${script}</script>` : ''}
</body>
</html>
`;
}

// Posts JSON to `<this page's path>/accept`, so no token or URL is written into the script.
const SCRIPT = `
(function () {
  var form = document.getElementById('accept');
  var button = document.getElementById('submit');
  var status = document.getElementById('status');
  function show(kind, text) { status.className = kind; status.textContent = text; }
  function errorText(res, body) {
    var error = body && body.error;
    if (error && error.code === 'not_found') return 'This invitation link is no longer valid: it was used already or replaced by a newer invitation.';
    if (error && error.details && error.details.length > 1) {
      return error.details.map(function (d) { return d.field + ' ' + d.message; }).join('; ');
    }
    return (error && error.message) || ('The request failed (HTTP ' + res.status + ').');
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    button.disabled = true;
    show('', 'Activating your account\\u2026');
    var url = window.location.pathname.replace(/\\/+$/, '') + '/accept';
    var payload = { name: document.getElementById('name').value, password: document.getElementById('password').value };
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) })
      .then(function (res) {
        return res.json().catch(function () { return null; }).then(function (body) {
          if (res.ok) {
            form.hidden = true;
            document.getElementById('intro').hidden = true;
            show('ok', 'Welcome, ' + body.name + '! Your account is active. You can close this page.');
          } else {
            show('error', errorText(res, body));
            button.disabled = res.status === 404 || res.status === 410;
          }
        });
      })
      .catch(function () {
        show('error', 'Could not reach the server. Check your connection and try again.');
        button.disabled = false;
      });
  });
})();
`;

export interface OpenInvitation {
  email: string;
  role: string;
  organizationName: string;
}

export function invitationPage({ email, role, organizationName }: OpenInvitation, nonce: string): string {
  const body = `<h1>Join ${escapeHtml(organizationName)}</h1>
<p id="intro">You have been invited as <strong>${escapeHtml(role)}</strong>. Choose your name and a password to activate your account.</p>
<form id="accept" novalidate>
  <label for="email">E-mail</label>
  <input id="email" type="email" value="${escapeHtml(email)}" autocomplete="username" readonly>
  <label for="name">Your name</label>
  <input id="name" name="name" type="text" autocomplete="name" required maxlength="255">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024">
  <p class="hint">At least 8 characters.</p>
  <button id="submit" type="submit">Activate account</button>
</form>
<p id="status" role="status" aria-live="polite"></p>`;
  return layout(`Join ${organizationName}`, body, nonce, SCRIPT);
}

export function invitationErrorPage(kind: 'not_found' | 'expired', nonce: string): string {
  const [title, text] =
    kind === 'expired'
      ? ['This invitation has expired', 'Invitation links work for 72 hours. Ask an administrator of the organisation to invite you again; the new e-mail carries a fresh link.']
      : ['Invitation not found', 'This invitation link is not valid. It may have been used already, or replaced by a newer invitation. Check the latest e-mail you received, or ask for a new invite.'];
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`, nonce);
}
