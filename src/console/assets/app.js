// The console's entry point: hash routing, sign-in gate and the header.
// Routes: #/requests, #/requests/{id}, #/batches/{id}, #/schedule, #/new, #/signin, #/queue, #/queue/{taskId},
// #/payers, #/payers/{name}. Any route also takes
// `?token=TOKEN` (an API bearer token) so automation can open a view signed in; the token is moved into
// sessionStorage and dropped from the address bar at once. A fragment never reaches the server's logs.

import { onUnauthorized, session, signInWithToken, signOut } from './api.js';
import { beginView, empty, h, show } from './ui.js';
import { renderSignIn } from './signin.js';
import { renderList } from './list.js';
import { renderDetail } from './detail.js';
import { renderBatch, renderSchedule } from './schedule.js';
import { renderCreate } from './create.js';
import { renderQueue, renderTask } from './queue.js';
import { renderPayer, renderPayers } from './payers.js';

const ROUTES = [
  [/^\/requests\/([^/]+)$/, (match) => renderDetail(decodeURIComponent(match[1]))],
  [/^\/requests$/, (match, query) => renderList(query)],
  [/^\/batches\/([^/]+)$/, (match) => renderBatch(decodeURIComponent(match[1]))],
  [/^\/schedule$/, () => renderSchedule()],
  [/^\/new$/, (match, query) => renderCreate(query)],
];

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/requests';
  const [path, search = ''] = raw.split('?');
  return { path: path || '/requests', query: new URLSearchParams(search) };
}

async function route() {
  const { path, query } = parseHash();
  const token = query.get('token');
  if (token) {
    query.delete('token');
    const rest = query.toString();
    history.replaceState(null, '', `#${path}${rest ? `?${rest}` : ''}`);
    try {
      await signInWithToken(token);
    } catch (error) {
      beginView();
      renderHeader();
      return renderSignIn({ next: path, error: `The token in the link was not accepted: ${error.message}` });
    }
  }
  renderHeader(path);
  // The work queue signs in with an operator token of its own (a caller reads no requests).
  const task = path.match(/^\/queue\/([^/]+)$/);
  if (task) return renderTask(decodeURIComponent(task[1]), query);
  if (path === '/queue') return renderQueue(query);
  // The payer pages are operators' too (admin, support), with the same token.
  const payer = path.match(/^\/payers\/([^/]+)$/);
  if (payer) return renderPayer(decodeURIComponent(payer[1]), query);
  if (path === '/payers') return renderPayers(query);
  if (path === '/signin' || !session()) {
    return renderSignIn({ next: path === '/signin' ? '/requests' : path });
  }
  for (const [pattern, render] of ROUTES) {
    const match = path.match(pattern);
    if (match) return render(match, query);
  }
  beginView();
  show(empty(`Nothing lives at #${path}.`), h('p', {}, h('a', { href: '#/requests' }, 'Back to requests')));
}

function renderHeader(path = '') {
  const current = session();
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', path.startsWith(`/${link.dataset.nav}`) ||
      (link.dataset.nav === 'requests' && path.startsWith('/batches')));
  }
  document.getElementById('nav').hidden = !current;
  const who = document.getElementById('who');
  if (!current || !current.who) {
    who.replaceChildren();
    return;
  }
  const { accountName, accountId, environment, signIn, signedInAs, role } = current.who;
  who.replaceChildren(...[
    h('span', { class: 'who-account', title: accountId }, accountName),
    h('span', { class: `env env-${environment}`, 'data-testid': 'environment' }, environment),
    // An operator sees who they are signed in as, and with which role.
    signIn === 'admin'
      ? h('span', { class: 'env env-admin', 'data-testid': 'operator', title: `role: ${role}` }, `${signedInAs} (${role})`)
      : null,
    h('button', { class: 'button button-quiet', type: 'button', onclick: () => { signOut(); location.hash = '#/signin'; } },
      'Sign out'),
  ].filter(Boolean));
}

onUnauthorized(() => {
  signOut();
  beginView();
  renderHeader();
  renderSignIn({ next: parseHash().path, error: 'Your session has expired or was revoked. Sign in again.' });
});

window.addEventListener('hashchange', route);
route();
