// The request list: filters (state, creation dates, schema, batch, internal id), counts per state, live
// refresh every 2 s (pausable) and keyset paging. Filters live in the URL, so a filtered view is a link;
// all but the internal id, which is request data: it stays in this tab's sessionStorage, out of the
// browser history and of links.

import { consoleGet, session } from './api.js';
import {
  STATES, badge, beginView, copyButton, day, empty, errorBox, every, h, hashLink, isCurrent, mono, shortId, show, time,
  title,
} from './ui.js';

const FILTERS = ['state', 'dateFrom', 'dateTo', 'schemaId', 'requestBatchId', 'internalId'];
const INTERNAL_ID_KEY = 'switchboard.console.internalIdFilter';

/** The filters a link may carry: every one but the internal id. */
const linkable = (filters) => ({ ...filters, internalId: '' });

/** Keeps the internal id filter in this tab only (empty: none). */
function holdInternalId(value) {
  if (value) sessionStorage.setItem(INTERNAL_ID_KEY, value);
  else sessionStorage.removeItem(INTERNAL_ID_KEY);
}
const REFRESH_MS = 2000;
let live = true;

export async function renderList(query) {
  const ticket = beginView();
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) || '']));
  // A link from before the internal id left the URL: the id moves to this tab, and out of the history.
  if (filters.internalId) {
    holdInternalId(filters.internalId);
    history.replaceState(null, '', hashLink('/requests', linkable(filters)));
  }
  filters.internalId = sessionStorage.getItem(INTERNAL_ID_KEY) || '';
  const pages = [''];
  const chips = h('div', { class: 'chips', 'data-testid': 'state-counts' });
  const tableSlot = h('div', { class: 'card card-flush' });
  const pager = h('div', { class: 'pager' });
  const status = h('span', { class: 'muted small', 'data-testid': 'refresh-status' });
  const windowNote = h('span', { class: 'muted' });
  const liveButton = h('button', { type: 'button', class: 'button button-quiet live', 'data-testid': 'live-toggle' });
  const paintLive = () => {
    liveButton.replaceChildren(h('span', { class: live ? 'dot dot-live' : 'dot' }), live ? 'Live' : 'Paused');
    liveButton.setAttribute('aria-pressed', String(live));
  };
  liveButton.addEventListener('click', () => {
    live = !live;
    paintLive();
    if (live) load();
  });
  paintLive();

  const load = async () => {
    let page;
    try {
      page = await consoleGet('requests', { ...filters, pageSize: 50, pageToken: pages[pages.length - 1] });
    } catch (error) {
      if (isCurrent(ticket)) tableSlot.replaceChildren(errorBox(error));
      return;
    }
    if (!isCurrent(ticket)) return;
    chips.replaceChildren(...countChips(page.countsByState, filters.state, page.countsComplete, (state) => {
      location.hash = hashLink('/requests', { ...linkable(filters), state });
    }));
    const w = page.window;
    windowNote.textContent = w.requestBatchId
      ? `Batch ${w.requestBatchId}`
      : `Created ${w.dateFrom} to ${w.dateTo} (UTC, end exclusive)`;
    tableSlot.replaceChildren(page.requests.length
      ? requestTable(page.requests)
      : empty(page.scanLimited ? 'No match among the requests scanned so far; continue with Older.' : 'No requests match these filters.'));
    pager.replaceChildren(
      h('button', { type: 'button', class: 'button', disabled: pages.length === 1, onclick: () => { pages.pop(); load(); } }, '← Newer'),
      h('span', { class: 'muted small' }, `Page ${pages.length}`),
      h('button', { type: 'button', class: 'button', disabled: !page.nextPageToken, onclick: () => { pages.push(page.nextPageToken); load(); } }, 'Older →'));
    status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  };

  show(
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', {}, 'Requests'), windowNote),
      h('div', { class: 'head-actions' }, status, liveButton, h('a', { class: 'button button-primary', href: '#/new' }, 'New request'))),
    filterBar(filters),
    chips,
    tableSlot,
    pager,
  );
  await load();
  every(REFRESH_MS, () => {
    if (live) load();
  });
}

