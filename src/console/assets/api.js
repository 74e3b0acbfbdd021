// Sign-in state and every HTTP call the console makes. The session (token, and for the admin token the
// account and environment it looks at) lives in sessionStorage: it ends with the tab.

const SESSION_KEY = 'switchboard.console.session';

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.message || body.error)) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION_KEY));
  } catch {
    return null;
  }
}

function save(value) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(value));
}

export function signOut() {
  sessionStorage.removeItem(SESSION_KEY);
}

let unauthorized = () => {};
/** Called when a call answers 401: the token expired or was revoked. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

let config = null;
/** `/console/config.json`: the product word that names the auth headers. */
export async function loadConfig() {
  if (!config) {
    const response = await fetch('/console/config.json');
    config = await response.json();
  }
  return config;
}

async function request(method, path, { query, body, scoped } = {}) {
  const current = session();
  if (!current) throw new ApiError(401, { message: 'Not signed in' });
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, value);
  }
  if (scoped && current.mode === 'admin') {
    url.searchParams.set('account', current.account);
    url.searchParams.set('environment', current.environment);
  }
  const init = { method, headers: { Authorization: `Bearer ${current.token}`, Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { message: text };
  }
  if (response.status === 401) unauthorized();
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

/** A console endpoint, `/console/api/{path}`, scoped to the signed-in account and environment. */
export const consoleGet = (path, query) => request('GET', `/console/api/${path}`, { query, scoped: true });
/** A client API read, exactly as a client makes it. */
export const apiGet = (path, query) => request('GET', path, { query });
/** An admin API write, with the admin token the console was opened with. */
export const adminPost = (path, body) => request('POST', `/admin/v1/${path}`, { body });
/** A client API write. */
export const apiPost = (path, body) => request('POST', path, { body });

const AUTH_MESSAGES = {
  MISSING_API_KEY: 'Enter the API key.',
  MISSING_API_SECRET: 'Enter the API secret.',
  INVALID_API_KEY: 'No account has this API key.',
  UNAUTHORIZED: 'The secret does not match this key.',
};

/** Exchanges a key/secret pair for a bearer token at `/v1/auth`, then signs in with it. */
export async function signInWithKey(key, secret) {
  const { authHeaderWord } = await loadConfig();
  const response = await fetch('/v1/auth', {
    headers: { [`${authHeaderWord}-API-Key`]: key.trim(), [`${authHeaderWord}-API-Secret`]: secret.trim() },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, { message: AUTH_MESSAGES[body.error] || body.error });
  return signInWithToken(body.token);
}

/** Signs in with an API bearer token (from `/v1/auth`, or from a `?token=` link). */
export async function signInWithToken(token) {
  save({ mode: 'token', token });
  try {
    const who = await consoleGet('session');
    save({ mode: 'token', token, who });
    return who;
  } catch (error) {
    signOut();
    throw error;
  }
}

/**
 * The accounts an operator token can look at; throws when the token is no operator's, or is one whose
 * role has no console (an auditor reads the audit log only, through the admin API).
 */
export async function adminAccounts(token) {
  const response = await fetch('/admin/v1/accounts', { headers: { Authorization: `Bearer ${token.trim()}` } });
  if (response.status === 404) throw new ApiError(404, { message: 'The admin API is disabled on this server.' });
  if (response.status === 403) {
    throw new ApiError(403, {
      message: 'Auditors have no console: the audit log is read through the admin API (GET /admin/v1/audit). ' +
        'A caller works the queue of tasks at #/queue.',
    });
  }
  if (!response.ok) throw new ApiError(response.status, { message: 'This is not an operator token.' });
  return (await response.json()).accounts;
}

/** Signs in with the admin token, looking at one account in one environment. */
export async function signInAsAdmin(token, account, environment) {
  save({ mode: 'admin', token: token.trim(), account, environment });
  try {
    const who = await consoleGet('session');
    save({ mode: 'admin', token: token.trim(), account, environment, who });
    return who;
  } catch (error) {
    signOut();
    throw error;
  }
}

const PREFILL_KEY = 'switchboard.console.prefill';

/** Hands inputs to the next "new request" form. Kept in sessionStorage rather than in the URL, because
 * inputs carry patient data that has no business in the browser history. */
export function prefill(value) {
  sessionStorage.setItem(PREFILL_KEY, JSON.stringify(value));
}

/** The inputs handed over by `prefill`, once. */
export function takePrefill() {
  const raw = sessionStorage.getItem(PREFILL_KEY);
  sessionStorage.removeItem(PREFILL_KEY);
  try {
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/** A server link (recording) re-based on this page's origin: `server.public_url` may name another host. */
export function localUrl(link) {
  try {
    const url = new URL(link);
    return location.origin + url.pathname + url.search;
  } catch {
    return link;
  }
}
