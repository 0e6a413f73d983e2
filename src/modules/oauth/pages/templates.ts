import { describeScope } from '../oauth.scopes';

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const style = `
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2328; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; border-radius: 8px; padding: 2rem; box-shadow: 0 1px
    4px rgba(0,0,0,.12); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input[type=email], input[type=password], input[type=text] { width: 100%; box-sizing: border-box; padding: .55rem;
    border: 1px solid #bbb; border-radius: 4px; font-size: 1rem; }
  button { margin-top: 1.4rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: 4px; border: 1px solid #1f6feb;
    background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f2328; border-color: #bbb; margin-left: .5rem; }
  .error { color: #b3261e; background: #fdecea; padding: .6rem; border-radius: 4px; }
  ul { padding-left: 1.2rem; }
  code { font-size: .85rem; color: #57606a; }
  .unverified { color: #9a6700; background: #fff8c5; padding: .1rem .35rem; border-radius: 4px; font-size: .85rem; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

export function loginPage(input: {
  sessionId: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: string;
  /** For an application that belongs to no tenant: the user names theirs (its id), prefilled with this. */
  askTenant?: { value: string };
}): string {
  const tenantField = input.askTenant
    ? `<label for="tenant">Account id</label>
<input id="tenant" name="tenant" type="text" autocomplete="organization" required
 value="${escapeHtml(input.askTenant.value)}">
`
    : '';
  return page(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="/oauth/sessions/${escapeHtml(input.sessionId)}/login">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrf)}">
${tenantField}<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(input: {
  sessionId: string;
  csrf: string;
  clientName: string;
  email: string;
  scopes: string[];
  /** For an application that registered itself: the host its redirect URI sends the answer to, which nobody checked. */
  unverifiedHost?: string;
  /** For an application identified by a metadata document: the host that serves the document. */
  documentHost?: string;
}): string {
  const host = input.documentHost
    ? `<p>This application is described by <strong>${escapeHtml(input.documentHost)}</strong>, which serves its ` +
      'metadata document. Allow only if you trust this site.</p>\n'
    : input.unverifiedHost
      ? `<p>It will receive the answer at <strong>${escapeHtml(input.unverifiedHost)}</strong> ` +
        '<span class="unverified">unverified</span>: this application registered itself, and nobody has checked ' +
        'who runs it. Allow only if you trust this address.</p>\n'
      : '';
  const items = input.scopes
    .map(describeScope)
    .map((scope) => `<li>${escapeHtml(scope.description)} <code>${escapeHtml(scope.id)}</code></li>`)
    .join('\n');
  return page(
    'Allow access',
    `<h1>${escapeHtml(input.clientName)} wants to access your account</h1>
${host}<p>Signed in as <strong>${escapeHtml(input.email)}</strong>. Allowing lets ${escapeHtml(input.clientName)}:</p>
<ul id="scopes">
${items}
</ul>
<form method="post" action="/oauth/sessions/${escapeHtml(input.sessionId)}/consent">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrf)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p class="error">${escapeHtml(message)}</p>\n<p>Return to the application and ` +
      `start again.</p>`,
  );
}