function filterBar(filters) {
  const schemas = (session()?.who?.schemas) || [];
  const input = (name, attrs) => h('input', { name, value: filters[name], ...attrs });
  const form = h('form', { class: 'filters', 'data-testid': 'filters' },
    label('State', h('select', { name: 'state' }, h('option', { value: '' }, 'Any state'),
      STATES.map((s) => h('option', { value: s, selected: filters.state === s }, title(s))))),
    label('Created from', input('dateFrom', { type: 'date' })),
    label('Created before', input('dateTo', { type: 'date' })),
    label('Schema', h('select', { name: 'schemaId' }, h('option', { value: '' }, 'Any schema'),
      schemas.map((s) => h('option', { value: s, selected: filters.schemaId === s }, s)))),
    label('Batch', input('requestBatchId', { placeholder: 'requestBatchId', class: 'mono-input' })),
    label('Internal id', input('internalId', { placeholder: 'contains…' })),
    h('div', { class: 'filter-actions' },
      h('button', { class: 'button button-primary', type: 'submit' }, 'Apply'),
      h('a', { class: 'button button-quiet', href: '#/requests', onclick: () => holdInternalId('') }, 'Reset')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = Object.fromEntries(FILTERS.map((name) => [name, form.elements[name].value.trim()]));
    holdInternalId(values.internalId);
    const link = hashLink('/requests', linkable(values));
    // The same link with another internal id: hashchange would not fire, so the list renders again here.
    if (location.hash === link) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = link;
  });
  return form;
}

const label = (text, control) => h('label', { class: 'field' }, h('span', { class: 'field-label' }, text), control);

/** The chips "All n / Processing n / ...": clicking one filters the list by that state. */
export function countChips(counts, active, complete, pick) {
  const total = STATES.reduce((sum, s) => sum + (counts[s] || 0), 0);
  const suffix = complete === false ? '+' : '';
  const chip = (state, text, n) => h('button', {
    type: 'button',
    class: `chip ${state ? `chip-${state.toLowerCase()}` : ''} ${active === state ? 'active' : ''}`,
    'data-testid': 'count-chip',
    'data-state': state || 'ALL',
    'data-count': n,
    onclick: () => pick(state),
  }, text, h('span', { class: 'chip-count' }, `${n}${suffix}`));
  return [chip('', 'All', total), ...STATES.map((s) => chip(s, title(s), counts[s] || 0))];
}

/** A row's summary: three lines of it in the table, all of it on hover. */
function summary(text) {
  return h('div', { class: 'summary-text', title: text }, text);
}

/** The request table shared by the list and the batch view. */
export function requestTable(requests) {
  return h('table', { class: 'table table-requests' },
    h('thead', {}, h('tr', {}, ['Created (UTC)', 'Request', 'State', 'Schema', 'Internal id', 'Modality', 'Due', 'Completed', 'Summary']
      .map((c) => h('th', {}, c)))),
    h('tbody', {}, requests.map((r) => {
      const href = `#/requests/${encodeURIComponent(r.requestId)}`;
      return h('tr', { 'data-testid': 'request-row', 'data-request-id': r.requestId, class: 'clickable', onclick: (event) => {
        if (!event.target.closest('a, button')) location.hash = href;
      } },
      h('td', { class: 'when' }, time(r.dateCreated)),
      h('td', { class: 'nowrap id-cell' },
        h('a', { href, class: 'mono', title: r.requestId, 'data-testid': 'request-id' }, shortId(r.requestId)),
        copyButton(r.requestId, 'request id', { 'data-testid': 'copy-id' })),
      h('td', {}, badge(r.state)),
      h('td', { class: 'nowrap' }, r.schemaId),
      h('td', { class: 'nowrap' }, r.internalId ? mono(r.internalId) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'nowrap' }, r.modality ? r.modality.replace(/_/g, ' ') : h('span', { class: 'muted' }, 'not yet')),
      h('td', { class: 'nowrap' }, day(r.dueDate)),
      h('td', { class: 'when' }, r.completedAt ? time(r.completedAt) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'summary' }, r.error ? h('span', { class: 'text-failure' }, r.error.errorCode) : summary(r.callSummary || r.resultSummary || '')));
    })));
}
