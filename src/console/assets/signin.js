// Sign-in: an API key and secret (exchanged at /v1/auth for a one-hour bearer token), or the operator's
// admin token followed by a choice of account and environment.

import { adminAccounts, signInAsAdmin, signInWithKey } from './api.js';
import { beginView, h, show } from './ui.js';

export function renderSignIn({ next = '/requests', error } = {}) {
  beginView();
  const message = h('div', { class: 'notice notice-error', role: 'alert', hidden: !error }, error || '');
  const fail = (text) => {
    message.textContent = text;
    message.hidden = false;
  };
  const done = () => {
    location.hash = `#${next === '/signin' ? '/requests' : next}`;
  };

  const keyForm = h('form', { class: 'form', 'data-testid': 'signin-key' },
    field('API key', h('input', { name: 'key', autocomplete: 'username', required: true, placeholder: 'sk_live_…' })),
    field('API secret', h('input', { name: 'secret', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { class: 'button button-primary', type: 'submit' }, 'Sign in'));
  keyForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await signInWithKey(keyForm.elements.key.value, keyForm.elements.secret.value);
      done();
    } catch (err) {
      fail(err.message);
    }
  });

  const accountPick = h('div', { hidden: true });
  const adminForm = h('form', { class: 'form', 'data-testid': 'signin-admin' },
    field('Operator token', h('input', { name: 'token', type: 'password', autocomplete: 'current-password', required: true })),
    accountPick,
    h('button', { class: 'button button-primary', type: 'submit' }, 'Continue'));
  let accounts = null;
  adminForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = adminForm.elements.token.value;
    try {
      if (!accounts) {
        accounts = await adminAccounts(token);
        if (!accounts.length) return fail('There are no accounts yet.');
        accountPick.replaceChildren(
          field('Account', h('select', { name: 'account' },
            accounts.map((a) => h('option', { value: a.id }, `${a.name} (${a.id})`)))),
          field('Environment', h('select', { name: 'environment' },
            h('option', { value: 'production' }, 'Production'), h('option', { value: 'sandbox' }, 'Sandbox'))));
        accountPick.hidden = false;
        adminForm.querySelector('button').textContent = 'Open console';
        message.hidden = true;
        return;
      }
      await signInAsAdmin(token, adminForm.elements.account.value, adminForm.elements.environment.value);
      done();
    } catch (err) {
      accounts = null;
      accountPick.hidden = true;
      fail(err.message);
    }
  });

  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const panes = { key: keyForm, admin: adminForm };
  const select = (which) => {
    for (const [name, pane] of Object.entries(panes)) pane.hidden = name !== which;
    for (const tab of tabs.children) tab.classList.toggle('active', tab.dataset.tab === which);
  };
  tabs.append(
    h('button', { type: 'button', class: 'tab', 'data-tab': 'key', onclick: () => select('key') }, 'API key'),
    h('button', { type: 'button', class: 'tab', 'data-tab': 'admin', onclick: () => select('admin') }, 'Operator token'));
  select('key');

  show(h('div', { class: 'signin' },
    h('div', { class: 'card signin-card' },
      h('h1', {}, 'Sign in'),
      h('p', { class: 'muted' }, 'Watch requests move through their calls and trace every answer to the call that produced it.'),
      tabs, message, keyForm, adminForm,
      h('p', { class: 'fineprint' }, 'The token is kept in this browser tab only (sessionStorage) and is gone when the tab closes.'))));
}

function field(label, input) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input);
}
